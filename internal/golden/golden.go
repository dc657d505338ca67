// Package golden compares rendered text with a file under a test's testdata
// folder and rewrites that file when the test runs with -update:
//
//	go test ./internal/report -run Golden -update   # accept the new output
//
// Review the rewritten files with git diff before committing them.
//
// Test fake: imported only by _test.go files, never by product code.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata with the current output")

// TB is the part of testing.TB that Assert uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Assert fails t, printing a line diff (-want +got), when got differs from
// the file at path byte for byte. With -update it writes got to path
// instead (creating the folder) and passes.
func Assert(t TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden: %v", err)
			return
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden: %v", err)
		}
		return
	}
	check(t, path, got)
}

func check(t TB, path string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run the test with -update to create it)", err)
		return
	}
	if bytes.Equal(want, got) {
		return
	}
	t.Errorf("output differs from %s (-want +got):\n%s\nIf the change is intended, rerun with -update and review git diff.",
		path, cmp.Diff(strings.SplitAfter(string(want), "\n"), strings.SplitAfter(string(got), "\n")))
}

// AssertString is Assert for a string.
func AssertString(t TB, path, got string) {
	t.Helper()
	Assert(t, path, []byte(got))
}
