package snapshot

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
)

// dirType is how readNames spells a directory's type.
var dirType = fs.ModeDir.String()

// readNamesAt is readNames under the directory top.
func readNamesAt(top, dir string) ([]string, error) {
	root, err := os.OpenRoot(top)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return readNames(root, dir)
}

// After the gate saw a change, `git add -A` would refresh every index
// entry and walk every directory again. addPaths does what it would do
// for the paths that can have changed: the recorded files the gate saw
// change (hashed again, or dropped when gone), and the untracked files git
// finds in the directories whose entries changed (their direct entries,
// and whole any entry new there), added. Anything it cannot do the way
// `git add -A` would (a nested repository, a path beyond a symlink, a file
// become a directory) fails it, and `git add -A` runs instead.

// errAddFallback sends writeTreeWith to `git add -A`.
var errAddFallback = errors.New("paths need git add -A")

// addPaths brings the shadow index up to date for files (recorded files
// that changed) and dirs (directories whose entries changed; names gives
// what each held when recorded).
//
// A directory's entries that it held when recorded were each tracked (in
// the shadow index) or ignored, or a directory of the gate: unless the
// ignore rules changed, only the entries new since can be untracked files
// git would add, and they are named literally, so that git reads that
// directory alone (a :(glob)d/* pathspec also matches every subdirectory,
// and git walks them all). When an ignore file changed or appeared, every
// direct entry is listed, as before.
func (s *Snapshot) addPaths(ctx context.Context, g *gate, files, dirs []string) error {
	specs := []string{"ls-files", "-z", "--others", "--exclude-standard", "--"}
	wide := false
	for _, f := range files {
		wide = wide || path.Base(f) == ".gitignore"
	}
	type dirNames struct {
		d     string
		fresh []string // names and types not recorded
	}
	var changed []dirNames
	for _, d := range dirs {
		i, ok := g.dirAt[d]
		if !ok {
			return errAddFallback
		}
		names, err := readNamesAt(s.dir, d)
		if err != nil {
			continue // gone: its recorded files are among files
		}
		was := map[string]bool{}
		for _, n := range g.dirs[i].names {
			was[n] = true
		}
		dn := dirNames{d: d}
		for _, n := range names {
			if !was[n] {
				dn.fresh = append(dn.fresh, n)
				wide = wide || strings.HasPrefix(n, ".gitignore\x00")
			}
		}
		changed = append(changed, dn)
	}
	listed := 0
	for _, dn := range changed {
		if wide {
			listed++
			if dn.d == "." {
				specs = append(specs, ":(glob)*")
			} else {
				specs = append(specs, ":(glob)"+globEscape(dn.d)+"/*")
			}
		}
		for _, n := range dn.fresh {
			if name, typ, _ := strings.Cut(n, "\x00"); !wide || typ == dirType {
				listed++
				specs = append(specs, ":(literal)"+path.Join(dn.d, name))
			}
		}
	}
	for _, p := range s.exclude {
		if rel, ok := s.relative(p); ok {
			specs = append(specs, ":(exclude,literal)"+rel)
		}
	}
	paths := append([]string(nil), files...)
	if listed > 0 { // with no pathspec, ls-files would list the whole tree
		out, err := git(ctx, s.dir, s.env, specs...)
		if err != nil {
			return err
		}
		for _, p := range strings.Split(out, "\x00") {
			if strings.HasSuffix(p, "/") {
				return errAddFallback // a nested repository: git add -A decides
			}
			if p != "" {
				paths = append(paths, p)
			}
		}
	}
	return s.updatePaths(ctx, paths)
}

// updatePaths hashes paths into the shadow index again, dropping those
// gone: `git update-index --add --remove`, which runs no filter (the
// shadow's attributes are neutral) and refuses a path beyond a symlink or
// a directory (the caller then falls back to git add -A).
func (s *Snapshot) updatePaths(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	var in strings.Builder
	for _, p := range paths {
		in.WriteString(p + "\x00")
	}
	_, err := gitexecRun(ctx, s, strings.NewReader(in.String()), "update-index", "--add", "--remove", "-z", "--stdin")
	return err
}

// globEscape escapes the characters a :(glob) pathspec treats specially.
func globEscape(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if strings.IndexByte(`*?[]\`, p[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
