package testcmd

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mappingWorkspace holds the files the mapping table names.
func mappingWorkspace(t *testing.T) Workspace {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{
		"pkg/x_test.go", "tests/test_x.py", "tests/unit/test_y.py", "src/app.test.js",
		"tests/foo.rs", ".git/config",
	} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return openDir(t, dir)
}

func TestBuildArgvMapping(t *testing.T) {
	t.Parallel()
	ws := mappingWorkspace(t)
	tests := []struct {
		name     string
		command  string
		tests    []string
		packages []string
		want     []string
		wantNote string
	}{
		{"go no narrowing", "go test ./...", nil, nil, []string{"go", "test", "./..."}, ""},
		{"go names", "go test ./...", []string{"TestA", "TestB"}, nil,
			[]string{"go", "test", "-run", "^(TestA|TestB)$", "./..."}, ""},
		{"go replaces -run, keeps flags and -args", "go test -count 1 -run Old -timeout=5m ./... -args -v", []string{"TestA"}, []string{"pkg"},
			[]string{"go", "test", "-count", "1", "-timeout=5m", "-run", "^(TestA)$", "./pkg", "-args", "-v"}, "-run Old was replaced"},
		{"go subtests and patterns", "go test", []string{"TestA/sub case", "TestB.*", "TestC"}, nil,
			[]string{"go", "test", "-run", `^(TestC)$|^TestA$/^sub_case$|TestB.*`}, ""},
		{"go package forms", "/usr/local/go/bin/go test -v ./...", nil, []string{"./...", "pkg/...", "pkg/x_test.go", "./pkg", "."},
			[]string{"/usr/local/go/bin/go", "test", "-v", "./...", "./pkg/...", "./pkg", "./pkg", "."}, ""},
		{"go quotes plain names", "go test", []string{"Test.Dot"}, nil, []string{"go", "test", "-run", `^(Test\.Dot)$`}, ""},
		{"pytest keywords", "pytest -q tests", []string{"test_a", "test_b[1-2]"}, nil,
			[]string{"pytest", "-q", "-k", "test_a or test_b[1-2]", "tests"}, ""},
		{"pytest node id combines -k", "python3 -m pytest -k 'not slow' -p no:cacheprovider tests/", []string{"tests/test_x.py::TestK::test_y[a b]", "test_z"}, nil,
			[]string{"python3", "-m", "pytest", "-p", "no:cacheprovider", "-k", "(not slow) and (test_z)", "tests/test_x.py::TestK::test_y[a b]"}, "combined"},
		{"pytest files replace positionals", "pytest --cov src -x tests", nil, []string{"tests/unit/test_y.py", "tests/unit"},
			[]string{"pytest", "--cov", "src", "-x", "tests/unit/test_y.py", "tests/unit"}, ""},
		{"jest", "npx jest --ci", []string{"adds 1 + 2", "sum.*"}, []string{"src/app.test.js"},
			[]string{"npx", "jest", "--ci", "-t", `adds 1 \+ 2|sum.*`, "src/app.test.js"}, ""},
		{"jest binary", "./node_modules/.bin/jest", []string{"x"}, nil,
			[]string{"./node_modules/.bin/jest", "-t", "x"}, ""},
		{"vitest replaces -t in place", "vitest run -t old --reporter dot", []string{"renders"}, nil,
			[]string{"vitest", "run", "--reporter", "dot", "-t", "renders"}, "-t old was replaced"},
		{"npm test", "npm test", []string{"x"}, nil, []string{"npm", "test", "--", "-t", "x"}, ""},
		{"npm run test with script args", "npm run test -- --ci", []string{"x"}, []string{"src/app.test.js"},
			[]string{"npm", "run", "test", "--", "--ci", "-t", "x", "src/app.test.js"}, ""},
		{"cargo one name", "cargo test", []string{"parse::works"}, nil, []string{"cargo", "test", "parse::works"}, ""},
		{"cargo replaces filter", "cargo test --release old_filter", []string{"new"}, nil, []string{"cargo", "test", "--release", "new"}, ""},
		{"cargo several names and crates", "cargo test --workspace -- --nocapture", []string{"a", "b"}, []string{"mycrate", "tests/foo.rs"},
			[]string{"cargo", "test", "-p", "mycrate", "--test", "foo", "--", "--nocapture", "a", "b"}, ""},
		{"cargo several names, no --", "cargo +nightly test -p x", []string{"a", "b"}, nil,
			[]string{"cargo", "+nightly", "test", "-p", "x", "--", "a", "b"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv, err := mustParse(t, tt.command).Argv(ws, Selection{Tests: tt.tests, Packages: tt.packages}, Plain)
			if err != nil {
				t.Fatalf("Argv: %v", err)
			}
			if diff := cmp.Diff(tt.want, inv.Argv); diff != "" {
				t.Fatalf("argv (-want +got):\n%s", diff)
			}
			if joined := strings.Join(inv.Notes, "; "); !strings.Contains(joined, tt.wantNote) || (tt.wantNote == "" && joined != "") {
				t.Fatalf("notes %q, want %q", joined, tt.wantNote)
			}
		})
	}
}

func TestBuildArgvRefusals(t *testing.T) {
	t.Parallel()
	ws := mappingWorkspace(t)
	tests := []struct {
		name     string
		command  string
		tests    []string
		packages []string
		wantMsg  string
	}{
		{"flag as test", "go test ./...", []string{"-exec"}, nil, "starts with '-'"},
		{"flag after blank", "go test ./...", []string{"  -exec=sh"}, nil, "starts with '-'"},
		{"command separator", "go test ./...", []string{"; rm -rf /"}, nil, `contains ';'`},
		{"command substitution", "go test ./...", []string{"$(id)"}, nil, `contains '$'`},
		{"backticks", "go test ./...", []string{"`id`"}, nil, "contains '`'"},
		{"alternation", "go test ./...", []string{"TestA|TestB"}, nil, `contains '|'`},
		{"quotes", "go test ./...", []string{"'TestA'"}, nil, `contains '\''`},
		{"newline", "go test ./...", []string{"TestA\nTestB"}, nil, "control or invisible"},
		{"NUL", "go test ./...", []string{"TestA\x00"}, nil, "control or invisible"},
		{"bidi override", "go test ./...", []string{"Test\u202eA"}, nil, "control or invisible"},
		{"very long", "go test ./...", []string{strings.Repeat("A", 201)}, nil, "too long"},
		{"too many", "go test ./...", slices.Repeat([]string{"T"}, 33), nil, "at most 32"},
		{"empty", "go test ./...", []string{" "}, nil, "empty entry"},
		{"bad regexp", "go test ./...", []string{"Test[A"}, nil, "not a valid regular expression"},
		{"flag as package", "go test ./...", nil, []string{"-C"}, "starts with '-'"},
		{"package with blank", "go test ./...", nil, []string{"a b"}, `contains ' '`},
		{"package substitution", "go test ./...", nil, []string{"$(id)"}, `contains '$'`},
		{"windows absolute", "go test ./...", nil, []string{`C:\x`}, `contains ':'`},
		{"missing dir", "go test ./...", nil, []string{"nope"}, "does not exist"},
		{"go import path", "go test ./...", nil, []string{"github.com/o/r/x"}, "looks like an import path"},
		{"go file as package dir", "go test ./...", nil, []string{"tests/foo.rs"}, "is not a directory"},
		{"go inner wildcard", "go test ./...", nil, []string{"pkg/.../x"}, "only pattern allowed"},
		{"go missing pattern base", "go test ./...", nil, []string{"nope/..."}, "does not exist"},
		{"pytest node id on a directory", "pytest", []string{"tests::test_a"}, nil, "not a regular file"},
		{"missing file", "pytest", nil, []string{"tests/test_nope.py"}, "does not exist"},
		{"pytest missing node file", "pytest", []string{"tests/nope.py::test_a"}, nil, "does not exist"},
		{"pytest bad keyword", "pytest", []string{"test a"}, nil, "cannot be a pytest -k keyword"},
		{"pytest keyword operator", "pytest", []string{"not"}, nil, "cannot be a pytest -k keyword"},
		{"cargo bad filter", "cargo test", []string{"a.b"}, nil, "cargo test filters are plain names"},
		{"cargo bad package", "cargo test", nil, []string{"src/lib.rs"}, "crate names"},
		{"unknown runner", "make test", []string{"TestA"}, nil, "narrowing is supported for go test, pytest"},
		{"shell command", "go test ./... | tee out.txt", []string{"TestA"}, nil, "uses shell syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv, err := mustParse(t, tt.command).Argv(ws, Selection{Tests: tt.tests, Packages: tt.packages}, Plain)
			if !errors.Is(err, ErrNarrowing) {
				t.Fatalf("invocation %+v, err %v; want ErrNarrowing", inv, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q does not say %q", err, tt.wantMsg)
			}
		})
	}
}
