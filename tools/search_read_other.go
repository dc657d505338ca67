//go:build !linux

package tools

import "os"

// openDirReader opens dir (workspace-relative) for search.
func openDirReader(ws *os.Root, dir string) (dirReader, error) {
	return openRootDirReader(ws, dir)
}

// beneathOpener is unsupported here: directories are checked and opened
// through the os.Root.
type beneathOpener struct{}

func newBeneathOpener(*os.Root) *beneathOpener { return nil }

func (*beneathOpener) open(string) (dirReader, error) { return nil, errUnsupported }

func (*beneathOpener) close() {}
