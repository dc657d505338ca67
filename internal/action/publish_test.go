package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/pipeline"
)

// TestTwoJobRecipe: a read-only job runs `mini-agent fix --bundle`, a job
// with write permissions runs `mini-agent publish BUNDLE` for the same event.
func TestTwoJobRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc := newScene(t, "")
	sc.s.AddRun(testRepo, ghtest.Run{ID: 303, HeadBranch: "main", HeadSHA: sc.fake, Jobs: []ghtest.Job{
		{ID: 9001, Name: "test", FailedStep: "Run go test ./...", Log: sc.failingLog(t)}}})
	logFile := filepath.Join(sc.tmp, "failure.log")
	writeFile(t, logFile, sc.failingLog(t))
	bundlePath := filepath.Join(sc.tmp, "bundle.json")

	// The read-only job: what `mini-agent fix --bundle` runs.
	model, err := provider.Select(provider.Choice{Config: provider.Config{Provider: provider.ProviderScript, ScriptPath: sc.script}})
	if err != nil {
		t.Fatal(err)
	}
	out0, err := pipeline.Run(t.Context(), pipeline.Job{Mode: agent.ModeFix, Workdir: sc.ws, TestCommand: "go test ./...",
		FailureLog: logFile, BundlePath: bundlePath}, pipeline.Deps{Model: model})
	if err != nil || out0.Bundle.Status != bundle.StatusFixed {
		t.Fatalf("fix: %v %+v", err, out0)
	}
	if n := len(sc.s.Requests()); n != 0 {
		t.Errorf("the read-only job made %d GitHub requests", n)
	}
	raw, err := os.ReadFile(bundlePath)
	if err != nil {
		t.Fatal(err)
	}

	// A tampered bundle (the change moved under .github/) is refused whole.
	tampered := filepath.Join(sc.tmp, "tampered.json")
	writeFile(t, tampered, strings.ReplaceAll(string(raw), "cart.go", ".github/workflows/cart.go"))
	env, vars, stdout := sc.env(t, "workflow_run", workflowRunPayload(303, sc.head, "main", nil), nil)
	if code := publishMain(t.Context(), env, tampered, ""); code != exitcode.Failed {
		t.Errorf("tampered bundle: exit %d, want %d\n%s", code, exitcode.Failed, stdout)
	}
	if out := outputs(t, vars["GITHUB_OUTPUT"]); out["status"] != "failed" || !strings.Contains(stdout.String(), "protected path") {
		t.Errorf("tampered bundle: outputs %v\n%s", out, stdout)
	}
	for _, r := range sc.s.Requests() {
		if r.Method != "GET" {
			t.Errorf("a refused bundle caused %s %s", r.Method, r.Path)
		}
	}

	env, vars, stdout = sc.env(t, "workflow_run", workflowRunPayload(303, sc.head, "main", nil), nil)
	if code := publishMain(t.Context(), env, bundlePath, ""); code != 0 {
		t.Fatalf("publish: exit %d\n%s", code, stdout)
	}
	out := outputs(t, vars["GITHUB_OUTPUT"])
	pulls := sc.s.Pulls(testRepo)
	if out["status"] != "fixed" || len(pulls) != 1 || out["pr-url"] != "https://github.com/octo-org/shop/pull/1" {
		t.Fatalf("outputs %v, pulls %+v", out, pulls)
	}
	if !strings.Contains(pulls[0].Body, "Failing run: https://github.com/octo-org/shop/actions/runs/303") ||
		!strings.Contains(sc.s.Files(testRepo, out["branch"])["cart.go"].Content, "i := 0") {
		t.Errorf("PR body or branch content wrong:\n%s", pulls[0].Body)
	}

	// The same bundle published for a later event at another commit is refused.
	other := strings.Repeat("c", 40)
	env, _, stdout = sc.env(t, "workflow_run", workflowRunPayload(303, other, "main", nil), nil)
	if code := publishMain(t.Context(), env, bundlePath, ""); code != exitcode.Failed || !strings.Contains(stdout.String(), "made at commit") {
		t.Errorf("bundle for another commit: exit %d\n%s", code, stdout)
	}
}
