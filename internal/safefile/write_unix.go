//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// openNoFollow opens base in root for writing with flag (O_CREATE: created
// with perm when absent; O_APPEND): O_NOFOLLOW (a symlink at the last component fails the open, it
// is never followed) and O_NONBLOCK (a FIFO without a reader fails at once
// instead of stalling). No O_TRUNC: the caller truncates once the
// descriptor is checked.
func openNoFollow(root *os.Root, base, path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(root.Name(), base), os.O_WRONLY|flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		// Swapped in since the check: say what is there now.
		if fi, lerr := root.Lstat(base); lerr == nil && !fi.Mode().IsRegular() {
			return nil, refuseMode(path, fi.Mode())
		}
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
			return nil, refuseMode(path, fs.ModeSymlink)
		}
		return nil, err
	}
	return f, nil
}

// links is the file's hard-link count.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
