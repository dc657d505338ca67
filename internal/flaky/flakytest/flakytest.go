// Package flakytest copies the flaky fixture modules for tests.
//
// Test fake: used by tests only, never by product code.
package flakytest

import (
	"io/fs"
	"os"
	"os/exec"
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

// Commit makes dir a git repository on branch main with everything in it
// committed, as a checkout of the default branch, and returns the commit
// and the committed files by slash path (to seed a fake GitHub with).
func Commit(tb testing.TB, dir string) (head string, files map[string]string) {
	tb.Helper()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "fixture")
	files = map[string]string{}
	for _, f := range strings.Split(git("ls-files"), "\n") {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			tb.Fatal(err)
		}
		files[f] = string(data)
	}
	return git("rev-parse", "HEAD"), files
}
