package testcmd

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func mustParse(t *testing.T, line string) *Command {
	t.Helper()
	c, err := Parse(line)
	if err != nil {
		t.Fatalf("Parse(%q): %v", line, err)
	}
	return c
}

// dirWorkspace is a Workspace over a real directory for these tests. Its
// Resolve refuses absolute paths, ".." and links leaving the directory in
// the simplest way; the real rules (tools.Workspace) are tested through the
// run_test tool.
type dirWorkspace struct {
	dir  string
	root *os.Root
}

func openDir(t *testing.T, dir string) Workspace {
	t.Helper()
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return dirWorkspace{dir: dir, root: root}
}

func (d dirWorkspace) Resolve(p string) (string, error) {
	if path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") {
		return "", errors.New("refused: absolute or '..'")
	}
	clean := path.Clean(strings.TrimPrefix(p, "./"))
	real, err := filepath.EvalSymlinks(filepath.Join(d.dir, filepath.FromSlash(clean)))
	if errors.Is(err, fs.ErrNotExist) {
		return clean, nil
	}
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(d.dir, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", errors.New("refused: leaves the workspace")
	}
	return filepath.ToSlash(rel), nil
}

func (d dirWorkspace) Stat(p string) (fs.FileInfo, error) { return d.root.Stat(p) }
