package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/glob"
)

// Limits of file listing.
const (
	// gitListTimeout bounds `git ls-files`; past it the search gives up
	// rather than hang the loop.
	gitListTimeout = 30 * time.Second
	// maxGitignoreBytes caps one .gitignore file read by the fallback walker.
	maxGitignoreBytes = 256 << 10
	// maxListedFiles bounds how many paths one listing collects.
	maxListedFiles = 500_000
)

// errListCapped is returned by walkTree's callback chain when a walk has
// visited as many entries as it was allowed to.
var errListCapped = errors.New("listing capped")

// listFiles returns the workspace's searchable files (tracked plus untracked
// but not ignored), slash-separated, sorted and without duplicates. It asks
// git when the workspace is a work tree and otherwise walks the tree itself,
// honouring .gitignore files. Paths under any `.git` are never returned.
func (w *Workspace) listFiles(ctx context.Context) ([]string, error) {
	files, gitErr := w.gitListFiles(ctx)
	if gitErr != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		files = nil
		err := walkTree(ctx.Done(), w.root, maxListedFiles, func(rel string, d fs.DirEntry) error {
			if d.Type().IsRegular() {
				files = append(files, rel)
			}
			return nil
		})
		if err != nil && !errors.Is(err, errListCapped) {
			return nil, fmt.Errorf("list files: %w", err)
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)
	files = slices.DeleteFunc(files, isGitPath)
	return files, nil
}

// gitListFiles runs `git ls-files` in the workspace. Any failure (git
// missing, not a work tree, a repository git refuses to trust) is returned
// so the caller can fall back to walking the tree.
func (w *Workspace) gitListFiles(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitListTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git",
		"-c", "core.quotepath=off", "-c", "core.fsmonitor=false",
		"ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = w.dir
	cmd.Env = gitEnv()
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var files []string
	for len(out) > 0 && len(files) < maxListedFiles {
		var name []byte
		name, out, _ = bytes.Cut(out, []byte{0})
		// --others lists a nested repository as "dir/"; it holds no file
		// of this work tree.
		if len(name) > 0 && name[len(name)-1] != '/' {
			files = append(files, string(name))
		}
	}
	return files, nil
}

// gitEnv is the process environment without GIT_* variables, so that a
// GIT_DIR or GIT_INDEX_FILE inherited from a hook cannot point git at
// another repository than the workspace.
func gitEnv() []string {
	env := os.Environ()
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	return append(env, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
}

// walkTree walks root in lexical order without following symlinks, skipping
// `.git` entries and whatever the .gitignore files met on the way exclude.
// fn sees every kept entry (files, directories, symlinks) except the root.
// The walk stops with errListCapped after limit entries and with the done
// channel's closing (a nil channel never closes).
func walkTree(done <-chan struct{}, root *os.Root, limit int, fn func(rel string, d fs.DirEntry) error) error {
	fsys := root.FS()
	var stack []*ignoreFile // .gitignore files of the current directory chain
	seen := 0
	return fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			if rel == "." {
				return err
			}
			return nil // unreadable entry: skip it, keep walking
		}
		select {
		case <-done:
			return context.Canceled
		default:
		}
		if rel != "." {
			if strings.EqualFold(d.Name(), ".git") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			for len(stack) > 0 && !isUnder(rel, stack[len(stack)-1].base) {
				stack = stack[:len(stack)-1]
			}
			if ignored(stack, rel, d.IsDir()) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			seen++
			if seen > limit {
				return errListCapped
			}
			if err := fn(rel, d); err != nil {
				return err
			}
		}
		if d.IsDir() {
			if ig := readIgnoreFile(fsys, rel); ig != nil {
				stack = append(stack, ig)
			}
		}
		return nil
	})
}

// isUnder reports whether rel lies inside directory base ("." holds all).
func isUnder(rel, base string) bool {
	return base == "." || strings.HasPrefix(rel, base+"/")
}

// ignoreFile is one parsed .gitignore file.
type ignoreFile struct {
	base  string // directory holding the file, "." for the root
	rules []ignoreRule
}

// ignoreRule is one .gitignore pattern line.
type ignoreRule struct {
	pattern  string
	negate   bool // "!pattern" re-includes
	dirOnly  bool // "pattern/" matches directories only
	anchored bool // contains a slash: matched against the path below base
}

// readIgnoreFile parses dir/.gitignore, or returns nil when there is none.
func readIgnoreFile(fsys fs.FS, dir string) *ignoreFile {
	name := path.Join(dir, ".gitignore")
	fi, err := fs.Stat(fsys, name)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxGitignoreBytes {
		return nil
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil
	}
	ig := &ignoreFile{base: dir}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if r, ok := parseIgnoreLine(sc.Text()); ok {
			ig.rules = append(ig.rules, r)
		}
	}
	if len(ig.rules) == 0 {
		return nil
	}
	return ig
}

// parseIgnoreLine parses one .gitignore line (gitignore(5) syntax, without
// the rarely used escaped trailing spaces).
func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = strings.TrimRight(line, " \t")
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	var r ignoreRule
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	r.pattern = line
	return r, true
}

// ignored applies the .gitignore files of rel's directory chain: the last
// matching rule wins, deeper files overriding shallower ones.
func ignored(stack []*ignoreFile, rel string, isDir bool) bool {
	out := false
	base := path.Base(rel)
	for _, ig := range stack {
		sub := rel
		if ig.base != "." {
			sub = rel[len(ig.base)+1:]
		}
		for _, r := range ig.rules {
			if r.dirOnly && !isDir {
				continue
			}
			var ok bool
			if r.anchored {
				ok = glob.Match(r.pattern, sub)
			} else {
				ok, _ = path.Match(r.pattern, base)
			}
			if ok {
				out = !r.negate
			}
		}
	}
	return out
}
