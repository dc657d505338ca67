package cleantree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LinkDependency makes rel, a path the commit tracks nothing at or below,
// a symbolic link to target, an absolute directory outside the tree. It is
// how the dependencies a workspace installed and the commit does not carry
// (node_modules, a virtual environment) reach a clean checkout without a
// copy: a sandboxed run can read them through the link but not write them,
// since target is outside the run's writable places. rel's parent must
// already be a directory of the tree (no link on the way); rel must not
// exist. Call it before Apply: a change at or below rel is then refused.
func (t *Tree) LinkDependency(rel, target string) error {
	if t.closed {
		return errors.New("cleantree: LinkDependency after Close")
	}
	if err := checkPath(rel); err != nil {
		return err
	}
	if !filepath.IsAbs(target) {
		return refused(rel, "link target %q is not absolute", target)
	}
	if inside(target, t.dir) {
		return refused(rel, "link target %q is inside the tree", target)
	}
	if _, ok := t.entries[rel]; ok {
		return refused(rel, "the commit tracks it")
	}
	if t.dirs[rel] > 0 {
		return refused(rel, "the commit tracks files below it")
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		return refused(rel, "link target %q is not a directory", target)
	}
	root, err := os.OpenRoot(t.dir)
	if err != nil {
		return fmt.Errorf("cleantree: %w", err)
	}
	defer root.Close()
	dir, base, err := openParent(root, rel, false)
	if err != nil {
		return refused(rel, "%v", err)
	}
	defer dir.Close()
	if _, err := dir.Lstat(base); !errors.Is(err, fs.ErrNotExist) {
		return refused(rel, "it exists in the tree")
	}
	if err := dir.Symlink(target, base); err != nil {
		return fmt.Errorf("cleantree: linking %s: %w", rel, err)
	}
	t.links = append(t.links, rel)
	return nil
}

// inside reports whether p is dir or below it.
func inside(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
