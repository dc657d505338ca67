package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// maxInputScan bounds the entries CheckInputs visits; past it the rest of
// the tree is left to git's own deadline.
const maxInputScan = 2_000_000

// ErrUntrustedInput is returned when a file git would read is not a
// regular file: git opens .gitignore and .gitattributes files with a
// blocking open, so a FIFO there would stall it until its deadline.
var ErrUntrustedInput = errors.New("git input is not a regular file")

// CheckInputs walks the work tree at dir (without entering any .git) and
// refuses when a .gitignore or .gitattributes entry is anything but a
// regular file or a symbolic link (git does not follow those). The walk
// reads directories only, never a file.
func CheckInputs(ctx context.Context, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer root.Close()
	seen := 0
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			if rel == "." {
				return err
			}
			return nil
		}
		if seen++; seen > maxInputScan {
			return fs.SkipAll
		}
		if seen%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		name := d.Name()
		if rel != "." && strings.EqualFold(name, ".git") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if name == ".gitignore" || name == ".gitattributes" {
			if t := d.Type(); !t.IsRegular() && t&fs.ModeSymlink == 0 {
				return fmt.Errorf("%w: %s is a %s; refusing to run git on this work tree", ErrUntrustedInput, rel, typeName(t))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

func typeName(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t.IsDir():
		return "directory"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeDevice != 0:
		return "device"
	}
	return "non-regular file (" + t.String() + ")"
}
