package testcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		files []string
		want  string
		note  string // a substring of the notes, when set
	}{
		{[]string{"go.mod", "package.json"}, "go test ./...", "npm package roots found too, not run: ."},
		{[]string{"package.json"}, "npm test", ""},
		{[]string{"Cargo.toml"}, "cargo test", ""},
		{[]string{"pyproject.toml"}, "pytest", ""},
		{[]string{"pytest.ini"}, "pytest", ""},
		{[]string{"setup.cfg"}, "pytest", ""},
		{nil, "", ""},
		// A Go module in a subdirectory (golang/tools' gopls/ without the root).
		{[]string{"README.md", "sub/go.mod"}, "go -C sub test ./...", ""},
		// Nested modules: each runs (a nested module is not in its parent's ./...).
		{[]string{"go.mod", "gopls/go.mod", "gopls/internal/x.go", "internal/tools/go.mod"},
			"go test ./... && go -C gopls test ./... && go -C internal/tools test ./...", ""},
		{[]string{"a/b/c/d/go.mod"}, "go -C a/b/c/d test ./...", ""},
		// Not entered: dependencies, fixtures, hidden directories, too deep.
		{[]string{"vendor/x/go.mod", "node_modules/a/package.json", "testdata/m/go.mod", ".hidden/go.mod",
			"third_party/c/Cargo.toml", "a/b/c/d/e/go.mod"}, "", ""},
		// The other kinds: the top-most roots (workspaces run their members).
		{[]string{"package.json", "packages/a/package.json"}, "npm test", ""},
		{[]string{"web/package.json", "web/sub/package.json", "docs/package.json"},
			"npm --prefix docs test && npm --prefix web test", ""},
		{[]string{"crates/a/Cargo.toml"}, "cargo test --manifest-path crates/a/Cargo.toml", ""},
		{[]string{"py/pyproject.toml", "py/tests/test_x.py"}, "pytest py", ""},
		// The kind at the root wins; else the first kind found, in order.
		{[]string{"pyproject.toml", "svc/go.mod"}, "pytest", "Go module roots found too, not run: svc"},
		{[]string{"web/package.json", "svc/go.mod"}, "go -C svc test ./...", "npm package roots found too, not run: web"},
		// A path a command line would have to quote is left out, said so.
		{[]string{"my mod/go.mod"}, "", "left out"},
		{[]string{"ok/go.mod", "my mod/go.mod"}, "go -C ok test ./...", "left out"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		for _, f := range tt.files {
			p := filepath.Join(dir, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d := DetectIn(dir)
		if d.Command != tt.want || Detect(dir) != tt.want {
			t.Errorf("%v: %q, want %q", tt.files, d.Command, tt.want)
		}
		if tt.note != "" && !strings.Contains(strings.Join(d.Notes, "\n"), tt.note) {
			t.Errorf("%v: notes %q lack %q", tt.files, d.Notes, tt.note)
		}
		// What Detect proposes must parse, without a shell; Go commands
		// (suites too) to the go test runner, which narrows.
		if d.Command != "" {
			c, err := Parse(d.Command)
			switch {
			case err != nil || c.Shell():
				t.Errorf("%q: Parse: shell %v, err %v", d.Command, c != nil && c.Shell(), err)
			case strings.HasPrefix(d.Command, "go ") && (c.Runner() != Go || !c.Narrowable()):
				t.Errorf("%q: runner %v, narrowable %v", d.Command, c.Runner(), c.Narrowable())
			}
		}
	}
	if got := Detect(filepath.Join(t.TempDir(), "missing")); got != "" {
		t.Errorf("missing dir: %q", got)
	}
}

// TestDetectNoLinks: the walk does not follow a link to a directory (the
// repository is untrusted; the link may leave it).
func TestDetectNoLinks(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if got := Detect(dir); got != "" {
		t.Fatalf("followed a link: %q", got)
	}
}

// TestDetectBounded: a tree wider than the walk's bound stops it, with a
// note, and what was found before still counts.
func TestDetectBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= maxDetectDirs; i++ {
		if err := os.Mkdir(filepath.Join(dir, fmt.Sprintf("d%05d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d := DetectIn(dir)
	if d.Command != "go test ./..." || !strings.Contains(strings.Join(d.Notes, " "), "stopped after") {
		t.Fatalf("%+v", d)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	got := Names([]string{"TestTotal", "TestTable/case_2", "TestTable/case_3",
		"tests/test_calc.py::test_add", "tests/test_calc.py::TestK::test_b", "calc > adds numbers", "", "x.py::", "TestTotal"})
	want := []string{"TestTotal", "TestTable", "test_add", "test_b", "calc > adds numbers"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Names (-want +got):\n%s", diff)
	}
}
