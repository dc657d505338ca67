//go:build linux

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

func open(root *os.Root, name string, dirOK bool) (*os.File, fs.FileInfo, error) {
	name = cleanName(name)
	dir, base := split(name)
	var (
		parent *os.File
		err    error
	)
	if base == "." || base == "" {
		// The root itself.
		parent, err = root.OpenFile(".", os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
		if err != nil {
			return nil, nil, err
		}
		return finish(parent, name, dirOK)
	}
	// O_DIRECTORY: a FIFO in place of the directory fails the open at once.
	parent, err = root.OpenFile(dir, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer parent.Close()
	var fd int
	for {
		fd, err = syscall.Openat(int(parent.Fd()), base, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
		if err != syscall.EINTR {
			break
		}
	}
	runtime.KeepAlive(parent)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
			return nil, nil, notRegular(name, fs.ModeSymlink)
		}
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	// The file's name is its path (a directory's entries' Info use it).
	return finish(os.NewFile(uintptr(fd), filepath.Join(root.Name(), filepath.FromSlash(name))), name, dirOK)
}

// finish checks the open descriptor's type. O_NONBLOCK stays set: it only
// mattered for the open, reads of a regular file or directory ignore it.
func finish(f *os.File, name string, dirOK bool) (*os.File, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() && !(dirOK && fi.IsDir()) {
		f.Close()
		return nil, nil, notRegular(name, fi.Mode())
	}
	return f, fi, nil
}

func cleanName(name string) string {
	if name == "" {
		return "."
	}
	return name
}

// OpenDirAt opens the directory name (one component) inside the open
// directory parent: one openat, never following a symlink, never blocking
// (O_DIRECTORY fails at once on a FIFO). Walks use it to go down a tree
// without resolving each path from the root again.
func OpenDirAt(parent *os.File, name string) (*os.File, error) {
	var (
		fd  int
		err error
	)
	for {
		fd, err = syscall.Openat(int(parent.Fd()), name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
		if err != syscall.EINTR {
			break
		}
	}
	runtime.KeepAlive(parent)
	if err != nil {
		return nil, &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(parent.Name(), name)), nil
}
