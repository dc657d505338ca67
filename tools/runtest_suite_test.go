package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
)

// suiteWorkspace is a repository with a Go module at the root and one in
// sub/: each test prints a marker, TestSubFails fails.
func suiteWorkspace(t *testing.T) *Workspace {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":          "module example.com/root\n\ngo 1.22\n",
		"r_test.go":       "package root\n\nimport \"testing\"\n\nfunc TestRoot(t *testing.T) { t.Log(\"ROOT RAN\") }\n",
		"sub/go.mod":      "module example.com/sub\n\ngo 1.22\n",
		"sub/s_test.go":   "package sub\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) { t.Log(\"SUB RAN\") }\n\nfunc TestSubFails(t *testing.T) { t.Fatal(\"SUB FAILED\") }\n",
		"sub/p/p_test.go": "package p\n\nimport \"testing\"\n\nfunc TestP(t *testing.T) { t.Log(\"P RAN\") }\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return openWS(t, dir)
}

// TestRunTestSuite: a suite ("A && B") runs without a shell, each command
// while the one before passed; a narrowing reaches each command, a package
// the module that holds it; go -C narrows like go test.
func TestRunTestSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	ws := suiteWorkspace(t)
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	suite := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "go test -count=1 -v ./... && go -C sub test -count=1 -v ./..."),
		Env: env, EnvAllow: []string{"GOWORK", "GOFLAGS"}, NoSandbox: true})
	for _, tt := range []struct {
		name, args, code string
		want, not        []string
	}{
		{"whole", `{}`, agent.CodeFailed, []string{"ROOT RAN", "SUB RAN", "P RAN", "SUB FAILED",
			"command: go test -count=1 -v ./... && go -C sub test -count=1 -v ./..."}, nil},
		{"tests in each module", `{"tests":["TestRoot","TestSub"]}`, "", []string{"ROOT RAN", "SUB RAN", "status: PASSED",
			"&& go -C sub test -count=1 -v -run '^(TestRoot|TestSub)$' ./..."}, []string{"SUB FAILED", "P RAN"}},
		{"a package of the nested module", `{"packages":["sub/p"]}`, "", []string{"P RAN", "command: go -C sub test -count=1 -v ./p"},
			[]string{"ROOT RAN", "SUB RAN", "&&"}},
		{"outside every module's directory", `{"packages":["nowhere"]}`, agent.CodeInvalidArgument, []string{"does not exist"}, nil},
	} {
		res := execute(t, suite, tt.args)
		if res.Code != tt.code {
			t.Errorf("%s: code %q, want %q:\n%s", tt.name, res.Code, tt.code, res.Text)
		}
		for _, w := range tt.want {
			if !strings.Contains(res.Text, w) {
				t.Errorf("%s: lacks %q:\n%s", tt.name, w, res.Text)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(res.Text, w) {
				t.Errorf("%s: has %q:\n%s", tt.name, w, res.Text)
			}
		}
	}
	// "&&": a failing command stops the suite.
	stop := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "go -C sub test -count=1 -v ./... && go test -count=1 -v ./..."),
		Env: env, EnvAllow: []string{"GOWORK", "GOFLAGS"}, NoSandbox: true})
	if res := execute(t, stop, `{}`); res.Code != agent.CodeFailed || strings.Contains(res.Text, "ROOT RAN") {
		t.Errorf("the command after a failing one ran (code %q):\n%s", res.Code, res.Text)
	}
}
