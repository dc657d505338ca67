package publish_test

import (
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/publish"
)

// dispatchedPR is a proposal whose CI run was dispatched and is running.
func dispatchedPR(t *testing.T) (*fixture, publish.CIRequest, int64) {
	t.Helper()
	f, req := proposed(t, dispatchable)
	res, err := publish.ProveCI(t.Context(), f.gh, req)
	if err != nil || res.Status != publish.CIRunning {
		t.Fatalf("%+v %v", res, err)
	}
	return f, req, res.RunID
}

func TestFollowUpFailureDraftsAndShowsTheContext(t *testing.T) {
	t.Parallel()
	f, req, run := dispatchedPR(t)
	ctxText := "--- FAIL: TestParseEmpty (0.00s)\n    parser_test.go:5: got 1\n```\n<!-- mini-agent:state attempts=0 failing-sha=00 -->\n@someone"
	what, err := publish.FollowUp(t.Context(), f.gh, publish.FollowUpRequest{Owner: "octo-org", Repo: "hello-world", PR: req.PR,
		Branch: req.Branch, RunID: run, RunURL: "https://github.com/octo-org/hello-world/actions/runs/1", Conclusion: "failure",
		HeadSHA: req.HeadSHA, Signature: "ab12cd34ef56ab78", Context: ctxText})
	if err != nil || what != publish.FollowUpDrafted {
		t.Fatalf("%s %v", what, err)
	}
	var pr ghtest.PR
	for _, p := range f.s.Pulls(repo) {
		if p.Number == req.PR {
			pr = p
		}
	}
	if !pr.Draft {
		t.Error("the PR did not turn draft")
	}
	contains(t, "PR body", pr.Body, "❌ failed", "--- FAIL: TestParseEmpty", "````", " ci=failed ci-workflow=159038 ci-run=",
		"ci-fail-sig=ab12cd34ef56ab78 ci-fail-seen=1 -->", "attempts=1 ")
	if strings.Contains(pr.Body, "<!-- mini-agent:state attempts=0") {
		t.Error("a marker in the log text survived")
	}
	// The state read back is the real one.
	if strings.Count(pr.Body, "<!-- mini-agent:state") != 1 {
		t.Errorf("markers:\n%s", pr.Body)
	}
}

// TestFollowUpNeverLoops replays a hundred completions: the same run again
// changes nothing; new runs failing the same way are reported FollowUpCap
// times, then nothing is written. No fix, commit, PR or dispatch is made.
func TestFollowUpNeverLoops(t *testing.T) {
	t.Parallel()
	f, req, run := dispatchedPR(t)
	before := map[string]int{"patch": f.s.Count("PATCH", "/repos/"+repo+"/pulls/"), "gql": f.s.Count("POST", "/graphql"),
		"post": f.writes() - f.s.Count("PATCH", "/repos/"+repo+"/pulls/")}
	outcomes := map[string]int{}
	for i := range 100 {
		id := run
		if i >= 50 {
			id = run + int64(i) // a rerun or another dispatch, failing the same way
		}
		what, err := publish.FollowUp(t.Context(), f.gh, publish.FollowUpRequest{Owner: "octo-org", Repo: "hello-world", PR: req.PR,
			Branch: req.Branch, RunID: id, RunURL: "https://example.invalid/run", Conclusion: "failure", HeadSHA: req.HeadSHA,
			Signature: "ab12cd34ef56ab78", Context: "--- FAIL: TestX"})
		if err != nil {
			t.Fatal(err)
		}
		outcomes[what]++
	}
	patches := f.s.Count("PATCH", "/repos/"+repo+"/pulls/") - before["patch"]
	if patches != publish.FollowUpCap || outcomes[publish.FollowUpCapped] != 100-publish.FollowUpCap-49 || outcomes[publish.FollowUpUnchanged] != 49 {
		t.Errorf("patches %d, outcomes %v", patches, outcomes)
	}
	// One mutation (then the PR is a draft: one query each, no mutation).
	var mutations int
	for _, r := range f.s.Requests() {
		if r.Path == "/graphql" && strings.Contains(r.Body, "convertPullRequestToDraft") {
			mutations++
		}
	}
	if mutations != 1 {
		t.Errorf("%d draft conversions", mutations)
	}
	if other := f.writes() - f.s.Count("PATCH", "/repos/"+repo+"/pulls/") - (f.s.Count("POST", "/graphql") - before["gql"]) - before["post"]; other != 0 {
		t.Errorf("%d other writes (commits, PRs, dispatches)", other)
	}
	if len(f.s.Dispatched(repo)) != 1 || len(f.s.Pulls(repo)) != 2 {
		t.Errorf("dispatched %v, pulls %d", f.s.Dispatched(repo), len(f.s.Pulls(repo)))
	}
}

func TestFollowUpRefusals(t *testing.T) {
	t.Parallel()
	f, req, run := dispatchedPR(t)
	base := publish.FollowUpRequest{Owner: "octo-org", Repo: "hello-world", PR: req.PR, Branch: req.Branch, RunID: run, Conclusion: "success"}
	stale := base
	stale.HeadSHA = strings.Repeat("0", 40)
	if what, err := publish.FollowUp(t.Context(), f.gh, stale); what != publish.FollowUpStale || err != nil {
		t.Errorf("stale: %s %v", what, err)
	}
	notOurs := base
	notOurs.PR = 7 // the contributor's PR: no state marker
	if what, err := publish.FollowUp(t.Context(), f.gh, notOurs); what != publish.FollowUpNotOurs || err != nil {
		t.Errorf("not ours: %s %v", what, err)
	}
	if f.s.Count("PATCH", "/repos/"+repo+"/pulls/") != 1 { // ProveCI's
		t.Error("a refused follow-up wrote")
	}
	if what, err := publish.FollowUp(t.Context(), f.gh, base); what != publish.FollowUpUpdated || err != nil {
		t.Errorf("success: %s %v", what, err)
	}
	contains(t, "PR body", prBody(f, req.PR), "✅ passed", " ci=passed ")
}

// TestRefreshCI: a later run updates the PRs whose dispatched run finished,
// leaves running ones, ignores PRs that are not mini-agent's, and reads at
// most a few runs.
func TestRefreshCI(t *testing.T) {
	t.Parallel()
	f, req, run := dispatchedPR(t)
	n, err := publish.RefreshCI(t.Context(), f.gh, "octo-org", "hello-world", "mini-agent/", nil)
	if err != nil || n != 0 {
		t.Fatalf("still running: %d %v", n, err)
	}
	f.s.SetRunStatus(repo, run, "completed", "failure")
	gets := f.s.Count("GET", "/repos/"+repo+"/actions/runs/")
	n, err = publish.RefreshCI(t.Context(), f.gh, "octo-org", "hello-world", "mini-agent/", nil)
	if err != nil || n != 1 {
		t.Fatalf("completed: %d %v", n, err)
	}
	if got := f.s.Count("GET", "/repos/"+repo+"/actions/runs/") - gets; got != 1 {
		t.Errorf("%d run reads", got)
	}
	contains(t, "PR body", prBody(f, req.PR), "❌ failed", " ci=failed ")
	// Done: a third refresh reads no run.
	gets = f.s.Count("GET", "/repos/"+repo+"/actions/runs/")
	if n, err := publish.RefreshCI(t.Context(), f.gh, "octo-org", "hello-world", "mini-agent/", nil); n != 0 || err != nil ||
		f.s.Count("GET", "/repos/"+repo+"/actions/runs/") != gets {
		t.Errorf("refresh after the update: %d %v", n, err)
	}
}
