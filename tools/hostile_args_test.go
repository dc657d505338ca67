package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/testcmd"
)

// hostileValues are argument values a confused or hostile model sends.
var hostileValues = []string{
	`null`, `true`, `0`, `-1`, `1e308`, `-9223372036854775808`, `9223372036854775807`, `1.5`, `"-1"`, `"1e9"`,
	`""`, `" "`, `"."`, `".."`, `"/"`, `"\\"`, `"C:\\x"`, `"\\\\srv\\share"`, `"\u0000"`, `"a\u0000b"`,
	`".git"`, `".GIT/config"`, `"./.git/../.git/config"`, `"@runs"`, `"@runs/"`, `"@runs/../x"`, `"@runs/-1.log"`,
	`"@runs/99999999999999999999.log"`, `"` + strings.Repeat("a/", 3000) + `"`, `"` + strings.Repeat("x", 70000) + `"`,
	`"*"`, `"**"`, `"[" `, `"["`, `"(?P<"`, `"\\p{"`, `"a{1000}{1000}"`, `"^$"`, `"(?s).*"`,
	`[]`, `[null]`, `[""]`, `["-v"]`, `["a;b"]`, `[1,2]`, `{}`, `{"a":1}`, `"\ud800"`, `"é\u200b"`,
	`"./-exec=./evil.sh"`, `"./-toolexec=./evil.sh"`, `"./-modfile=./x.go"`, `"./-o=.git/hooks/pre-commit"`,
	`["./-o=x.go"]`, `"./-pevil"`, `"./--config=evil.js"`, `"./-Zx"`, `"././-exec=x"`,
}

// Every tool answers every hostile argument with a result or a clean Go
// error; none panics, and nothing outside the workspace changes.
func TestToolsSurviveHostileArguments(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{"go.mod": "module x\n\ngo 1.22\n", "x.go": "package x\n", "x_test.go": "package x\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := OpenWorkspace(dir, WorkspaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	// A stand-in named "go": the narrowing is mapped as for go test, and
	// each run returns at once.
	fakeGo := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(fakeGo, []byte("#!/bin/sh\necho \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tools := []agent.Tool{NewReadFile(ws), NewSearch(ws), NewApplyPatch(ws),
		NewRunTest(ws, RunTestConfig{Command: mustParse(t, fakeGo+" test ./...")})}
	fields := map[string][]string{
		"read_file":   {"path", "start_line", "end_line"},
		"search":      {"query", "path", "max_results"},
		"apply_patch": {"patch"},
		"run_test":    {"tests", "packages"},
	}
	ctx := context.Background()
	for _, tool := range tools {
		name := tool.Spec().Name
		var argsList []json.RawMessage
		for _, v := range hostileValues {
			argsList = append(argsList, json.RawMessage(v))
			for _, f := range fields[name] {
				argsList = append(argsList, json.RawMessage(`{"`+f+`":`+v+`}`))
			}
			if name == "run_test" {
				argsList = append(argsList, json.RawMessage(`{"tests":[`+v+`],"packages":[`+v+`]}`))
			} else if name != "apply_patch" {
				argsList = append(argsList, json.RawMessage(`{"path":"x.go","query":"x","start_line":`+v+`,"end_line":`+v+`,"max_results":`+v+`}`))
			}
		}
		for _, args := range argsList {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s(%.200s) panicked: %v", name, args, p)
					}
				}()
				_, _ = tool.Execute(ctx, args)
			}()
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Fatalf("the workspace changed: %v", entries)
	}
}

// macOS and Windows file systems ignore case: ".GITHUB/workflows/ci.yml"
// writes .github/workflows/ci.yml there, so protected globs match whatever
// the case.
func TestProtectedGlobsIgnoreCase(t *testing.T) {
	t.Parallel()
	ws, err := OpenWorkspace(t.TempDir(), WorkspaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, p := range []string{".GITHUB/workflows/ci.yml", ".GitHub/x", "sub/.ENV", "a/.Env.local"} {
		if _, err := ws.CheckWrite(p); !errors.Is(err, ErrForbidden) {
			t.Errorf("CheckWrite(%q) = %v, want ErrForbidden", p, err)
		}
	}
	if _, err := ws.CheckWrite("github/x.go"); err != nil {
		t.Errorf("an ordinary path was refused: %v", err)
	}
}

// flagInjections are narrowing entries that become flags once "./" is
// cleaned away or a symlink is resolved (issue 9, finding 4). Each names a
// file, directory or link the workspace of TestNarrowingNeverBecomesAFlag
// holds, so an existence check alone does not stop it.
var flagInjections = []struct {
	runner   string // the configured command, with the stub runner first
	tests    []string
	packages []string
}{
	{runner: "go test ./...", packages: []string{"./-exec=./evil.sh"}},
	{runner: "go test ./...", packages: []string{"./-toolexec=./evil.sh"}},
	{runner: "go test ./...", packages: []string{"./-modfile=./evil.mod"}},
	{runner: "go test ./...", packages: []string{"./-o=.git/hooks/pre-commit"}},
	{runner: "go test ./...", packages: []string{"././-exec=./evil.sh"}},
	{runner: "go test ./...", packages: []string{"./-exec=./evil.sh/..."}},
	{runner: "go test ./...", packages: []string{"golink"}}, // symlink to "-exec=./evil.sh"
	{runner: "go test ./...", packages: []string{"pkg", "./-exec=./evil.sh"}},
	{runner: "pytest", packages: []string{"./-pevil"}},
	{runner: "pytest", packages: []string{"plink"}}, // symlink to "-pevil"
	{runner: "pytest", tests: []string{"./-pevil::test_a"}},
	{runner: "pytest", tests: []string{"plink::test_a"}},
	{runner: "npx jest", packages: []string{"./--config=evil.js"}},
	{runner: "npx vitest run", packages: []string{"./--config=evil.js"}},
	{runner: "npm test", packages: []string{"./--config=evil.js"}},
	{runner: "cargo test", packages: []string{"./-Zunstable-options"}},
	{runner: "cargo test", packages: []string{"./--config=evil.toml"}},
}

// flagWorkspace holds every name flagInjections points at, and a bin
// directory of stub runners that record that they were started.
func flagWorkspace(t *testing.T) (ws *Workspace, bin, marker string) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"-pevil", "--config=evil.js", "--config=evil.toml", "-Zunstable-options",
		"-exec=./evil.sh/x.go", "-toolexec=./evil.sh/x.go", "-modfile=./evil.mod/x.go", "pkg/x.go", "evil.sh"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"golink": "-exec=./evil.sh", "plink": "-pevil"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := OpenWorkspace(dir, WorkspaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	bin = t.TempDir()
	marker = filepath.Join(t.TempDir(), "started")
	for _, name := range []string{"go", "pytest", "npx", "npm", "cargo"} {
		stub := "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '" + marker + "'\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return ws, bin, marker
}

// A narrowing entry that would reach the runner as a flag is refused with
// INVALID_ARGUMENT naming the '-', and no process starts.
func TestNarrowingNeverBecomesAFlag(t *testing.T) {
	t.Parallel()
	ws, bin, marker := flagWorkspace(t)
	for _, c := range flagInjections {
		rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, filepath.Join(bin, c.runner))})
		args, _ := json.Marshal(map[string][]string{"tests": c.tests, "packages": c.packages})
		res, err := rt.Execute(context.Background(), args)
		if err != nil {
			t.Fatalf("%s %s: %v", c.runner, args, err)
		}
		if !res.IsError || res.Code != agent.CodeInvalidArgument || !strings.Contains(res.Text, "'-'") {
			t.Errorf("%s %s: got %+v; want INVALID_ARGUMENT naming '-'", c.runner, args, res)
		}
		if b, err := os.ReadFile(marker); err == nil {
			t.Fatalf("%s %s started the runner with argv:\n%s", c.runner, args, b)
		}
	}
}

// The attack run for real: go test with -exec or -o smuggled in through
// "./" would run evil.sh (creating a canary) or write a git hook. Both are
// refused and neither effect happens; the same module narrowed to "./." or
// "./..." still runs.
func TestNarrowingFlagsHaveNoEffectOnRealGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH")
	}
	dir := t.TempDir()
	canary := filepath.Join(t.TempDir(), "canary")
	files := map[string]string{
		"go.mod":     "module x\n\ngo 1.22\n",
		"x_test.go":  "package x\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
		"evil.sh":    "#!/bin/sh\ntouch '" + canary + "'\nexec \"$@\"\n",
		"evil.mod":   "module x\n\ngo 1.22\n",
		".git/hooks": "",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if body == "" {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := OpenWorkspace(dir, WorkspaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "go test -count=1 ./..."), Timeout: 2 * time.Minute})
	ctx := context.Background()
	for _, p := range []string{"./-exec=./evil.sh", "./-toolexec=./evil.sh", "./-o=.git/hooks/pre-commit", "./-modfile=./evil.mod"} {
		out, err := rt.Run(ctx, testcmd.Selection{Packages: []string{p}}, testcmd.Plain)
		if !errors.Is(err, testcmd.ErrNarrowing) {
			t.Errorf("packages [%q]: ran %q (exit %d), err %v; want ErrNarrowing", p, out.Argv, out.ExitCode, err)
		}
	}
	if _, err := os.Stat(canary); err == nil {
		t.Error("evil.sh ran: the canary exists")
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a git hook was written")
	}
	out, err := rt.Run(ctx, testcmd.Selection{Tests: []string{"TestX"}, Packages: []string{"./."}}, testcmd.Plain)
	if err != nil || !out.Passed() {
		t.Fatalf("the ordinary narrowing failed: %v %+v", err, out)
	}
}
