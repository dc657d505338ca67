package publish

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/protect"
)

// ErrRefused marks a bundle the policy does not allow to be written at all
// (protected or invalid paths, an inconsistent diff, a symlink). Nothing is
// written, not even a comment: such a bundle was tampered with or made
// under a looser policy.
var ErrRefused = errors.New("bundle refused by the write policy")

// ErrTooLarge marks a change larger than the policy's max-diff. It is not
// published as a fix; the report says why.
var ErrTooLarge = errors.New("change larger than the policy allows")

// Size is a change's extent as the policy measures it.
type Size struct {
	Files, Lines int
}

// Check re-applies the write policy to a bundle: the publishing job does not
// trust the bundle more than the policy allows, whoever produced it. It
// returns the change's size, an error wrapping ErrRefused for a change that
// must never be written, or one wrapping ErrTooLarge.
func Check(b *bundle.Bundle, cfg *config.Config) (Size, error) {
	if err := b.CheckDiff(); err != nil {
		return Size{}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	if b.ReadOnly() && len(b.Files) > 0 {
		return Size{}, fmt.Errorf("%w: a read-only (explain) bundle carries changed files", ErrRefused)
	}
	if !slices.Contains(bundle.Statuses, b.Status) {
		return Size{}, fmt.Errorf("%w: unknown run status %q", ErrRefused, b.Status)
	}
	if b.Status == bundle.StatusFixed && (b.Proof == nil || !b.Proof.Holds || b.TreeSHA == "" || b.TreeSHA != b.Proof.Tree) {
		return Size{}, fmt.Errorf("%w: a fixed bundle without a holding proof on a clean checkout and its validated tree id (made by an older mini-agent, or edited)", ErrRefused)
	}
	if b.Status == bundle.StatusExplained && !b.ReadOnly() {
		return Size{}, fmt.Errorf("%w: a %q bundle says explained; only a read-only (explain) run explains", ErrRefused, b.Mode)
	}
	protected, err := cfg.ProtectedSet()
	if err != nil {
		return Size{}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	for _, f := range b.Files {
		for _, p := range []string{f.Path, f.OldPath} {
			if p == "" {
				continue
			}
			if err := checkPath(p, protected); err != nil {
				return Size{}, fmt.Errorf("%w: %v", ErrRefused, err)
			}
		}
		switch f.Status {
		case "added", "modified", "renamed", "deleted":
		default:
			return Size{}, fmt.Errorf("%w: %s has unknown status %q", ErrRefused, f.Path, f.Status)
		}
		if f.Status == "renamed" && f.OldPath == "" {
			return Size{}, fmt.Errorf("%w: rename of %s without its old path", ErrRefused, f.Path)
		}
		if f.Status != "deleted" {
			switch f.Mode {
			case "", ghapi.ModeFile, ghapi.ModeExecutable:
			case "120000":
				return Size{}, fmt.Errorf("%w: %s is a symbolic link; mini-agent does not publish links", ErrRefused, f.Path)
			default:
				return Size{}, fmt.Errorf("%w: %s has mode %q", ErrRefused, f.Path, f.Mode)
			}
			if len(f.Content) > ghapi.MaxBlobBytes {
				return Size{}, fmt.Errorf("%w: %s is %d bytes", ErrRefused, f.Path, len(f.Content))
			}
		}
	}
	size, err := measure(b)
	if err != nil {
		return Size{}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	if size.Files > cfg.MaxDiff.Files || size.Lines > cfg.MaxDiff.Lines {
		return size, fmt.Errorf("%w: %d files and %d changed lines; max-diff allows %d files and %d lines",
			ErrTooLarge, size.Files, size.Lines, cfg.MaxDiff.Files, cfg.MaxDiff.Lines)
	}
	return size, nil
}

// checkPath refuses paths that are not clean, relative, slash-separated
// repository paths, that enter any .git directory, or that the protected
// set matches (ignoring case, for case-insensitive checkouts).
func checkPath(p string, protected *protect.Set) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") || path.Clean(p) != p {
		return fmt.Errorf("%q is not a clean relative path", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("%q leaves the repository or enters .git", p)
		}
	}
	if protect.InGit(p) {
		return fmt.Errorf("%q leaves the repository or enters .git", p)
	}
	if g, hit := protected.Match(p); hit {
		return fmt.Errorf("%s is a protected path (%s)", p, g)
	}
	return nil
}

// measure counts changed files and added+deleted lines with go-gitdiff.
func measure(b *bundle.Bundle) (Size, error) {
	if strings.TrimSpace(b.Diff) == "" {
		return Size{}, nil
	}
	files, _, err := gitdiff.Parse(strings.NewReader(b.Diff))
	if err != nil {
		return Size{}, err
	}
	s := Size{Files: len(files)}
	for _, f := range files {
		for _, frag := range f.TextFragments {
			s.Lines += int(frag.LinesAdded + frag.LinesDeleted)
		}
	}
	return s, nil
}

// changes turns the bundle's files into commit changes: modes kept,
// deletions as deletions, a rename as a deletion of the old path plus an
// addition of the new one.
func changes(b *bundle.Bundle) []ghapi.FileChange {
	var out []ghapi.FileChange
	for _, f := range b.Files {
		if f.Status == "renamed" {
			out = append(out, ghapi.FileChange{Path: f.OldPath, Delete: true})
		}
		if f.Status == "deleted" {
			out = append(out, ghapi.FileChange{Path: f.Path, Delete: true})
			continue
		}
		mode := f.Mode
		if mode == "" {
			mode = ghapi.ModeFile
		}
		out = append(out, ghapi.FileChange{Path: f.Path, Content: f.Content, Mode: mode})
	}
	return out
}
