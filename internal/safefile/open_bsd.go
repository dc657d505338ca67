//go:build unix && !linux

package safefile

import (
	"io/fs"
	"os"
	"syscall"
)

// open on Unix systems without syscall.Openat in the standard library
// (macOS, the BSDs): the root opens the file non-blocking, then the open
// descriptor must be the very entry at name, not a symlink's target.
func open(root *os.Root, name string, dirOK bool) (*os.File, fs.FileInfo, error) {
	if name == "" {
		name = "."
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	lfi, err := root.Lstat(name)
	if err != nil || !os.SameFile(fi, lfi) {
		f.Close()
		if err == nil {
			err = notRegular(name, lfi.Mode())
		}
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() && !(dirOK && fi.IsDir()) {
		f.Close()
		return nil, nil, notRegular(name, fi.Mode())
	}
	return f, fi, nil
}
