package eval

import (
	"embed"
	"io/fs"
)

//go:embed all:testdata/tasks
var bundled embed.FS

// Bundled returns the tasks shipped inside the binary
// (eval/testdata/tasks in the source tree).
func Bundled() fs.FS {
	sub, err := fs.Sub(bundled, "testdata/tasks")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}
