package flakyfix

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/org/mini-agent/internal/bundle"
)

// TestRestoreTree undoes a change: a modified file back, an added file
// gone, a deleted file back; a file too large to snapshot is refused.
func TestRestoreTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package a\n")
	write("sub/b_test.go", "package sub\n")
	write(".git/config", "[core]\n")
	before, skipped, err := snapshotTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(before)
	if _, err := os.Stat(filepath.Join(before, ".git")); err == nil {
		t.Error(".git was snapshotted")
	}
	write("a.go", "package a // changed\n")
	write("sub/new_test.go", "package sub\n")
	os.Remove(filepath.Join(dir, "sub", "b_test.go"))
	files := []bundle.File{{Path: "a.go", Status: "modified"}, {Path: "sub/new_test.go", Status: "added"}, {Path: "sub/b_test.go", Status: "deleted"}}
	if err := restoreTree(dir, before, skipped, files); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(data) != "package a\n" {
		t.Errorf("a.go = %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "new_test.go")); err == nil {
		t.Error("the added file is still there")
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "sub", "b_test.go")); string(data) != "package sub\n" {
		t.Errorf("sub/b_test.go = %q", data)
	}
	if err := restoreTree(dir, before, map[string]bool{"a.go": true}, files); err == nil {
		t.Error("a file that was not snapshotted was restored")
	}
	if err := restoreTree(dir, before, skipped, []bundle.File{{Path: "../escape.go"}}); err == nil {
		t.Error("a path leaving the workspace was accepted")
	}
}
