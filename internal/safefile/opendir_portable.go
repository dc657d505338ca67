//go:build !linux

package safefile

import "os"

// OpenDirAt opens the directory name (one component) inside parent.
func OpenDirAt(parent *os.File, name string) (*os.File, error) {
	root, err := os.OpenRoot(parent.Name())
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, fi, err := open(root, name, true)
	if err == nil && !fi.IsDir() {
		f.Close()
		return nil, notRegular(name, fi.Mode())
	}
	return f, err
}
