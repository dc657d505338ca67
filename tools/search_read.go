package tools

import (
	"bytes"
	"errors"
	"io"
	"os"
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
