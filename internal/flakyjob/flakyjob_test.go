package flakyjob

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/flaky"
)

// TestNothingFoundWritesNothing: a history without a flake posts nothing
// (no write request at all) and never runs the tests.
func TestNothingFoundWritesNothing(t *testing.T) {
	t.Parallel()
	sc := newScene(t, map[string]string{".": "order"}, nil, ghtest.FixtureHistory{Suite: orderSuite})
	res := sc.run(t, "")
	if len(res.Scan.Candidates) != 0 || len(res.Candidates) != 0 {
		t.Fatalf("candidates %+v in a green history", res.Scan.Candidates)
	}
	if n := sc.writes(); n != 0 {
		t.Errorf("%d write requests, want 0", n)
	}
	if sc.s.Count("GET", "/repos/octo/app/issues") != 0 {
		t.Error("the issues were listed although nothing was found")
	}
	if md := res.Markdown(); !strings.Contains(md, "No flaky test found: nothing was posted.") || !strings.Contains(md, "API calls") {
		t.Errorf("summary:\n%s", md)
	}
}

// TestIssueBudget: max-issues 1 with two candidates opens one issue (the
// higher ranked), leaves the other for later, and with max-fixes 0 runs
// nothing locally and opens no PR.
func TestIssueBudget(t *testing.T) {
	t.Parallel()
	sc := newScene(t, map[string]string{".": "order"}, nil, ghtest.FixtureHistory{Suite: orderSuite,
		Flaky: [][]string{{"TestStartsEmpty"}, {"TestRegister"}}})
	res := sc.run(t, "flaky: {max-issues: 1, max-fixes: 0}\n")
	if len(res.Candidates) != 2 {
		t.Fatalf("%d candidates, want 2", len(res.Candidates))
	}
	if got := len(sc.s.Issues(testRepo)); got != 1 {
		t.Errorf("%d issues, want 1", got)
	}
	if c := res.Candidates[0]; c.Issue == 0 || c.Examined || c.Candidate.Tests[0].Test != "TestStartsEmpty" {
		t.Errorf("first candidate %+v: want an issue, not examined", c)
	}
	if c := res.Candidates[1]; c.Issue != 0 {
		t.Errorf("second candidate got issue #%d past the budget", c.Issue)
	}
	if len(sc.s.Pulls(testRepo)) != 0 || sc.s.Count("POST", "/repos/octo/app/git/") != 0 {
		t.Error("a PR or a commit was made with max-fixes 0")
	}
	if md := res.Markdown(); !strings.Contains(md, "1 left for a later run by flaky.max-issues") || !strings.Contains(md, "not examined") {
		t.Errorf("summary:\n%s", md)
	}
}

// TestThreeScheduledRunsProvenFix: the order fixture's test is flaky in
// the history; run 1 proves it locally (it fails only with the whole
// suite), files the issue, has the scripted model apply proper.diff, and
// opens one draft PR "Tracked by #N" with the before/after table and the
// checks; runs 2 and 3 open nothing new and repeat no comment.
func TestThreeScheduledRunsProvenFix(t *testing.T) {
	if testing.Short() {
		t.Skip("stress-runs a real flaky module and runs the fix job")
	}
	t.Parallel()
	sc := newScene(t, map[string]string{".": "order"}, nil, ghtest.FixtureHistory{Suite: orderSuite,
		Flaky: [][]string{{"TestStartsEmpty"}}, Regression: "TestRegister"})
	sc.script(t, fixture(t, "order", "proper.diff"))
	const policy = "flaky: {max-runs: 30}\n"
	start, before := time.Now(), len(sc.s.Requests())
	res := sc.run(t, policy)
	t.Logf("run 1: %s, %d API requests (scan %d), %d writes", time.Since(start).Round(time.Second), len(sc.s.Requests())-before, res.Scan.APICalls, sc.writes())
	if len(res.Candidates) != 1 || res.Candidates[0].Candidate.Tests[0].Test != "TestStartsEmpty" {
		t.Fatalf("candidates %+v: want TestStartsEmpty only (TestRegister is a regression)", res.Scan.Candidates)
	}
	c := res.Candidates[0]
	if !c.WholeSuite || len(c.Tests) != 1 || c.Tests[0].Report == nil || c.Tests[0].Report.Verdict != flaky.VerdictFlaky {
		t.Fatalf("local verdict %+v (whole suite %v), want flaky with the whole suite", c.Tests, c.WholeSuite)
	}
	if c.Fix == nil || c.Fix.Status != flaky.FixProven || c.PR == nil || c.PR.Existing {
		t.Fatalf("fix %+v, PR %+v: want proven and a new PR\n%s", c.Fix, c.PR, res.Markdown())
	}
	issues := sc.s.Issues(testRepo)
	pulls := sc.s.Pulls(testRepo)
	if len(issues) != 1 || len(pulls) != 1 {
		t.Fatalf("%d issues, %d PRs; want 1 and 1", len(issues), len(pulls))
	}
	pr, issue := pulls[0], issues[0]
	if !pr.Draft || pr.Base != "main" || !strings.HasPrefix(pr.Head, "mini-agent/") {
		t.Errorf("PR draft=%v base=%s head=%s", pr.Draft, pr.Base, pr.Head)
	}
	tracked := "Tracked by #" + itoa(issue.Number)
	for _, want := range []string{tracked, "| before the fix |", "| after the fix |", "95% interval", "### Anti-pattern checks",
		"mini-agent:state"} {
		if !strings.Contains(pr.Body, want) {
			t.Errorf("PR body lacks %q:\n%s", want, pr.Body)
		}
	}
	if !strings.Contains(pr.Title, tracked) || !strings.Contains(pr.Title, "TestStartsEmpty") {
		t.Errorf("PR title %q", pr.Title)
	}
	if !strings.Contains(issue.Body, "measured rate") || !strings.Contains(issue.Body, "-shuffle=") {
		t.Errorf("issue body lacks the local proof:\n%s", issue.Body)
	}
	comments := sc.s.Comments(testRepo, issue.Number)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "#"+itoa(pr.Number)) {
		t.Errorf("issue comments %+v: want one linking #%d", comments, pr.Number)
	}
	// The workspace is back at its commit.
	if st := git(t, sc.ws, "status", "--porcelain"); st != "" {
		t.Errorf("workspace not reset:\n%s", st)
	}

	if tr := c.Tests[0].Report; tr != nil {
		t.Logf("local proof: %d/%d failed; fix: %d clean runs after, %d needed", tr.Failures, tr.Runs, c.Fix.RunsAfter, c.Fix.Need)
	}
	for run := 2; run <= 3; run++ {
		start, before, w := time.Now(), len(sc.s.Requests()), sc.writes()
		res := sc.run(t, policy)
		t.Logf("run %d: %s, %d API requests, %d writes", run, time.Since(start).Round(time.Second), len(sc.s.Requests())-before, sc.writes()-w)
		c := res.Candidates[0]
		if c.PR == nil || !c.PR.Existing || c.PR.Number != pr.Number || c.Fix != nil || c.Examined {
			t.Errorf("run %d: PR %+v fix %+v examined %v; want the earlier PR, no new examination or fix", run, c.PR, c.Fix, c.Examined)
		}
		if len(res.Issues.Created) != 0 || len(sc.s.Issues(testRepo)) != 1 || len(sc.s.Pulls(testRepo)) != 1 {
			t.Errorf("run %d: %d created, %d issues, %d PRs", run, len(res.Issues.Created), len(sc.s.Issues(testRepo)), len(sc.s.Pulls(testRepo)))
		}
		if n := len(sc.s.Comments(testRepo, issue.Number)); n != 1 {
			t.Errorf("run %d: %d comments on the issue, want still 1", run, n)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
