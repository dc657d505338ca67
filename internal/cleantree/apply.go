package cleantree

import (
	"errors"
	"fmt"
	"github.com/org/mini-agent/internal/safefile"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Change is one file of the published change, as the bundle carries it.
type Change struct {
	Path    string // slash-separated, repository-relative
	OldPath string // a rename's source ("" otherwise)
	// Status is "added", "modified", "deleted" or "renamed" (OldPath is
	// removed, Path written); "type-changed" and "copied" write Path like
	// "modified" (a copy's OldPath stays).
	Status string
	// Mode is "100644", "100755" or "120000" (a symbolic link: Content is
	// its target); "" means "100644". A deletion's mode is not looked at.
	Mode    string
	Content []byte // the file's bytes; a deletion's are not looked at
}

// ErrRefused is wrapped by the error of a change set that Apply and Hash
// refuse: a path or mode GitHub's API or a safe checkout cannot take, or a
// set that does not make a tree.
var ErrRefused = errors.New("change refused")

// write is one file a change set leaves in the tree.
type write struct {
	path    string
	mode    string
	content []byte
}

// plan is a validated change set: the paths removed first (deletions and
// renames' sources), then the files written.
type plan struct {
	deletes []string // sorted, unique
	writes  []write  // sorted by path, unique
	deleted map[string]bool
	written map[string]bool
}

func refused(p, format string, args ...any) error {
	return fmt.Errorf("cleantree: %w: %q: %s", ErrRefused, p, fmt.Sprintf(format, args...))
}

// plan validates changes against the commit's tree (never the work tree):
// every path is safe, every mode known, no path is written twice, and the
// result is a tree (no file where a directory remains, no directory where
// a file is written).
func (t *Tree) plan(changes []Change) (*plan, error) {
	pl := &plan{deleted: map[string]bool{}, written: map[string]bool{}}
	for _, c := range changes {
		if err := checkPath(c.Path); err != nil {
			return nil, err
		}
		if c.OldPath != "" {
			if err := checkPath(c.OldPath); err != nil {
				return nil, err
			}
		}
		for _, l := range t.links {
			if c.Path == l || strings.HasPrefix(c.Path, l+"/") || c.OldPath == l || strings.HasPrefix(c.OldPath, l+"/") {
				return nil, refused(c.Path, "%s is the workspace's installed dependencies, not part of a change", l)
			}
		}
		switch c.Status {
		case "deleted":
			pl.deleted[c.Path] = true
			continue
		case "renamed":
			if c.OldPath == "" {
				return nil, refused(c.Path, "a rename without its source path")
			}
			if c.OldPath != c.Path {
				pl.deleted[c.OldPath] = true
			}
		case "added", "modified", "type-changed", "copied":
		default:
			return nil, refused(c.Path, "unknown status %q", c.Status)
		}
		mode := c.Mode
		switch mode {
		case "":
			mode = "100644"
		case "100644", "100755":
		case "120000":
			if len(c.Content) == 0 || slices.Contains(c.Content, 0) {
				return nil, refused(c.Path, "a symbolic link's target must be non-empty and free of NUL bytes")
			}
		default:
			return nil, refused(c.Path, "mode %q is not 100644, 100755 or 120000", c.Mode)
		}
		if pl.written[c.Path] {
			return nil, refused(c.Path, "written by more than one change")
		}
		pl.written[c.Path] = true
		pl.writes = append(pl.writes, write{path: c.Path, mode: mode, content: c.Content})
	}
	for p := range pl.deleted {
		pl.deletes = append(pl.deletes, p)
	}
	slices.Sort(pl.deletes)
	slices.SortFunc(pl.writes, func(a, b write) int { return strings.Compare(a.path, b.path) })
	return pl, t.checkShape(pl)
}

// checkShape refuses a change set whose result is not a tree: a file
// written where files remain below it, or below a path that remains a file
// (a symbolic link or a submodule included).
func (t *Tree) checkShape(pl *plan) error {
	final := func(p string) bool {
		if pl.written[p] {
			return true
		}
		_, ok := t.entries[p]
		return ok && !pl.deleted[p]
	}
	// delta is the change in the number of entries below each directory.
	delta := map[string]int{}
	touch := func(p string) {
		_, base := t.entries[p]
		step := 0
		switch after := final(p); {
		case base && !after:
			step = -1
		case !base && after:
			step = 1
		}
		for d := parentDir(p); d != "" && step != 0; d = parentDir(d) {
			delta[d] += step
		}
	}
	for p := range pl.deleted {
		if !pl.written[p] {
			touch(p)
		}
	}
	for _, w := range pl.writes {
		touch(w.path)
	}
	for _, w := range pl.writes {
		if t.dirs[w.path]+delta[w.path] > 0 {
			return refused(w.path, "is a directory of the resulting tree")
		}
		for d := parentDir(w.path); d != ""; d = parentDir(d) {
			if final(d) {
				return refused(w.path, "its parent %q is a file of the resulting tree", d)
			}
		}
	}
	return nil
}

// checkPath refuses a path git or GitHub would not take as a tree entry,
// or that could leave the work tree or reach a .git directory.
func checkPath(p string) error {
	switch {
	case p == "":
		return refused(p, "empty path")
	case strings.IndexByte(p, 0) >= 0:
		return refused(p, "contains a NUL byte")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return refused(p, "absolute path")
	case strings.IndexByte(p, '\\') >= 0:
		// A separator on Windows: a path means one thing everywhere.
		return refused(p, "contains a backslash")
	}
	for elem := range strings.SplitSeq(p, "/") {
		switch {
		case elem == "":
			return refused(p, "empty path element")
		case elem == "." || elem == "..":
			return refused(p, "%q path element", elem)
		case isDotGit(elem):
			return refused(p, "%q names a .git directory", elem)
		}
	}
	return nil
}

// isDotGit reports whether a path element names .git in any letter case,
// also the way NTFS (trailing dots and spaces, a stream suffix, the 8.3
// short name) and HFS+ (ignored zero-width code points) would read it.
func isDotGit(elem string) bool {
	e := strings.Map(func(r rune) rune {
		if hfsIgnorable(r) {
			return -1
		}
		return r
	}, elem)
	if i := strings.IndexByte(e, ':'); i >= 0 {
		e = e[:i]
	}
	e = strings.TrimRight(e, ". ")
	return strings.EqualFold(e, ".git") || strings.EqualFold(e, "git~1")
}

// hfsIgnorable are the code points HFS+ drops when it compares names.
func hfsIgnorable(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
}

// Apply writes the changes into the work tree: deleted files and renames'
// sources are removed (and the directories that leaves empty, as git
// does), every other change's file is written with its mode (a symbolic
// link as a link), its parent directories made as needed; whatever was at
// a written path before (a file, a link, an empty directory) is replaced,
// never written through.
//
// Every change is validated first, and on a refusal (an error wrapping
// ErrRefused) nothing at all is written: a path that is absolute, has an
// empty, "." or ".." element, a ".git" element in any letter case, a NUL
// byte or a backslash; an unknown mode or status; a result that is not a
// tree (a file below a file); a parent directory that is, in the work
// tree, a symbolic link or anything but a directory. Writes go through an
// os.Root of the work tree and never follow a symbolic link in a parent
// directory, even one planted after the check. An I/O error past
// validation can leave the changes partly applied.
func (t *Tree) Apply(changes []Change) error {
	if t.closed {
		return errors.New("cleantree: Apply after Close")
	}
	pl, err := t.plan(changes)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(t.dir)
	if err != nil {
		return fmt.Errorf("cleantree: %w", err)
	}
	defer root.Close()
	if err := checkParents(root, pl); err != nil {
		return err
	}
	for _, p := range pl.deletes {
		if err := removeAt(root, p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cleantree: removing %s: %w", p, err)
		}
		// Directories left empty go, as in a checkout of the result.
		for d := parentDir(p); d != "" && removeAt(root, d) == nil; d = parentDir(d) {
		}
	}
	for _, w := range pl.writes {
		if err := writeAt(root, w); err != nil {
			return fmt.Errorf("cleantree: writing %s: %w", w.path, err)
		}
	}
	return nil
}

// checkParents refuses a change whose parent directory in the work tree is
// not a directory (a planted symbolic link), unless the change set removes
// that path before writing below it.
func checkParents(root *os.Root, pl *plan) error {
	paths := slices.Clone(pl.deletes)
	for _, w := range pl.writes {
		paths = append(paths, w.path)
	}
	for _, p := range paths {
		for i := 0; ; {
			j := strings.IndexByte(p[i:], '/')
			if j < 0 {
				break
			}
			dir := p[:i+j]
			i += j + 1
			fi, err := root.Lstat(filepath.FromSlash(dir))
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return fmt.Errorf("cleantree: %w", err)
			}
			if fi.IsDir() {
				continue
			}
			if pl.deleted[dir] && !pl.written[dir] {
				break
			}
			return refused(p, "its parent %q is a %s in the work tree", dir, safefile.TypeName(fi.Mode()))
		}
	}
	return nil
}

// openParent opens the directory holding p below root, one element at a
// time, refusing any element that is not a directory (a symbolic link
// above all) and making missing ones when create is set. It returns the
// directory and p's last element; the caller closes the directory.
func openParent(root *os.Root, p string, create bool) (*os.Root, string, error) {
	cur, err := root.OpenRoot(".")
	if err != nil {
		return nil, "", err
	}
	elems := strings.Split(p, "/")
	for _, elem := range elems[:len(elems)-1] {
		fi, err := cur.Lstat(elem)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = cur.Mkdir(elem, 0o777); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = cur.Lstat(elem)
			}
		}
		if err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s is a %s, not a directory", elem, safefile.TypeName(fi.Mode()))
		}
		var next *os.Root
		if err == nil {
			next, err = cur.OpenRoot(elem)
		}
		cur.Close()
		if err != nil {
			return nil, "", err
		}
		// The directory opened must be the one checked: not a link swapped
		// in between.
		if st, err := next.Stat("."); err != nil || !os.SameFile(fi, st) {
			next.Close()
			return nil, "", fmt.Errorf("%s changed while it was opened", elem)
		}
		cur = next
	}
	return cur, elems[len(elems)-1], nil
}

// removeAt removes the file, link or empty directory at p.
func removeAt(root *os.Root, p string) error {
	dir, base, err := openParent(root, p, false)
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Remove(base)
}

// writeAt replaces whatever is at w.path with w's file.
func writeAt(root *os.Root, w write) error {
	dir, base, err := openParent(root, w.path, true)
	if err != nil {
		return err
	}
	defer dir.Close()
	// Remove, then create exclusively: a link at the path is replaced,
	// never followed; a directory goes only if empty (a submodule's).
	if err := dir.Remove(base); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if w.mode == "120000" {
		return dir.Symlink(string(w.content), base)
	}
	// git's own modes: 0666 or 0777 less the umask.
	perm := os.FileMode(0o666)
	if w.mode == "100755" {
		perm = 0o777
	}
	f, err := dir.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(w.content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
