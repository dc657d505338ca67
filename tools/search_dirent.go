package tools

import (
	"io/fs"
	"os"
)

// dirEnt is one directory entry: its name and type bits (fs.ModeDir,
// fs.ModeSymlink..., 0 for a regular file), never following a symlink.
type dirEnt struct {
	name string
	typ  fs.FileMode
}

// rootListDir lists dir through the workspace Root: the portable way.
func rootListDir(root *os.Root, dir string) ([]dirEnt, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirEnt, 0, len(ents))
	for _, e := range ents {
		out = append(out, dirEnt{name: e.Name(), typ: e.Type()})
	}
	return out, nil
}
