package action

import (
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
)

// ciLog is a CI job's log failing in a way only CI sees.
const ciLog = "2026-03-01T12:00:00.0000000Z --- FAIL: TestCIOnly (0.00s)\n" +
	"2026-03-01T12:00:00.0000000Z     ci_test.go:9: only CI sees this\n2026-03-01T12:00:00.0000000Z FAIL\n"

// completion is the workflow_run event of run id finishing on branch.
func completion(id, workflow int64, branch, sha, conclusion string) map[string]any {
	p := workflowRunPayload(id, sha, branch, nil)
	r := p["workflow_run"].(map[string]any)
	r["workflow_id"], r["conclusion"], r["event"] = workflow, conclusion, "workflow_dispatch"
	r["head_commit"] = map[string]any{"id": sha, "message": "mini-agent: fix\n\nMini-Agent-Signature: x"}
	return p
}

// TestActionFollowUpNeverLoops: the fixer opens the PR and dispatches CI;
// then a hundred completions of CI on the fix branch arrive (the same run
// replayed, and new runs failing the same way). The PR shows the failure
// and turns draft; the body is written at most FollowUpCap times; no fix,
// commit, PR or dispatch is ever started by a completion.
func TestActionFollowUpNeverLoops(t *testing.T) {
	t.Parallel()
	sc := newScene(t, "")
	payload, wf := sc.failingRun(t, 101, "name: CI\non: [push, workflow_dispatch]\njobs:\n  test:\n    runs-on: ubuntu-latest\n")
	env, vars, stdout := sc.env(t, "workflow_run", payload, nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("fixer: exit %d\n%s", code, stdout)
	}
	branch := outputs(t, vars["GITHUB_OUTPUT"])["branch"]
	ids := sc.s.Dispatched(testRepo)
	if len(ids) != 1 || !strings.Contains(sc.s.Pulls(testRepo)[0].Body, " ci=running ") {
		t.Fatalf("dispatched %v, body:\n%s", ids, sc.s.Pulls(testRepo)[0].Body)
	}
	fixSHA := sc.s.Head(testRepo, branch)
	sc.s.SetRunStatus(testRepo, ids[0], "completed", "failure", ghtest.Job{ID: 8801, Name: "test", FailedStep: "Run go test ./...", Log: ciLog})
	for i := range 50 {
		sc.s.AddRun(testRepo, ghtest.Run{ID: int64(9000 + i), HeadBranch: branch, HeadSHA: fixSHA, Event: "workflow_dispatch",
			Jobs: []ghtest.Job{{ID: int64(19000 + i), Name: "test", FailedStep: "Run go test ./...", Log: ciLog}}})
	}
	gitWrites, pullWrites := sc.s.Count("POST", "/repos/"+testRepo+"/git/"), sc.s.Count("PATCH", "/repos/"+testRepo+"/pulls/")
	for i := range 100 {
		id := ids[0]
		if i >= 50 {
			id = int64(9000 + i - 50)
		}
		env, _, stdout := sc.env(t, "workflow_run", completion(id, wf, branch, fixSHA, "failure"), nil)
		if code := actionMain(t.Context(), env); code != 0 {
			t.Fatalf("completion %d: exit %d\n%s", i, code, stdout)
		}
	}
	pulls := sc.s.Pulls(testRepo)
	if len(pulls) != 1 || !pulls[0].Draft || len(sc.s.Dispatched(testRepo)) != 1 {
		t.Fatalf("pulls %d (draft %v), dispatched %v", len(pulls), pulls[0].Draft, sc.s.Dispatched(testRepo))
	}
	if n := sc.s.Count("POST", "/repos/"+testRepo+"/git/") - gitWrites; n != 0 {
		t.Errorf("completions made %d git writes", n)
	}
	if n := sc.s.Count("PATCH", "/repos/"+testRepo+"/pulls/") - pullWrites; n != 3 {
		t.Errorf("completions wrote the PR %d times, want the cap (3)", n)
	}
	if n := sc.s.Count("POST", "/repos/"+testRepo+"/issues/"); n != 0 {
		t.Errorf("%d comments posted", n)
	}
	for _, want := range []string{"❌ failed", "TestCIOnly", "only CI sees this", "ci-fail-seen=3", "attempts=1 ", "(attempt 2 of 3)"} {
		if !strings.Contains(pulls[0].Body, want) {
			t.Errorf("PR body lacks %q:\n%s", want, pulls[0].Body)
		}
	}
}

// TestActionRefreshesFinishedCI: the next mini-agent run in the repository
// (here the next failure) first updates the CI section of the PR whose
// dispatched run finished, before its own work replaces the PR's commit.
func TestActionRefreshesFinishedCI(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc := newScene(t, "")
	payload, _ := sc.failingRun(t, 101, "on:\n  workflow_dispatch:\njobs:\n  test:\n    runs-on: ubuntu-latest\n")
	env, _, stdout := sc.env(t, "workflow_run", payload, nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("fixer: exit %d\n%s", code, stdout)
	}
	sc.s.SetRunStatus(testRepo, sc.s.Dispatched(testRepo)[0], "completed", "success")
	// The same failure again (a rerun): the refresh comes first.
	env, _, stdout = sc.env(t, "workflow_run", payload, nil)
	actionMain(t.Context(), env)
	if !strings.Contains(stdout.String(), "refresh: #1: CI run") {
		t.Errorf("the log does not show the refresh:\n%s", stdout)
	}
}

// TestActionScheduledRunRefreshes: a scheduled run only refreshes: the PR
// whose dispatched run passed says so, nothing else is written.
func TestActionScheduledRunRefreshes(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc := newScene(t, "")
	payload, _ := sc.failingRun(t, 101, "on:\n  workflow_dispatch:\n  schedule:\n    - cron: '0 * * * *'\njobs:\n  t:\n    runs-on: ubuntu-latest\n")
	env, _, stdout := sc.env(t, "workflow_run", payload, nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("fixer: exit %d\n%s", code, stdout)
	}
	sc.s.SetRunStatus(testRepo, sc.s.Dispatched(testRepo)[0], "completed", "success")
	git := sc.s.Count("POST", "/repos/"+testRepo+"/git/")
	env, vars, stdout := sc.env(t, "schedule", map[string]any{"schedule": "0 * * * *"}, nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("scheduled: exit %d\n%s", code, stdout)
	}
	if body := sc.s.Pulls(testRepo)[0].Body; !strings.Contains(body, "✅ passed") || !strings.Contains(body, " ci=passed ") {
		t.Errorf("not refreshed:\n%s", body)
	}
	if outputs(t, vars["GITHUB_OUTPUT"])["status"] != "skipped" || sc.s.Count("POST", "/repos/"+testRepo+"/git/") != git || len(sc.s.Dispatched(testRepo)) != 1 {
		t.Errorf("the scheduled run did more than refresh\n%s", stdout)
	}
}
