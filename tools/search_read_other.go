//go:build !linux

package tools

import "os"

// openDirReader opens dir (workspace-relative) for search.
func openDirReader(ws *os.Root, dir string) (dirReader, error) {
	return openRootDirReader(ws, dir)
}
