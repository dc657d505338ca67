//go:build linux

package tools

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"unsafe"
)

// openDirReader opens dir (workspace-relative) for search.
func openDirReader(ws *os.Root, dir string) (dirReader, error) {
	return openRawDirReader(ws, dir)
}

// rawDirReader reads the files of one directory. The directory is opened
// through the workspace's os.Root (and checked symlink-free by dirCache);
// its files are then opened with openat relative to it, one path component
// with O_NOFOLLOW, which can neither leave the directory nor follow a link.
// Raw system calls skip the poller registration, finalizer and blocking-mode
// switches os.File costs per file: about a third of search time on a large
// tree.
type rawDirReader struct {
	f  *os.File // nil when fd is a bare descriptor this reader owns
	fd int
}

func openRawDirReader(ws *os.Root, dir string) (dirReader, error) {
	f, err := ws.OpenFile(dir, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0) // a FIFO swapped in cannot block
	if err != nil {
		return nil, err
	}
	return &rawDirReader{f: f, fd: int(f.Fd())}, nil
}

func (d *rawDirReader) close() {
	if d.f != nil {
		d.f.Close()
	} else {
		syscall.Close(d.fd)
	}
}

// read implements dirReader. A symlink fails the open with ELOOP under
// O_NOFOLLOW; O_NONBLOCK keeps a FIFO from blocking it.
func (d *rawDirReader) read(name string, buf []byte) ([]byte, fileStatus) {
	if name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
		return buf, fileSkipped
	}
	var (
		fd  int
		err error
	)
	for {
		fd, err = syscall.Openat(d.fd, name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
		if err != syscall.EINTR {
			break
		}
	}
	runtime.KeepAlive(d.f)
	if err != nil {
		return buf, fileSkipped
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size == 0 {
		return buf, fileSkipped
	}
	if st.Size > searchMaxFileBytes {
		return buf, fileLarge
	}
	buf = growBuf(buf, st.Size)
	n := 0
	for n < len(buf) {
		k, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf[:0], fileSkipped
		}
		if k == 0 {
			break
		}
		n += k
	}
	return buf[:n], checkBinary(buf[:n])
}

// beneathOpener opens a workspace directory with one openat2 call from the
// workspace root that refuses every symlink on the way and any escape
// (RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH): what dirCache checks component
// by component, for a fraction of the system calls. Kernels before 5.6, or
// sandboxes that filter openat2, report errUnsupported.
type beneathOpener struct {
	root *os.File
	fd   int
}

const (
	sysOpenat2        = 437 // the same number on every Linux architecture
	resolveNoSymlinks = 0x04
	resolveBeneath    = 0x08
)

// openHow is the kernel's struct open_how.
type openHow struct {
	flags, mode, resolve uint64
}

func newBeneathOpener(ws *os.Root) *beneathOpener {
	f, err := ws.Open(".")
	if err != nil {
		return nil
	}
	return &beneathOpener{root: f, fd: int(f.Fd())}
}

func (b *beneathOpener) close() { b.root.Close() }

func (b *beneathOpener) open(dir string) (dirReader, error) {
	p, err := syscall.BytePtrFromString(dir)
	if err != nil {
		return nil, err
	}
	how := openHow{
		flags:   syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_CLOEXEC | syscall.O_NOFOLLOW,
		resolve: resolveNoSymlinks | resolveBeneath,
	}
	var fd uintptr
	var errno syscall.Errno
	for {
		fd, _, errno = syscall.Syscall6(sysOpenat2, uintptr(b.fd), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		if errno != syscall.EINTR {
			break
		}
	}
	runtime.KeepAlive(b.root)
	switch {
	case errno == syscall.ENOSYS || errno == syscall.EPERM || errno == syscall.E2BIG:
		return nil, errUnsupported
	case errno != 0:
		return nil, errno
	}
	// A bare descriptor: os.NewFile would cost an fcntl per directory.
	return &rawDirReader{fd: int(fd)}, nil
}
