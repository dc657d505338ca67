//go:build linux

package snapshot

import (
	"path/filepath"
	"syscall"
)

// gateSupported: the stat gate needs nanosecond ctime and mtime.
const gateSupported = true

// lstatKey is lstat of rel under top, in one system call. A symlink on
// the way is followed, which cannot hide a change: every directory above a
// recorded entry is itself recorded, and a directory swapped for a link no
// longer matches.
func lstatKey(top, rel string) (statKey, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(filepath.Join(top, filepath.FromSlash(rel)), &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return statKey{}, err
		}
		break
	}
	return statKey{
		dev: uint64(st.Dev), ino: st.Ino, mode: st.Mode, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
	}, nil
}
