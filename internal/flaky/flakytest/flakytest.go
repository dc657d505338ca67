// Package flakytest copies the flaky fixture modules for tests.
//
// Test fake: used by tests only, never by product code.
package flakytest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CopyModule copies the module at src (without its .diff patches and
// Python caches) into a new temporary directory and returns it.
func CopyModule(tb testing.TB, src string) string {
	tb.Helper()
	dst := tb.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if strings.HasSuffix(p, ".diff") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return dst
}
