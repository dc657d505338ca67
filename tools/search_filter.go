package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/glob"
)

// searchFilter restricts a search to a file, a folder or globs.
type searchFilter struct {
	desc   string   // for messages; empty when unrestricted
	file   string   // exactly this file
	prefix string   // files under this folder ("dir/")
	globs  []string // files matching one of these globs
}

func (f searchFilter) match(p string) bool {
	switch {
	case f.file != "":
		return p == f.file
	case f.prefix != "":
		return strings.HasPrefix(p, f.prefix)
	case f.globs != nil:
		for _, g := range f.globs {
			// A glob without a slash matches file names in every folder,
			// as in .gitignore and rg -g.
			name := p
			if !strings.Contains(g, "/") {
				name = path.Base(p)
			}
			if glob.Match(g, name) {
				return true
			}
		}
		return false
	}
	return true
}

// maxBraceGlobs caps the globs one {a,b} pattern expands to.
const maxBraceGlobs = 64

// expandBraces expands each {a,b,...} group of pattern (not nested), as
// shells do for "**/*.{ts,tsx}".
func expandBraces(pattern string) ([]string, error) {
	open := strings.IndexByte(pattern, '{')
	if open < 0 {
		if strings.ContainsAny(pattern, "{}") {
			return nil, errors.New("unbalanced braces")
		}
		return []string{pattern}, nil
	}
	end := strings.IndexByte(pattern[open:], '}')
	if end < 0 {
		return nil, errors.New("unbalanced braces")
	}
	end += open
	inner := pattern[open+1 : end]
	if strings.ContainsRune(inner, '{') {
		return nil, errors.New("nested braces are not supported")
	}
	rest, err := expandBraces(pattern[end+1:])
	if err != nil {
		return nil, err
	}
	var out []string
	for _, alt := range strings.Split(inner, ",") {
		for _, r := range rest {
			out = append(out, pattern[:open]+alt+r)
			if len(out) > maxBraceGlobs {
				return nil, fmt.Errorf("more than %d alternatives", maxBraceGlobs)
			}
		}
	}
	return out, nil
}

func (s *Search) pathFilter(ctx context.Context, p string) (searchFilter, *agent.Result) {
	fail := func(code, msg string) (searchFilter, *agent.Result) {
		res := agent.ErrorResult(code, msg, code != agent.CodeDenied)
		return searchFilter{}, &res
	}
	p = strings.TrimSpace(strings.ReplaceAll(p, "\\", "/"))
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	if p == "" || p == "." || p == "**" || p == "**/*" {
		return searchFilter{}, nil
	}
	if strings.ContainsAny(p, "*?[{") {
		globs, err := expandBraces(strings.TrimSuffix(p, "/"))
		if err != nil {
			return fail(agent.CodeInvalidArgument, fmt.Sprintf("path %q is not a valid glob: %v", p, err))
		}
		for _, g := range globs {
			if _, err := Clean(g); err != nil {
				return fail(agent.CodeDenied, err.Error())
			}
			for _, seg := range strings.Split(g, "/") {
				if _, err := path.Match(seg, ""); err != nil {
					return fail(agent.CodeInvalidArgument, fmt.Sprintf("path %q is not a valid glob: %v", p, err))
				}
				if strings.EqualFold(seg, ".git") {
					return fail(agent.CodeDenied, fmt.Sprintf("%q: the .git directory is off limits", p))
				}
			}
		}
		return searchFilter{desc: p, globs: globs}, nil
	}
	real, err := s.ws.Resolve(p)
	switch {
	case err == nil:
	case errors.Is(err, ErrOutside) || errors.Is(err, ErrForbidden) || errors.Is(err, fs.ErrPermission):
		return fail(agent.CodeDenied, err.Error())
	default:
		return fail(agent.CodeInvalidArgument, err.Error())
	}
	fi, err := s.ws.root.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		msg := fmt.Sprintf("path %q does not exist", p)
		if sug := s.ws.suggest(ctx.Done(), p); len(sug) > 0 {
			msg += "; did you mean: " + strings.Join(quoteNames(sug), ", ") + "?"
		}
		return fail(agent.CodeNotFound, msg)
	case err != nil:
		return fail(agent.CodeDenied, fmt.Sprintf("path %q: %v", p, err))
	case fi.IsDir():
		if real == "." {
			return searchFilter{}, nil
		}
		return searchFilter{desc: p, prefix: real + "/"}, nil
	default:
		return searchFilter{desc: p, file: real}, nil
	}
}
