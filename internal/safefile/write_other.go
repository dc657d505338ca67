//go:build !unix

package safefile

import (
	"io/fs"
	"os"
)

// openNoFollow opens base in root for writing with flag (O_CREATE: created
// with perm when absent; O_APPEND). Without O_NOFOLLOW the caller's checks before (Lstat) and after
// (the descriptor is the entry at the path) stand in for it.
func openNoFollow(root *os.Root, base, path string, flag int, perm os.FileMode) (*os.File, error) {
	return root.OpenFile(base, os.O_WRONLY|flag, perm)
}

// links is the file's hard-link count (unknown here: 1).
func links(fs.FileInfo) uint64 { return 1 }
