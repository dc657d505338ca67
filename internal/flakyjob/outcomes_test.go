package flakyjob

import (
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/flaky"
)

// TestForbiddenFixRejectedThenQuarantined: the scripted model "fixes" the
// order fixture with t.Skip twice: no fix PR; the issue says rejected and
// names the check; with quarantine-file set, a draft PR adds the test to
// the file. A second run opens nothing new and repeats no comment.
func TestForbiddenFixRejectedThenQuarantined(t *testing.T) {
	if testing.Short() {
		t.Skip("stress-runs a real flaky module and runs the fix job")
	}
	t.Parallel()
	sc := newScene(t, map[string]string{".": "order"}, nil, ghtest.FixtureHistory{Suite: orderSuite, Flaky: [][]string{{"TestStartsEmpty"}}})
	forbidden := fixture(t, "order", "forbidden.diff")
	const policy = "flaky: {max-runs: 30, quarantine-file: flaky-quarantine.txt}\n"
	sc.script(t, forbidden, forbidden)
	res := sc.run(t, policy)
	c := res.Candidates[0]
	if c.Fix == nil || c.Fix.Status != flaky.FixRejected {
		t.Fatalf("fix %+v, want rejected\n%s", c.Fix, res.Markdown())
	}
	issue := sc.s.Issues(testRepo)[0]
	comments := sc.s.Comments(testRepo, issue.Number)
	var rejected, quarantined bool
	for _, cm := range comments {
		rejected = rejected || strings.Contains(cm.Body, "rejected by the anti-pattern checks") && strings.Contains(cm.Body, "new-skip")
		quarantined = quarantined || strings.Contains(cm.Body, "Quarantine proposed in #")
	}
	if !rejected || !quarantined || len(comments) != 2 {
		t.Errorf("issue comments (want the rejection naming new-skip, and the quarantine link):\n%+v", comments)
	}
	pulls := sc.s.Pulls(testRepo)
	if len(pulls) != 1 || c.PR != nil || c.Quarantine == nil {
		t.Fatalf("%d PRs (fix %+v, quarantine %+v); want the quarantine PR only", len(pulls), c.PR, c.Quarantine)
	}
	pr := pulls[0]
	if !pr.Draft || !strings.Contains(pr.Title, "Tracked by #"+itoa(issue.Number)) || !strings.Contains(pr.Title, "quarantine") ||
		!strings.Contains(pr.Body, "| before the fix |") {
		t.Errorf("quarantine PR draft=%v title %q body:\n%s", pr.Draft, pr.Title, pr.Body)
	}
	file := sc.s.Files(testRepo, pr.Head)["flaky-quarantine.txt"].Content
	if !strings.Contains(file, "\nTestStartsEmpty\n") || !strings.HasPrefix(file, "#") {
		t.Errorf("quarantine file on %s:\n%s", pr.Head, file)
	}
	if _, ok := sc.s.Files(testRepo, "main")["flaky-quarantine.txt"]; ok {
		t.Error("the quarantine file was written on main")
	}

	sc.script(t, forbidden, forbidden)
	res = sc.run(t, policy)
	c = res.Candidates[0]
	if c.Quarantine == nil || !c.Quarantine.Existing || len(sc.s.Pulls(testRepo)) != 1 {
		t.Errorf("run 2: quarantine %+v, %d PRs; want the earlier PR only", c.Quarantine, len(sc.s.Pulls(testRepo)))
	}
	if n := len(sc.s.Comments(testRepo, issue.Number)); n != 2 {
		t.Errorf("run 2: %d issue comments, want still 2", n)
	}
}

// TestRegressionIsNeverFlaky: the history's regression (failing on every
// run since a commit) is no candidate; a test the history calls flaky but
// that fails every local run is a regression: no fix, never quarantined,
// and the issue says so.
func TestRegressionIsNeverFlaky(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	always := "package registry\n\nimport \"testing\"\n\nfunc TestAlwaysFails(t *testing.T) {\n\tt.Fatal(\"broken on main\")\n}\n"
	suite := []ghtest.GoPackage{{Path: "example.com/x", Tests: []ghtest.GoTest{{Name: "TestStartsEmpty"}, {Name: "TestRegister"}, {Name: "TestAlwaysFails"}}}}
	sc := newScene(t, map[string]string{".": "order"}, map[string]string{"always_test.go": always},
		ghtest.FixtureHistory{Suite: suite, Flaky: [][]string{{"TestAlwaysFails"}}, Regression: "TestRegister"})
	sc.script(t, fixture(t, "order", "proper.diff"))
	res := sc.run(t, "flaky: {max-runs: 30, quarantine-file: flaky-quarantine.txt}\n")
	if len(res.Candidates) != 1 || res.Candidates[0].Candidate.Tests[0].Test != "TestAlwaysFails" {
		t.Fatalf("candidates %+v: want TestAlwaysFails only (TestRegister is the history's regression)", res.Scan.Candidates)
	}
	c := res.Candidates[0]
	if len(c.Tests) != 1 || c.Tests[0].Report == nil || c.Tests[0].Report.Verdict != flaky.VerdictFailing {
		t.Fatalf("local verdict %+v, want failing", c.Tests)
	}
	if c.Fix != nil || c.PR != nil || c.Quarantine != nil || len(sc.s.Pulls(testRepo)) != 0 {
		t.Errorf("a failing test got fix %+v, PR %+v, quarantine %+v", c.Fix, c.PR, c.Quarantine)
	}
	issue := sc.s.Issues(testRepo)[0]
	comments := sc.s.Comments(testRepo, issue.Number)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "regression") {
		t.Errorf("issue comments %+v: want one saying regression", comments)
	}
	if md := res.Markdown(); !strings.Contains(md, "a regression, not a flake") {
		t.Errorf("summary does not say regression:\n%s", md)
	}
}

// TestPRBudget: two locally flaky tests, quarantine on, no model, max-prs
// 1: one quarantine PR, the other candidate says the budget stopped it.
func TestPRBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	suite := []ghtest.GoPackage{
		{Path: "example.com/x/registry", Tests: []ghtest.GoTest{{Name: "TestStartsEmpty"}, {Name: "TestRegister"}}},
		{Path: "example.com/x/tags", Tests: []ghtest.GoTest{{Name: "TestNames"}}},
	}
	sc := newScene(t, map[string]string{"registry": "order", "tags": "maporder"}, map[string]string{"go.mod": "module example.com/x\n\ngo 1.24\n"},
		ghtest.FixtureHistory{Suite: suite, Flaky: [][]string{{"TestNames"}, {"TestStartsEmpty"}}})
	res := sc.run(t, "flaky: {max-runs: 30, max-prs: 1, quarantine-file: flaky-quarantine.txt}\n")
	if len(res.Candidates) != 2 {
		t.Fatalf("%d candidates, want 2", len(res.Candidates))
	}
	flakyN := 0
	for _, c := range res.Candidates {
		if flakiest(c.Tests) != nil {
			flakyN++
		}
	}
	if flakyN != 2 {
		t.Fatalf("%d candidates flaky locally, want 2\n%s", flakyN, res.Markdown())
	}
	if n := len(sc.s.Pulls(testRepo)); n != 1 || res.Opened() != 1 {
		t.Errorf("%d PRs (%d opened), want 1", n, res.Opened())
	}
	if md := res.Markdown(); !strings.Contains(md, "flaky.max-prs (1) reached") || !strings.Contains(md, "no model: fixes are off") {
		t.Errorf("summary lacks the budget note:\n%s", md)
	}
}

// TestMissingTestIsReported: a test the history calls flaky that the
// checkout does not have is reported as not found, never mapped to another
// test; its issue carries no local proof and nothing is fixed.
func TestMissingTestIsReported(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	suite := []ghtest.GoPackage{{Path: "example.com/x", Tests: []ghtest.GoTest{{Name: "TestStartsEmpty"}, {Name: "TestRegister"}, {Name: "TestGone"}}}}
	sc := newScene(t, map[string]string{".": "order"}, nil, ghtest.FixtureHistory{Suite: suite, Flaky: [][]string{{"TestGone"}}})
	sc.script(t, fixture(t, "order", "proper.diff"))
	res := sc.run(t, "flaky: {max-runs: 3, quarantine-file: flaky-quarantine.txt}\n")
	c := res.Candidates[0]
	if len(c.Tests) != 1 || c.Tests[0].Report != nil || !strings.Contains(c.Tests[0].Problem, "not found in the workspace") {
		t.Fatalf("tests %+v: want TestGone reported not found", c.Tests)
	}
	if c.Fix != nil || c.PR != nil || c.Quarantine != nil || len(sc.s.Pulls(testRepo)) != 0 {
		t.Errorf("a missing test got fix %+v, PR %+v, quarantine %+v", c.Fix, c.PR, c.Quarantine)
	}
	if is := sc.s.Issues(testRepo); len(is) != 1 || strings.Contains(is[0].Body, "measured rate") {
		t.Errorf("issues %+v: want one, without a local proof", is)
	}
	if md := res.Markdown(); !strings.Contains(md, "not found in the workspace") {
		t.Errorf("summary:\n%s", md)
	}
}
