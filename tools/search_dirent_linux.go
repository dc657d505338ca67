//go:build linux

package tools

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"syscall"
)

// dirLister lists workspace directories for the one-pass listing: each is
// opened with one openat2 from the workspace root that refuses any symlink
// on the way (beneathOpener) and read with getdents64, whose records carry
// each entry's type, so no entry costs a stat (but those of filesystems
// that do not fill the type in).
type dirLister struct {
	root   *os.Root
	fast   *beneathOpener
	noFast atomic.Bool
	cache  dirCache
	bufs   sync.Pool
}

func newDirLister(root *os.Root) *dirLister {
	return &dirLister{root: root, fast: newBeneathOpener(root), cache: dirCache{ok: map[string]bool{}},
		bufs: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}
}

func (l *dirLister) close() {
	if l.fast != nil {
		l.fast.close()
	}
}

// list returns dir's entries; a directory under a symlink is refused.
func (l *dirLister) list(dir string) ([]dirEnt, error) {
	if l.fast != nil && !l.noFast.Load() {
		d, err := l.fast.open(dir)
		if err == nil {
			r := d.(*rawDirReader)
			defer r.close()
			return l.readDirents(r.fd, dir)
		}
		if !errors.Is(err, errUnsupported) {
			return nil, err
		}
		l.noFast.Store(true)
	}
	if !l.cache.safe(l.root, dir) {
		return nil, ErrForbidden
	}
	return rootListDir(l.root, dir)
}

// readDirents reads all entries of the open directory fd, which is dir.
func (l *dirLister) readDirents(fd int, dir string) ([]dirEnt, error) {
	bp := l.bufs.Get().(*[]byte)
	defer l.bufs.Put(bp)
	buf := *bp
	var out []dirEnt
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		for rec := buf[:n]; len(rec) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 19 || reclen > len(rec) {
				return nil, syscall.EIO
			}
			typ := rec[18]
			name := rec[19:reclen]
			if i := indexZero(name); i >= 0 {
				name = name[:i]
			}
			rec = rec[reclen:]
			if s := string(name); s != "." && s != ".." {
				t, ok := direntType(typ)
				if !ok {
					fi, err := l.root.Lstat(path.Join(dir, s))
					if err != nil {
						continue // gone since read
					}
					t = fi.Mode().Type()
				}
				out = append(out, dirEnt{name: s, typ: t})
			}
		}
	}
}

func indexZero(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// direntType maps a d_type; false when the filesystem left it unknown.
func direntType(t byte) (fs.FileMode, bool) {
	switch t {
	case syscall.DT_REG:
		return 0, true
	case syscall.DT_DIR:
		return fs.ModeDir, true
	case syscall.DT_LNK:
		return fs.ModeSymlink, true
	case syscall.DT_FIFO:
		return fs.ModeNamedPipe, true
	case syscall.DT_SOCK:
		return fs.ModeSocket, true
	case syscall.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case syscall.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}
