package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
)

// hostileRepo copies testdata/hostile into a new git repository: a bug in
// calc.go and a test file that plants a git filter, an fsmonitor and a hook
// in .git each time it runs.
func hostileRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for src, dst := range map[string]string{"go.mod.txt": "go.mod", "calc.go": "calc.go", "calc_test.go.txt": "calc_test.go"} {
		data, err := os.ReadFile(filepath.Join("testdata", "hostile", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "fixture"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

var runTestCall = agent.Output{ToolCalls: []agent.ToolCall{{Name: "run_test", Arguments: json.RawMessage(`{}`)}}}

func reverted(b *bundle.Bundle, where, p string) *bundle.Reverted {
	for i, r := range b.Reverted {
		if r.Where == where && r.Path == p {
			return &b.Reverted[i]
		}
	}
	return nil
}

// Test code plants a filter through .git/config + .git/info/attributes:
// no harness git call runs it, the bundle's diff is exactly the files,
// .git/config is restored after every run, and the model is told.
func TestHostileFilterNeverRunsAndGitIsRestored(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	dir := hostileRepo(t)
	configBefore, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
	canary := filepath.Join(t.TempDir(), "filter-ran")
	m := &recording{scripted: scripted{outs: []agent.Output{
		patchCall("--- a/calc.go\n+++ b/calc.go\n@@ -5,3 +5,3 @@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + b\n }\n"),
		runTestCall,
		{Message: "## Summary\nAdd adds.\n## Root cause\nsubtraction\n## Assumptions\nnone"},
	}}}
	out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", TestEnv: []string{"HOSTILE_CANARY"}}, Deps{Model: script(m), Environ: append(os.Environ(), "HOSTILE_CANARY="+canary)})
	if err != nil {
		t.Fatal(err)
	}
	b := out.Bundle
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("a filter, fsmonitor or hook planted by test code ran in the harness's git")
	}
	if b.Status != bundle.StatusFixed {
		t.Fatalf("status %s, warnings %v", b.Status, b.Warnings)
	}
	// The diff is the files' bytes: the fix in lower case, as written.
	if !strings.Contains(b.Diff, "+\treturn a + b\n") || strings.Contains(b.Diff, "RETURN") {
		t.Fatalf("the bundle's diff is not the file:\n%s", b.Diff)
	}
	disk, _ := os.ReadFile(filepath.Join(dir, "calc.go"))
	if len(b.Files) != 1 || string(b.Files[0].Content) != string(disk) {
		t.Fatalf("files %+v", b.Files)
	}
	configAfter, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
	if string(configAfter) != string(configBefore) {
		t.Fatalf(".git/config was not restored:\n%s", configAfter)
	}
	for _, p := range []string{".git/info/attributes", ".git/hooks/pre-commit"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	// The baseline and the validation run on clean checkouts with a .git of
	// their own: what test code writes there never reaches this one.
	for _, after := range []string{"initial run", "run_test call 1"} {
		found := false
		for _, r := range b.Reverted {
			if strings.HasPrefix(r.After, after) && r.Path == ".git/config" && r.Restored {
				found = true
			}
		}
		if !found {
			t.Errorf("no restored .git/config recorded after %s: %+v", after, b.Reverted)
		}
	}
	for _, r := range b.Reverted {
		if r.After == "baseline" || r.After == "validation" {
			t.Errorf("a clean-checkout run changed the workspace's .git: %+v", r)
		}
	}
	// The model read about it in run_test's result.
	last := m.reqs[len(m.reqs)-1].Messages
	if res := last[len(last)-1]; !strings.Contains(res.Text, "[mini-agent harness]") || !strings.Contains(res.Text, ".git/config modified (undone)") {
		t.Fatalf("run_test result lacks the note: %q", res.Text)
	}
}

// Read-only: test code writes a hook and workspace files during explain;
// both are undone after the run, recorded, and the run says so.
func TestExplainUndoesWhatTestCodeWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	dir := hostileRepo(t)
	canary := filepath.Join(t.TempDir(), "hook-ran")
	calcBefore, _ := os.ReadFile(filepath.Join(dir, "calc.go"))
	m := &scripted{outs: []agent.Output{
		runTestCall,
		{Message: "## Summary\nAdd subtracts.\n## Root cause\nsubtraction\n## Assumptions\nnone"},
	}}
	out, err := Run(context.Background(), Job{Mode: agent.ModeExplain, Workdir: dir, TestCommand: "go test ./...", TestEnv: []string{"HOSTILE_CANARY", "HOSTILE_WRITE"}}, Deps{Model: script(m), Environ: append(os.Environ(), "HOSTILE_CANARY="+canary, "HOSTILE_WRITE=1")})
	if err != nil {
		t.Fatal(err)
	}
	b := out.Bundle
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
		t.Fatal("the hook written in a read-only run is still there")
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned.txt")); err == nil {
		t.Fatal("the file written in a read-only run is still there")
	}
	if calc, _ := os.ReadFile(filepath.Join(dir, "calc.go")); string(calc) != string(calcBefore) {
		t.Fatalf("calc.go was not restored:\n%s", calc)
	}
	if r := reverted(b, ".git", ".git/hooks/pre-commit"); r == nil || !r.Restored {
		t.Errorf("hook not recorded: %+v", b.Reverted)
	}
	for _, p := range []string{"pwned.txt", "calc.go"} {
		if r := reverted(b, "workspace", p); r == nil || !r.Restored {
			t.Errorf("%s not recorded: %+v", p, b.Reverted)
		}
	}
	// Everything was undone: the explanation stands, with the record and a
	// warning, never silently.
	if b.Status != bundle.StatusExplained || b.Diff != "" || !strings.Contains(strings.Join(b.Warnings, "\n"), "undone") {
		t.Fatalf("status %s diff %q warnings %v", b.Status, b.Diff, b.Warnings)
	}
	if !strings.Contains(out.Summary, "undone") {
		t.Errorf("the summary does not say what was undone:\n%s", out.Summary)
	}
}
