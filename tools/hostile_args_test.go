package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
)

// hostileValues are argument values a confused or hostile model sends.
var hostileValues = []string{
	`null`, `true`, `0`, `-1`, `1e308`, `-9223372036854775808`, `9223372036854775807`, `1.5`, `"-1"`, `"1e9"`,
	`""`, `" "`, `"."`, `".."`, `"/"`, `"\\"`, `"C:\\x"`, `"\\\\srv\\share"`, `"\u0000"`, `"a\u0000b"`,
	`".git"`, `".GIT/config"`, `"./.git/../.git/config"`, `"@runs"`, `"@runs/"`, `"@runs/../x"`, `"@runs/-1.log"`,
	`"@runs/99999999999999999999.log"`, `"` + strings.Repeat("a/", 3000) + `"`, `"` + strings.Repeat("x", 70000) + `"`,
	`"*"`, `"**"`, `"[" `, `"["`, `"(?P<"`, `"\\p{"`, `"a{1000}{1000}"`, `"^$"`, `"(?s).*"`,
	`[]`, `[null]`, `[""]`, `["-v"]`, `["a;b"]`, `[1,2]`, `{}`, `{"a":1}`, `"\ud800"`, `"é\u200b"`,
}

// Every tool answers every hostile argument with a result or a clean Go
// error; none panics, and nothing outside the workspace changes.
func TestToolsSurviveHostileArguments(t *testing.T) {
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
		NewRunTest(ws, RunTestConfig{Command: fakeGo + " test ./..."})}
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

// argFileWorkspace is a workspace holding "@args.txt" (what pytest would
// read as more arguments) and a pytest command over it.
func argFileWorkspace(t *testing.T) (*Workspace, testCommand) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "@args.txt"), []byte("-p\nevil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := OpenWorkspace(dir, WorkspaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	cmd, err := parseTestCommand("pytest")
	if err != nil {
		t.Fatal(err)
	}
	return ws, cmd
}

// pytest (8.2+) reads "@file" arguments as more arguments, flags included:
// a narrowing entry may not start with '@' any more than with '-'.
func TestNarrowingRefusesArgumentFiles(t *testing.T) {
	t.Parallel()
	ws, cmd := argFileWorkspace(t)
	for _, c := range []struct{ tests, packages []string }{
		{packages: []string{"@args.txt"}},
		{tests: []string{"@args.txt::test_a"}},
	} {
		argv, _, err := cmd.buildArgv(ws, c.tests, c.packages)
		if !errors.Is(err, ErrNarrowing) || !strings.Contains(err.Error(), "'@'") {
			t.Errorf("tests %q packages %q: argv %q, err %v; want a refusal naming '@'", c.tests, c.packages, argv, err)
		}
	}
}

// "./@file" is the way to name such a path: it must reach the runner with
// its "./", not cleaned back into an argument file.
func TestNarrowingKeepsDotSlashBeforeAt(t *testing.T) {
	t.Parallel()
	ws, cmd := argFileWorkspace(t)
	for _, c := range []struct{ tests, packages []string }{
		{packages: []string{"./@args.txt"}},
		{tests: []string{"./@args.txt::test_a"}},
	} {
		argv, _, err := cmd.buildArgv(ws, c.tests, c.packages)
		if err != nil {
			t.Fatalf("tests %q packages %q: %v", c.tests, c.packages, err)
		}
		for _, a := range argv {
			if strings.HasPrefix(a, "@") {
				t.Errorf("argv %q holds an argument file", argv)
			}
		}
	}
}
