package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a TB that records failures instead of failing the test.
type recorder struct {
	errors, fatals []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

func TestAssertPassesOnIdenticalOutput(t *testing.T) {
	var r recorder
	AssertString(&r, "testdata/sample.golden", "line one\nline two\nline three\n")
	if len(r.errors)+len(r.fatals) != 0 {
		t.Fatalf("identical output failed: %v %v", r.errors, r.fatals)
	}
}

func TestAssertFailsWithALineDiff(t *testing.T) {
	var r recorder
	AssertString(&r, "testdata/sample.golden", "line one\nline 2\nline three\n")
	if len(r.errors) != 1 {
		t.Fatalf("changed output: errors = %q, want one", r.errors)
	}
	msg := r.errors[0]
	for _, want := range []string{"testdata/sample.golden", "-update"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure message lacks %q:\n%s", want, msg)
		}
	}
	// One line removed, one added, the others shown unchanged.
	marked := map[string]string{}
	for _, line := range strings.Split(msg, "\n") {
		if f := strings.Fields(line); len(f) > 1 && (f[0] == "-" || f[0] == "+") {
			marked[f[0]] += strings.Join(f[1:], " ")
		}
	}
	if marked["-"] != `"line two\n",` || marked["+"] != `"line 2\n",` {
		t.Errorf("diff marks %q, want only line two removed and line 2 added:\n%s", marked, msg)
	}
}

// A missing trailing newline is a difference: the comparison is byte for byte.
func TestAssertIsByteExact(t *testing.T) {
	var r recorder
	AssertString(&r, "testdata/sample.golden", "line one\nline two\nline three")
	if len(r.errors) != 1 {
		t.Fatalf("output without the final newline passed: %q", r.errors)
	}
}

func TestAssertMissingFileIsFatal(t *testing.T) {
	var r recorder
	AssertString(&r, filepath.Join(t.TempDir(), "none.golden"), "x")
	if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "-update") {
		t.Fatalf("missing golden file: fatals = %q", r.fatals)
	}
}

func TestUpdateWritesTheFile(t *testing.T) {
	old := *update
	*update = true
	defer func() { *update = old }()
	path := filepath.Join(t.TempDir(), "sub", "new.golden")
	var r recorder
	AssertString(&r, path, "fresh\n")
	if len(r.errors)+len(r.fatals) != 0 {
		t.Fatalf("update failed: %v %v", r.errors, r.fatals)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "fresh\n" {
		t.Fatalf("written file = %q, %v", got, err)
	}
	*update = false
	AssertString(&r, path, "fresh\n")
	AssertString(&r, path, "stale\n")
	if len(r.errors) != 1 {
		t.Fatalf("after update: errors = %q, want exactly the stale one", r.errors)
	}
}
