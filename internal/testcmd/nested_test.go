package testcmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// nestedWorkspace is a workspace with a root module and two nested ones,
// gopls/ and tools/sub/, each with packages.
func nestedWorkspace(t *testing.T) Workspace {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "a/a.go", "gopls/go.mod", "gopls/internal/x/x.go", "gopls/y/y_test.go",
		"tools/sub/go.mod", "tools/sub/z/z.go", "other/o.go"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return openDir(t, dir)
}

// TestGoDirRecognised: go -C DIR test (and go test -C DIR) is go test,
// with -C kept first and everything added after "test".
func TestGoDirRecognised(t *testing.T) {
	t.Parallel()
	ws := nestedWorkspace(t)
	for _, tt := range []struct {
		line string
		sel  Selection
		form Form
		want []string
	}{
		{"go -C gopls test ./...", Selection{Tests: []string{"TestA"}}, Plain,
			[]string{"go", "-C", "gopls", "test", "-run", "^(TestA)$", "./..."}},
		{"go test -C gopls ./...", Selection{Tests: []string{"TestA"}}, Plain,
			[]string{"go", "test", "-C", "gopls", "-run", "^(TestA)$", "./..."}},
		{"go -C=gopls test -v ./...", Selection{Tests: []string{"TestA/b c"}}, Plain,
			[]string{"go", "-C=gopls", "test", "-v", "-run", "^TestA$/^b_c$", "./..."}},
		{"go -C gopls test ./...", Selection{}, GoJSON, []string{"go", "-C", "gopls", "test", "-json", "./..."}},
		{"go test -C gopls ./...", Selection{}, Verbose, []string{"go", "test", "-C", "gopls", "-v", "./..."}},
		// Workspace paths become the module's own.
		{"go -C gopls test ./...", Selection{Packages: []string{"gopls/internal/x", "./gopls/y/...", "gopls"}}, Plain,
			[]string{"go", "-C", "gopls", "test", "./internal/x", "./y/...", "."}},
		{"go -C gopls test ./...", Selection{Packages: []string{"gopls/y/y_test.go"}}, Plain,
			[]string{"go", "-C", "gopls", "test", "./y"}},
		{"go -C gopls test ./...", Selection{Packages: []string{"./..."}}, Plain,
			[]string{"go", "-C", "gopls", "test", "./..."}},
		{"go -C ./tools/sub/ test ./...", Selection{Packages: []string{"tools/sub/z"}}, Plain,
			[]string{"go", "-C", "./tools/sub/", "test", "./z"}},
		{"go -C . test ./...", Selection{Packages: []string{"a"}}, Plain, []string{"go", "-C", ".", "test", "./a"}},
	} {
		c := mustParse(t, tt.line)
		if c.Runner() != Go || !c.Narrowable() {
			t.Errorf("%q: runner %v, narrowable %v", tt.line, c.Runner(), c.Narrowable())
			continue
		}
		inv, err := c.Argv(ws, tt.sel, tt.form)
		if err != nil {
			t.Errorf("%q %+v: %v", tt.line, tt.sel, err)
			continue
		}
		if diff := cmp.Diff(tt.want, inv.Argv); diff != "" {
			t.Errorf("%q %+v (-want +got):\n%s", tt.line, tt.sel, diff)
		}
		un := inv.Uncached()
		if i := slices.Index(un.Argv, "test"); i < 0 || !slices.Contains(un.Argv[i:], "-count=1") || slices.Index(un.Argv, "-count=1") < slices.Index(un.Argv, "gopls") && slices.Contains(un.Argv, "gopls") {
			t.Errorf("%q: uncached %q", tt.line, un.Argv)
		}
		st, err := inv.Stress(Stress{Count: 3})
		if err != nil || !slices.Contains(st.Argv, "-count=3") || st.Argv[0] != "go" {
			t.Errorf("%q: stressed %q %v", tt.line, st.Argv, err)
		}
		if len(inv.Steps()) != 1 {
			t.Errorf("%q: %d steps", tt.line, len(inv.Steps()))
		}
	}
}

// TestGoDirRefusals: a package outside the -C directory, or any package
// when the directory is not one of the workspace's, is refused clearly.
func TestGoDirRefusals(t *testing.T) {
	t.Parallel()
	ws := nestedWorkspace(t)
	for _, tt := range []struct {
		line string
		pkg  string
		want string
	}{
		{"go -C gopls test ./...", "other", `"other" is outside gopls, the directory the test command runs go test in`},
		{"go -C gopls test ./...", "a/a.go", "is outside gopls"},
		{"go -C gopls test ./...", ".", "is outside gopls"},
		{"go -C gopls test ./...", "goplsx", "does not exist"},
		{"go -C /elsewhere test ./...", "a", "is absolute"},
		{"go -C ../up test ./...", "a", "is outside the workspace"},
	} {
		_, err := mustParse(t, tt.line).Argv(ws, Selection{Packages: []string{tt.pkg}}, Plain)
		if !errors.Is(err, ErrNarrowing) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q, package %q: %v, want %q", tt.line, tt.pkg, err, tt.want)
		}
	}
	// Test names alone are fine whatever the directory.
	if _, err := mustParse(t, "go -C /elsewhere test ./...").Argv(ws, Selection{Tests: []string{"TestX"}}, Plain); err != nil {
		t.Errorf("tests with an absolute -C: %v", err)
	}
}

// TestSuite: "A && B" of simple commands is a suite, run without a shell;
// a narrowing goes to each part, a package to the part holding it.
func TestSuite(t *testing.T) {
	t.Parallel()
	ws := nestedWorkspace(t)
	c := mustParse(t, "go test ./... && go -C gopls test ./... && go -C tools/sub test -race ./...")
	if c.Shell() || c.Runner() != Go || !c.Narrowable() {
		t.Fatalf("shell %v runner %v narrowable %v", c.Shell(), c.Runner(), c.Narrowable())
	}
	if diff := cmp.Diff([]string{".", "gopls", "tools/sub"}, c.Dirs()); diff != "" {
		t.Errorf("Dirs (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		sel  Selection
		want [][]string
	}{
		{Selection{}, [][]string{{"go", "test", "./..."}, {"go", "-C", "gopls", "test", "./..."},
			{"go", "-C", "tools/sub", "test", "-race", "./..."}}},
		{Selection{Tests: []string{"TestA"}}, [][]string{{"go", "test", "-run", "^(TestA)$", "./..."},
			{"go", "-C", "gopls", "test", "-run", "^(TestA)$", "./..."},
			{"go", "-C", "tools/sub", "test", "-race", "-run", "^(TestA)$", "./..."}}},
		{Selection{Packages: []string{"gopls/internal/x"}}, [][]string{{"go", "-C", "gopls", "test", "./internal/x"}}},
		{Selection{Packages: []string{"a", "tools/sub/z"}, Tests: []string{"TestB"}},
			[][]string{{"go", "test", "-run", "^(TestB)$", "./a"}, {"go", "-C", "tools/sub", "test", "-race", "-run", "^(TestB)$", "./z"}}},
		{Selection{Packages: []string{"./..."}}, [][]string{{"go", "test", "./..."}, {"go", "-C", "gopls", "test", "./..."},
			{"go", "-C", "tools/sub", "test", "-race", "./..."}}},
	} {
		inv, err := c.Argv(ws, tt.sel, Plain)
		if err != nil {
			t.Errorf("%+v: %v", tt.sel, err)
			continue
		}
		if diff := cmp.Diff(tt.want, inv.Steps()); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tt.sel, diff)
		}
		if len(inv.Steps()) > 1 && !slices.Contains(inv.Argv, "&&") {
			t.Errorf("%+v: the shown argv %q does not separate the commands", tt.sel, inv.Argv)
		}
	}
	// Every form, cache switch and stress applies to each part.
	inv, err := c.Argv(ws, Selection{Tests: []string{"TestA"}}, GoJSON)
	if err != nil || inv.Form != GoJSON {
		t.Fatalf("GoJSON: %v %v", inv, err)
	}
	inv, err = inv.Uncached().Stress(Stress{Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range inv.Steps() {
		if !slices.Contains(step, "-json") || !slices.Contains(step, "-count=2") || slices.Contains(step, "&&") {
			t.Errorf("step %q lacks -json or -count=2", step)
		}
	}
	// A package in no part's directory.
	c2 := mustParse(t, "go -C gopls test ./... && go -C tools/sub test ./...")
	if _, err := c2.Argv(ws, Selection{Packages: []string{"a"}}, Plain); !errors.Is(err, ErrNarrowing) || !strings.Contains(err.Error(), "none of the directories") {
		t.Errorf("package outside every part: %v", err)
	}
}

// TestSuiteParsing: which lines are suites, which stay shell syntax.
func TestSuiteParsing(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		line       string
		shell      bool
		narrowable bool
		steps      int
	}{
		{"go test ./... && go -C b test ./...", false, true, 2},
		{"  go vet ./...&&go test ./...  ", false, false, 2}, // two runners: runs, cannot be narrowed
		{"npm --prefix web test && npm --prefix docs test", false, false, 2},
		{"go test -run 'A&&B' ./...", false, true, 1}, // quoted: one command
		{`go test -run "A&&B" ./... && go -C b test`, false, true, 2},
		{"cd gopls && go test ./...", true, false, 1},   // cd is the shell's
		{"export X=1 && go test ./...", true, false, 1}, // so is export
		{"go test ./... && echo $HOME", true, false, 1}, // an expansion
		{"go test ./... || go test ./b/...", true, false, 1},
		{"go test ./... & go test ./b/...", true, false, 1},
		{"go test ./... && && go test", true, false, 1}, // an empty part
		{"go test ./... &&", true, false, 1},
		{"go test ./...\ngo -C b test ./...", true, false, 1}, // lines are a script
	} {
		c, err := Parse(tt.line)
		if err != nil {
			t.Errorf("%q: %v", tt.line, err)
			continue
		}
		if c.Shell() != tt.shell || c.Narrowable() != tt.narrowable {
			t.Errorf("%q: shell %v narrowable %v, want %v %v", tt.line, c.Shell(), c.Narrowable(), tt.shell, tt.narrowable)
		}
		inv, err := c.Argv(nil, Selection{}, Plain)
		if err != nil {
			t.Errorf("%q: %v", tt.line, err)
			continue
		}
		if n := len(inv.Steps()); n != tt.steps {
			t.Errorf("%q: %d steps %q, want %d", tt.line, n, inv.Steps(), tt.steps)
		}
	}
	// A suite that cannot be narrowed says so.
	_, err := mustParse(t, "go vet ./... && go test ./...").Argv(nil, Selection{Tests: []string{"TestA"}}, Plain)
	if !errors.Is(err, ErrNarrowing) || !strings.Contains(err.Error(), "cannot be narrowed") {
		t.Errorf("narrowing a mixed suite: %v", err)
	}
}

// TestCdAdvice: "cd DIR && go test ..." stays shell syntax (cd is the
// shell's), and the refusal points to go -C DIR test.
func TestCdAdvice(t *testing.T) {
	t.Parallel()
	c := mustParse(t, "cd gopls && go test -count=1 ./internal/...")
	_, err := c.Argv(nil, Selection{Tests: []string{"TestX"}}, Plain)
	want := "`go -C gopls test -count=1 ./internal/...`"
	if !errors.Is(err, ErrNarrowing) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "shell syntax") {
		t.Fatalf("refusal %v, want it to point to %s", err, want)
	}
	if !strings.Contains(c.NarrowingHelp(), want) || !strings.Contains(c.Advice(), want) {
		t.Errorf("help %q, advice %q", c.NarrowingHelp(), c.Advice())
	}
	// The advice is itself a command that narrows.
	if s := mustParse(t, "go -C gopls test -count=1 ./internal/..."); !s.Narrowable() {
		t.Error("the advised command cannot be narrowed")
	}
	for _, line := range []string{"cd gopls && npm test", "cd a && cd b && go test", "cd 'my dir' && go test", "go test ./... | tee x"} {
		if a := mustParse(t, line).Advice(); a != "" {
			t.Errorf("%q: advice %q", line, a)
		}
	}
}

// TestSuiteOnRealGo runs a narrowed suite over two real modules, each
// step in turn as run_test does (proc.Spec.Then): the failing test of the
// nested module is found and named by NotPassed's contrary (it ran).
func TestSuiteOnRealGo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH")
	}
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/root\n\ngo 1.22\n")
	write("r_test.go", "package root\n\nimport \"testing\"\n\nfunc TestRoot(t *testing.T) {}\n")
	write("sub/go.mod", "module example.com/sub\n\ngo 1.22\n")
	write("sub/s_test.go", "package sub\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {}\n\nfunc TestSubFails(t *testing.T) { t.Fatal(\"no\") }\n")
	ws := openDir(t, dir)
	c := mustParse(t, "go test ./... && go -C sub test ./...")
	inv, err := c.Argv(ws, Selection{Tests: []string{"TestSub"}, Packages: []string{"sub"}}, Verbose)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"go", "-C", "sub", "test", "-v", "-run", "^(TestSub)$", "."}}, inv.Steps()); diff != "" {
		t.Fatalf("steps (-want +got):\n%s", diff)
	}
	inv, err = c.Argv(ws, Selection{Tests: []string{"TestRoot", "TestSub"}}, Verbose)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, step := range inv.Uncached().Steps() {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, step[0], step[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		b, err := cmd.CombinedOutput()
		cancel()
		out.Write(b)
		if err != nil {
			t.Fatalf("%q: %v\n%s", step, err, b)
		}
	}
	if got := inv.NotPassed(bytes.NewReader(out.Bytes())); len(got) != 0 {
		t.Fatalf("NotPassed %v after both modules ran:\n%s", got, out.String())
	}
}
