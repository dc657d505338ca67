// Package safefile opens workspace files the way the harness must: never
// blocking (a FIFO or a device swapped in by code under test cannot stall
// the open), never following a symlink at the last component, and checked
// to be a regular file on the open descriptor before a byte is read. And it
// writes mini-agent's outputs (WriteFile, Create) never through a link.
//
// Leaf engine: imports nothing above it.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// ErrNotRegular is returned for anything but a regular file: a FIFO, a
// socket, a device, a symlink at the last component, a directory.
var ErrNotRegular = errors.New("not a regular file")

// Open opens name (slash-separated, relative to root) for reading. Parent
// directories are resolved by root (they cannot leave it); the last
// component is opened non-blocking and without following a symlink, and
// the descriptor must be a regular file.
func Open(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	return open(root, name, false)
}

// OpenFileOrDir is Open that also accepts a directory.
func OpenFileOrDir(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	return open(root, name, true)
}

// ReadFile reads name under root through Open, refusing files over limit
// bytes (limit <= 0: no limit).
func ReadFile(root *os.Root, name string, limit int64) ([]byte, error) {
	f, fi, err := Open(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if limit > 0 && fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, over the %d-byte limit", name, fi.Size(), limit)
	}
	r := io.Reader(f)
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	data, err := readAll(r, fi.Size())
	if err != nil {
		return nil, err
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: grew over the %d-byte limit while read", name, limit)
	}
	return data, nil
}

// readAll is io.ReadAll into a buffer of the size the file had when it was
// opened (and one byte more, to see the end without growing): io.ReadAll
// starts small and doubles, which for a file of megabytes allocates and
// copies about twice its size and leaves a buffer up to twice as large.
// A file that grew since is still read whole.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > 1<<30 {
		size = 0 // (a size we would not trust: let the buffer grow)
	}
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				return b, nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow
		}
	}
}

// ReadPath reads the file at an absolute or relative OS path: its directory
// is opened as a root, the file as Open does.
func ReadPath(p string, limit int64) ([]byte, error) {
	dir, base := splitOS(p)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return ReadFile(root, base, limit)
}

// CheckRegular reports an error unless the entry at name under root is
// missing or a regular file; it opens it the non-blocking way to be sure
// (a stat alone says nothing about what an open would meet). Missing is
// fine: git reads such inputs only when they exist.
func CheckRegular(root *os.Root, name string) error {
	f, _, err := Open(root, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return f.Close()
}

// FS is an fs.FS over root whose Open and ReadFile go through Open
// (directories allowed): a drop-in for root.FS() that cannot block.
func FS(root *os.Root) fs.FS { return rootFS{root: root, base: root.FS()} }

type rootFS struct {
	root *os.Root
	base fs.FS
}

func (r rootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, _, err := OpenFileOrDir(r.root, name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (r rootFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	return ReadFile(r.root, name, 0)
}

func (r rootFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(r.base, name) }

func (r rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	f, fi, err := OpenFileOrDir(r.root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

func splitOS(p string) (dir, base string) {
	p = strings.TrimRight(p, string(os.PathSeparator))
	i := strings.LastIndexByte(p, os.PathSeparator)
	if os.PathSeparator != '/' {
		if j := strings.LastIndexByte(p, '/'); j > i {
			i = j
		}
	}
	if i < 0 {
		return ".", p
	}
	if i == 0 {
		return string(os.PathSeparator), p[1:]
	}
	return p[:i], p[i+1:]
}

// split splits a slash path into its directory ("." for none) and last
// component.
func split(name string) (dir, base string) {
	dir, base = path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	return dir, base
}

func notRegular(name string, mode fs.FileMode) error {
	return &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, TypeName(mode))}
}

// TypeName names a file mode's type for people: "named pipe", "socket",
// "device", "symbolic link", "directory", "file".
func TypeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "file"
	}
	return m.Type().String()
}
