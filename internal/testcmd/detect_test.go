package testcmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		files []string
		want  string
	}{
		{[]string{"go.mod", "package.json"}, "go test ./..."},
		{[]string{"package.json"}, "npm test"},
		{[]string{"Cargo.toml"}, "cargo test"},
		{[]string{"pyproject.toml"}, "pytest"},
		{[]string{"pytest.ini"}, "pytest"},
		{[]string{"setup.cfg"}, "pytest"},
		{[]string{"README.md", "sub/go.mod"}, ""},
		{nil, ""},
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
		got := Detect(dir)
		if got != tt.want {
			t.Errorf("%v: %q, want %q", tt.files, got, tt.want)
		}
		// What Detect proposes must parse, to the runner it names.
		if got != "" {
			if c, err := Parse(got); err != nil || c.Runner() == Unknown {
				t.Errorf("%q: Parse: runner %v, err %v", got, c.Runner(), err)
			}
		}
	}
	if got := Detect(filepath.Join(t.TempDir(), "missing")); got != "" {
		t.Errorf("missing dir: %q", got)
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
