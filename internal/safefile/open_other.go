//go:build !unix

package safefile

import (
	"io/fs"
	"os"
)

// open on systems without FIFOs in the workspace sense (Windows): the type
// is checked before and after the open.
func open(root *os.Root, name string, dirOK bool) (*os.File, fs.FileInfo, error) {
	if name == "" {
		name = "."
	}
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() && !(dirOK && fi.IsDir()) {
		return nil, nil, notRegular(name, fi.Mode())
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() && !(dirOK && fi.IsDir()) {
		f.Close()
		if err == nil {
			err = notRegular(name, fi.Mode())
		}
		return nil, nil, err
	}
	return f, fi, nil
}
