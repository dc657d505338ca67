//go:build linux

package pipeline

import (
	"fmt"
	"io/fs"
	"syscall"
)

// statExtra is what lstat adds beyond fs.FileInfo: the inode and the
// change time, which no system call sets back (a forged modification time
// still moves it).
func statExtra(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d %d.%d", st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
}
