package tools

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"syscall"
)

// fileStatus says what reading one file for search found.
type fileStatus int

const (
	fileOK      fileStatus = iota
	fileSkipped            // gone, unreadable, empty, a symlink or not a regular file
	fileBinary
	fileLarge
)

// dirReader reads the files of one directory for search. Symlinks and
// anything but regular files are skipped: the real file, if searchable, is
// listed under its own path, and a link could lead into a nested .git.
type dirReader interface {
	// read reads the file name (one path component) into buf, grown if
	// needed, and returns the bytes and what they are.
	read(name string, buf []byte) ([]byte, fileStatus)
	close()
}

// rootDirReader is the portable dirReader: an os.Root on the directory.
type rootDirReader struct {
	root *os.Root
}

func openRootDirReader(ws *os.Root, dir string) (dirReader, error) {
	r, err := ws.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &rootDirReader{root: r}, nil
}

func (d *rootDirReader) close() { d.root.Close() }

func (d *rootDirReader) read(name string, buf []byte) ([]byte, fileStatus) {
	fi, err := d.root.Lstat(name)
	switch {
	case err != nil || !fi.Mode().IsRegular() || fi.Size() == 0:
		return buf, fileSkipped
	case fi.Size() > searchMaxFileBytes:
		return buf, fileLarge
	}
	// O_NONBLOCK: a FIFO swapped in since the Lstat cannot block the open.
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return buf, fileSkipped
	}
	defer f.Close()
	buf = growBuf(buf, fi.Size())
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return buf[:0], fileSkipped
	}
	return buf[:n], checkBinary(buf[:n])
}

// checkBinary classifies data read for search.
func checkBinary(data []byte) fileStatus {
	if bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		return fileBinary
	}
	return fileOK
}

// growBuf returns buf resized to n bytes, reallocating when too small.
func growBuf(buf []byte, n int64) []byte {
	if int64(cap(buf)) < n {
		return make([]byte, n, max(n, 64<<10))
	}
	return buf[:n]
}

// dirOpener opens the directories of one search: in one system call that
// refuses any symlink on the way where the platform has one (openBeneath),
// else through the workspace Root after checking each directory once.
type dirOpener struct {
	root   *os.Root
	cache  dirCache
	fast   *beneathOpener // nil when unsupported
	noFast atomic.Bool    // set when the fast way turned out unsupported
}

func newDirOpener(root *os.Root) *dirOpener {
	return &dirOpener{root: root, cache: dirCache{ok: map[string]bool{}}, fast: newBeneathOpener(root)}
}

func (o *dirOpener) close() {
	if o.fast != nil {
		o.fast.close()
	}
}

// open opens dir (workspace-relative, "." for the root) for reading its
// files; a directory under .git, or reached through a symlink, is refused.
func (o *dirOpener) open(dir string) (dirReader, error) {
	if isGitPath(dir) {
		return nil, ErrForbidden
	}
	if o.fast != nil && !o.noFast.Load() {
		d, err := o.fast.open(dir)
		if !errors.Is(err, errUnsupported) {
			return d, err
		}
		o.noFast.Store(true)
	}
	if !o.cache.safe(o.root, dir) {
		return nil, ErrForbidden
	}
	return openDirReader(o.root, dir)
}

// errUnsupported says the platform cannot do something; the caller falls
// back to a portable way.
var errUnsupported = errors.New("unsupported")

// dirCache remembers which directories are real directories reached
// without a symlink, so each is checked once per search.
type dirCache struct {
	mu sync.Mutex
	ok map[string]bool
}

// safe reports whether dir and all its parents are real directories (no
// symlink on the way) outside .git.
func (c *dirCache) safe(root *os.Root, dir string) bool {
	if dir == "." || dir == "" {
		return true
	}
	c.mu.Lock()
	ok, seen := c.ok[dir]
	c.mu.Unlock()
	if seen {
		return ok
	}
	ok = !isGitPath(dir) && c.safe(root, path.Dir(dir))
	if ok {
		fi, err := root.Lstat(dir)
		ok = err == nil && fi.IsDir()
	}
	c.mu.Lock()
	c.ok[dir] = ok
	c.mu.Unlock()
	return ok
}
