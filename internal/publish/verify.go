package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/bundle"
)

// errMismatch is wrapped in ErrRefused by verifyFiles.
var errMismatch = errors.New("does not match the diff")

// verifyFiles binds the bundle's files (what is committed) to its diff
// (what the PR shows and max-diff measures): each file's status, old path
// and mode must be the diff's, and its content must be the diff applied to
// the file at the base commit, read from GitHub. A bundle made by another
// job (the two-job recipe) is untrusted: without this, its files could
// carry changes its diff does not show, or delete a file through a rename.
// Content that differs from the diff's only by CRLF line endings (a Windows
// checkout) is replaced by the diff's. Any other mismatch gives an error
// wrapping ErrRefused; API failures are returned as they are.
func verifyFiles(ctx context.Context, gh GitHub, owner, repo string, b *bundle.Bundle) error {
	diffs, _, err := gitdiff.Parse(strings.NewReader(b.Diff))
	if err != nil {
		return fmt.Errorf("%w: diff does not parse: %v", ErrRefused, err)
	}
	byPath := make(map[string]bundle.File, len(b.Files))
	index := make(map[string]int, len(b.Files))
	for i, f := range b.Files {
		if _, dup := byPath[f.Path]; dup {
			return fmt.Errorf("%w: %s is listed twice", ErrRefused, f.Path)
		}
		byPath[f.Path], index[f.Path] = f, i
	}
	for _, d := range diffs {
		name, status := d.NewName, "modified"
		switch {
		case d.IsCopy:
			return fmt.Errorf("%w: %s is a copy, which mini-agent does not publish", ErrRefused, d.NewName)
		case d.IsDelete:
			name, status = d.OldName, "deleted"
		case d.IsNew:
			status = "added"
		case d.IsRename:
			status = "renamed"
		}
		f, ok := byPath[name]
		switch {
		case !ok:
			return fmt.Errorf("%w: %s is in the diff but not in the files", ErrRefused, name)
		case f.Status != status:
			return fmt.Errorf("%w: %s is %s in the files but %s in the diff", ErrRefused, name, f.Status, status)
		case status == "modified" && d.OldName != d.NewName:
			return fmt.Errorf("%w: %s is modified in the files but the diff reads it from %s", ErrRefused, name, d.OldName)
		case status == "renamed" && f.OldPath != d.OldName:
			return fmt.Errorf("%w: %s is renamed from %s in the files but from %s in the diff", ErrRefused, name, f.OldPath, d.OldName)
		case status == "deleted":
			continue
		}
		if want := diffMode(d); want != "" && want != cmpOr(f.Mode, ghapi.ModeFile) {
			return fmt.Errorf("%w: %s has mode %s in the files but %s in the diff", ErrRefused, name, cmpOr(f.Mode, ghapi.ModeFile), want)
		}
		var base []byte
		if !d.IsNew {
			if base, err = gh.FileAtRef(ctx, owner, repo, d.OldName, b.BaseSHA); err != nil {
				return fmt.Errorf("publish: verifying %s against the base commit: %w", d.OldName, err)
			}
		}
		var got bytes.Buffer
		if err := gitdiff.Apply(&got, bytes.NewReader(base), d); err != nil {
			return fmt.Errorf("%w: the diff of %s does not apply to %s at %s: %v", ErrRefused, name, d.OldName, short(b.BaseSHA), err)
		}
		switch {
		case bytes.Equal(got.Bytes(), f.Content):
		case bytes.Equal(got.Bytes(), bytes.ReplaceAll(f.Content, []byte("\r\n"), []byte("\n"))):
			// A checkout with CRLF line endings (core.autocrlf on Windows):
			// commit what the diff says, the repository's LF content.
			b.Files[index[name]].Content = got.Bytes()
		default:
			return fmt.Errorf("%w: the content of %s %v", ErrRefused, name, errMismatch)
		}
	}
	return nil
}

// diffMode is the file's mode after the diff, "" when the diff names none.
func diffMode(d *gitdiff.File) string {
	m := d.NewMode
	if m == 0 {
		m = d.OldMode
	}
	if m == 0 {
		return ""
	}
	return fmt.Sprintf("%o", uint32(m))
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
