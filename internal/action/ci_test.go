package action

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
)

// withWorkflow commits the workflow file src in the checkout and the fake
// (the failing commit has it) and returns the fake's workflow ID.
func (sc *scene) withWorkflow(t *testing.T, src string) int64 {
	t.Helper()
	writeFile(t, sc.ws+"/.github/workflows/ci.yml", src)
	git(t, sc.ws, "add", "-A")
	git(t, sc.ws, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "ci")
	sc.head = strings.TrimSpace(git(t, sc.ws, "rev-parse", "HEAD"))
	sc.fake = sc.s.Push(testRepo, "main", map[string]string{".github/workflows/ci.yml": src})
	sc.proxy.Alias(sc.head, sc.fake)
	return sc.s.AddWorkflow(testRepo, ghtest.Workflow{Path: ".github/workflows/ci.yml"})
}

// failingRun commits the workflow file src (withWorkflow), records its
// failed run runID on main with the checkout's real failing log, and
// returns the workflow_run payload of that failure and the workflow's ID.
func (sc *scene) failingRun(t *testing.T, runID int64, src string) (map[string]any, int64) {
	t.Helper()
	wf := sc.withWorkflow(t, src)
	sc.s.AddRun(testRepo, ghtest.Run{ID: runID, HeadBranch: "main", HeadSHA: sc.fake, Jobs: []ghtest.Job{
		{ID: 7001, Name: "test", FailedStep: "Run go test ./...", Log: sc.failingLog(t)}}})
	payload := workflowRunPayload(runID, sc.head, "main", nil)
	payload["workflow_run"].(map[string]any)["workflow_id"] = wf
	return payload, wf
}

// TestActionDispatchesCIOnTheFixBranch: the workflow_run fixer publishes the
// PR, dispatches the failing workflow on the fix branch, waits for the run
// (ci-wait-minutes) and shows its failure in the PR body.
func TestActionDispatchesCIOnTheFixBranch(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc := newScene(t, "")
	payload, _ := sc.failingRun(t, 101, "name: CI\non:\n  push:\n  workflow_dispatch:\njobs:\n  test:\n    runs-on: ubuntu-latest\n")
	env, vars, stdout := sc.env(t, "workflow_run", payload, map[string]string{"ci-wait-minutes": "1"})
	env.CIPoll = 20 * time.Millisecond
	done := make(chan struct{})
	watch, stop := context.WithCancel(t.Context())
	go func() {
		defer close(done)
		for watch.Err() == nil { // until the dispatch, however slow the fixer is
			if ids := sc.s.Dispatched(testRepo); len(ids) == 1 {
				time.Sleep(50 * time.Millisecond)
				sc.s.SetRunStatus(testRepo, ids[0], "completed", "failure", ghtest.Job{ID: 8801, Name: "test",
					FailedStep: "Run go test ./...", Log: "2026-03-01T12:00:00.0000000Z --- FAIL: TestCIOnly (0.00s)\n" +
						"2026-03-01T12:00:00.0000000Z     ci_test.go:9: only CI sees this\n2026-03-01T12:00:00.0000000Z FAIL\n"})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	code := actionMain(t.Context(), env)
	stop()
	<-done
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	out := outputs(t, vars["GITHUB_OUTPUT"])
	ids := sc.s.Dispatched(testRepo)
	pulls := sc.s.Pulls(testRepo)
	if out["status"] != "fixed" || len(ids) != 1 || len(pulls) != 1 {
		t.Fatalf("outputs %v, dispatched %v, pulls %d", out, ids, len(pulls))
	}
	body := pulls[0].Body
	if !pulls[0].Draft {
		t.Error("the PR whose CI failed is not a draft")
	}
	for _, want := range []string{"❌ failed", "/actions/runs/", " ci=failed ci-workflow=", "TestCIOnly", "ci-fail-seen=1"} {
		if !strings.Contains(body, want) {
			t.Errorf("PR body lacks %q:\n%s", want, body)
		}
	}
	if !strings.Contains(stdout.String(), "::warning::CI failed on "+out["branch"]) {
		t.Errorf("no warning for the failed CI:\n%s", stdout)
	}
}

// TestActionCINotDispatchableSaysWhy: without the trigger, the PR says why
// in one line and how to enable it, and nothing is dispatched.
func TestActionCINotDispatchableSaysWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc := newScene(t, "")
	payload, _ := sc.failingRun(t, 102, "name: CI\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n")
	env, _, stdout := sc.env(t, "workflow_run", payload, nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	body := sc.s.Pulls(testRepo)[0].Body
	if !strings.Contains(body, "has no `workflow_dispatch` trigger") || !strings.Contains(body, "To enable it: add `workflow_dispatch:`") ||
		sc.s.Count("POST", "/repos/"+testRepo+"/actions/") != 0 {
		t.Errorf("PR body:\n%s", body)
	}
}
