package publish_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

const (
	dispatchable = "name: CI\non:\n  push:\n  workflow_dispatch:\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
	pushOnly     = "name: CI\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
)

// proposed publishes the fix as a PR with the workflow file src on the
// failing branch (so on the fix branch) and returns the request ProveCI
// gets.
func proposed(t *testing.T, src string) (*fixture, publish.CIRequest) {
	t.Helper()
	return proposedWith(t, src, ghtest.Workflow{ID: 159038})
}

// proposedWith is proposed with the fake's workflow w (ID 159038).
func proposedWith(t *testing.T, src string, w ghtest.Workflow) (*fixture, publish.CIRequest) {
	t.Helper()
	f := newFixture(t)
	f.head = f.s.Push(repo, "feature/parser", map[string]string{".github/workflows/ci.yml": src})
	wf := f.s.AddWorkflow(repo, w)
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: makeBundle(t, f.head, theFix), Job: f.job(route.WritePropose),
		Config: config.Default(), CIWorkflow: "159038"})
	if err != nil || res.Action != publish.ActionPRCreated {
		t.Fatalf("publish: %+v %v", res, err)
	}
	body := f.s.Pulls(repo)[len(f.s.Pulls(repo))-1].Body
	contains(t, "new PR body", body, "dispatches the failing workflow", " ci=pending ci-workflow=159038 -->")
	if strings.Contains(body, publish.CINote) {
		t.Error("the generic CI warning is still in the body")
	}
	if wf != 159038 {
		t.Fatalf("workflow ID %d", wf)
	}
	return f, publish.CIRequest{Owner: "octo-org", Repo: "hello-world", PR: res.PRNumber, Branch: res.Branch, HeadSHA: res.Commit,
		Workflow: "159038", Find: 2 * time.Second, Poll: 20 * time.Millisecond}
}

func prBody(f *fixture, n int) string {
	for _, p := range f.s.Pulls(repo) {
		if p.Number == n {
			return p.Body
		}
	}
	return ""
}

func TestProveCIDispatchesFindsTheRunAndWaits(t *testing.T) {
	t.Parallel()
	f, req := proposed(t, dispatchable)
	// The run completes while the job waits.
	req.Wait = 5 * time.Second
	go func() {
		for t.Context().Err() == nil {
			if ids := f.s.Dispatched(repo); len(ids) == 1 {
				f.s.SetRunStatus(repo, ids[0], "in_progress", "")
				time.Sleep(50 * time.Millisecond)
				f.s.SetRunStatus(repo, ids[0], "completed", "success")
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := publish.ProveCI(t.Context(), f.gh, req)
	if err != nil {
		t.Fatal(err)
	}
	ids := f.s.Dispatched(repo)
	if len(ids) != 1 || res.Status != publish.CIPassed || res.RunID != ids[0] {
		t.Fatalf("result %+v, dispatched %v", res, ids)
	}
	dispatch := f.s.Requests()
	var sawRef bool
	for _, r := range dispatch {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/actions/workflows/159038/dispatches") {
			sawRef = strings.Contains(r.Body, `"ref":"`+req.Branch+`"`)
		}
	}
	if !sawRef {
		t.Error("the dispatch was not made on the fix branch")
	}
	body := prBody(f, req.PR)
	contains(t, "PR body", body, "✅ passed", "/actions/runs/", " ci=passed ci-workflow=159038 ci-run=", "Parse handles empty input.")
	if strings.Count(body, "mini-agent:ci-begin") != 1 || strings.Count(body, "mini-agent:state") != 1 {
		t.Errorf("the CI section or marker is duplicated:\n%s", body)
	}
}

// TestProveCIRunAlreadyFailedIsTheCallers: a run that had already failed
// when the dispatcher found it (a CI failing in seconds) is left to the
// caller like one failing while waited for: ProveCI does not record it, so
// the caller's FollowUp writes the failure's context and turns the PR
// draft (when ProveCI recorded it, FollowUp saw the run as already
// reported and wrote neither: the action's end-to-end test failed on it
// under load).
func TestProveCIRunAlreadyFailedIsTheCallers(t *testing.T) {
	t.Parallel()
	f, req := proposedWith(t, dispatchable, ghtest.Workflow{ID: 159038, Finished: "failure"})
	req.Wait = 5 * time.Second
	res, err := publish.ProveCI(t.Context(), f.gh, req)
	if err != nil || res.Status != publish.CIFailed || res.RunID == 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if body := prBody(f, req.PR); strings.Contains(body, " ci=failed") {
		t.Fatalf("ProveCI recorded the failure itself:\n%s", body)
	}
	what, err := publish.FollowUp(t.Context(), f.gh, publish.FollowUpRequest{Owner: "octo-org", Repo: "hello-world", PR: req.PR,
		Branch: req.Branch, RunID: res.RunID, RunURL: res.RunURL, Conclusion: "failure", HeadSHA: req.HeadSHA,
		Signature: "ab12cd34ef56ab78", Context: "--- FAIL: TestOnlyCI (0.00s)"})
	if err != nil || what != publish.FollowUpDrafted {
		t.Fatalf("follow-up: %s %v", what, err)
	}
	contains(t, "PR body", prBody(f, req.PR), "❌ failed", "--- FAIL: TestOnlyCI", " ci=failed ci-workflow=159038 ci-run=")
}

func TestProveCIWithoutWaitingShowsRunning(t *testing.T) {
	t.Parallel()
	f, req := proposed(t, dispatchable)
	res, err := publish.ProveCI(t.Context(), f.gh, req)
	if err != nil || res.Status != publish.CIRunning {
		t.Fatalf("%+v %v", res, err)
	}
	contains(t, "PR body", prBody(f, req.PR), "⏳ running", " ci=running ")
}

func TestProveCIRefusals(t *testing.T) {
	t.Parallel()
	t.Run("no trigger", func(t *testing.T) {
		t.Parallel()
		f, req := proposed(t, pushOnly)
		res, err := publish.ProveCI(t.Context(), f.gh, req)
		if err != nil || res.Status != publish.CIOff {
			t.Fatalf("%+v %v", res, err)
		}
		if n := f.s.Count("POST", "/repos/"+repo+"/actions/"); n != 0 {
			t.Errorf("%d dispatches for a workflow without the trigger", n)
		}
		contains(t, "PR body", prBody(f, req.PR), "has no `workflow_dispatch` trigger", "add `workflow_dispatch:` to the `on:` of `.github/workflows/ci.yml`", " ci=off")
	})
	t.Run("403", func(t *testing.T) {
		t.Parallel()
		f, req := proposed(t, dispatchable)
		f.s.Inject(ghtest.Fault{Method: "POST", Path: "/repos/" + repo + "/actions/workflows/*", Status: http.StatusForbidden})
		res, err := publish.ProveCI(t.Context(), f.gh, req)
		if err != nil || res.Status != publish.CIOff || len(f.s.Dispatched(repo)) != 0 {
			t.Fatalf("%+v %v", res, err)
		}
		contains(t, "PR body", prBody(f, req.PR), "lacks `actions: write`", "`permissions: actions: write`", "GitHub App token")
	})
	t.Run("422", func(t *testing.T) {
		t.Parallel()
		f, req := proposed(t, dispatchable)
		f.s.Inject(ghtest.Fault{Method: "POST", Path: "/repos/" + repo + "/actions/workflows/*", Status: http.StatusUnprocessableEntity})
		res, err := publish.ProveCI(t.Context(), f.gh, req)
		if err != nil || res.Status != publish.CIOff {
			t.Fatalf("%+v %v", res, err)
		}
		contains(t, "PR body", prBody(f, req.PR), "GitHub refused the dispatch")
	})
	t.Run("accepted without a run", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		f.head = f.s.Push(repo, "feature/parser", map[string]string{".github/workflows/ci.yml": dispatchable})
		f.s.AddWorkflow(repo, ghtest.Workflow{ID: 159038, NoRun: true})
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: makeBundle(t, f.head, theFix), Job: f.job(route.WritePropose),
			Config: config.Default(), CIWorkflow: "159038"})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ci, err := publish.ProveCI(t.Context(), f.gh, publish.CIRequest{Owner: "octo-org", Repo: "hello-world", PR: res.PRNumber,
			Branch: res.Branch, HeadSHA: res.Commit, Workflow: "159038", Find: 200 * time.Millisecond, Poll: 20 * time.Millisecond})
		if err != nil || ci.Status != publish.CIDispatched || time.Since(start) > 10*time.Second {
			t.Fatalf("%+v %v after %s", ci, err, time.Since(start))
		}
		contains(t, "PR body", prBody(f, res.PRNumber), "its run was not listed yet", " ci=dispatched")
	})
}

func TestProveCIHonoursCancellation(t *testing.T) {
	t.Parallel()
	f, req := proposed(t, dispatchable)
	req.Wait = time.Hour
	req.Poll = 50 * time.Millisecond
	c, stop := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer stop()
	start := time.Now()
	res, err := publish.ProveCI(c, f.gh, req)
	if time.Since(start) > 10*time.Second {
		t.Fatalf("waited %s past cancellation", time.Since(start))
	}
	// The run never completed: the section still says running.
	if err == nil && res.Status != publish.CIRunning {
		t.Errorf("%+v", res)
	}
}
