//go:build !linux

package tools

import "os"

// dirLister lists workspace directories for the one-pass listing.
type dirLister struct{ root *os.Root }

func newDirLister(root *os.Root) *dirLister { return &dirLister{root: root} }

func (l *dirLister) close() {}

// list returns dir's entries; a directory under a symlink is refused.
func (l *dirLister) list(dir string) ([]dirEnt, error) {
	if dir != "." {
		var c dirCache
		c.ok = map[string]bool{}
		if !c.safe(l.root, dir) {
			return nil, ErrForbidden
		}
	}
	return rootListDir(l.root, dir)
}
