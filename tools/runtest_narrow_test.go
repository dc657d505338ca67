package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
)

func TestDisplayArgv(t *testing.T) {
	t.Parallel()
	got := displayArgv([]string{"go", "test", "-run", "^(TestA|TestB)$", "./...", "it's", ""})
	want := `go test -run '^(TestA|TestB)$' ./... 'it'\''s' ''`
	if got != want {
		t.Fatalf("displayArgv = %s, want %s", got, want)
	}
}

// The narrowing's paths are checked against the real workspace (its rules
// for "..", absolute paths, .git and symlinks): each refusal is an
// INVALID_ARGUMENT answer naming the reason, and nothing runs.
func TestRunTestNarrowingPathsInTheWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"pkg/x_test.go", "tests/test_x.py", ".git/config"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "outside")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../", filepath.Join(dir, "pkg", "up")); err != nil {
		t.Fatal(err)
	}
	ws := openWS(t, dir)
	// Runners that would record being started: none may start.
	bin := t.TempDir()
	marker := filepath.Join(t.TempDir(), "started")
	for _, name := range []string{"go", "pytest"} {
		stub := "#!/bin/sh\necho \"$@\" >> '" + marker + "'\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name, runner, args, wantMsg string
	}{
		{"dotdot", "go", `{"packages":["../x"]}`, "'..' is refused"},
		{"inner dotdot", "go", `{"packages":["pkg/../../x"]}`, "'..' is refused"},
		{"absolute", "go", `{"packages":["/etc"]}`, "absolute paths are refused"},
		{"git dir", "go", `{"packages":[".git"]}`, ".git directory is off limits"},
		{"symlink out", "go", `{"packages":["outside/x"]}`, "outside the workspace"},
		{"relative symlink out", "go", `{"packages":["pkg/up/etc"]}`, "leaves the workspace"},
		{"pytest node id escaping", "pytest", `{"tests":["../x.py::test_a"]}`, "'..' is refused"},
		{"pytest node id in .git", "pytest", `{"tests":[".git/config::test_a"]}`, ".git directory is off limits"},
	} {
		line := filepath.Join(bin, tt.runner)
		if tt.runner == "go" {
			line += " test ./..."
		}
		rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, line)})
		res, err := rt.Execute(context.Background(), json.RawMessage(tt.args))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !res.IsError || res.Code != agent.CodeInvalidArgument || !strings.Contains(res.Text, tt.wantMsg) {
			t.Errorf("%s: %+v; want INVALID_ARGUMENT saying %q", tt.name, res, tt.wantMsg)
		}
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a refused narrowing started the runner:\n%s", b)
	}
	// The same workspace narrows fine to what is inside it.
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, filepath.Join(bin, "go")+" test ./...")})
	out, err := rt.Execute(context.Background(), json.RawMessage(`{"packages":["pkg"]}`))
	if err != nil || out.IsError {
		t.Fatalf("narrowing to pkg: %+v, %v", out, err)
	}
}
