package flakyscan

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
)

const token = "ghs_fake_token_for_flakyscan"

var lastDay = time.Date(2026, 3, 14, 18, 0, 0, 0, time.UTC)

func scenario(t *testing.T) (*ghtest.Server, *ghapi.Client, ghtest.FlakyScenario) {
	t.Helper()
	s := ghtest.NewServer(t, token)
	sc := ghtest.SeedFlakyHistory(s, "org/app", lastDay)
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, sc
}

func options(sc ghtest.FlakyScenario) Options {
	return Options{Owner: "org", Repo: "app", End: lastDay, DefaultBranch: sc.DefaultBranch}
}

func testIDs(c Candidate) []string {
	var ids []string
	for _, r := range c.Tests {
		ids = append(ids, r.Test)
	}
	return ids
}

func allTests(cs []Candidate) []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, testIDs(c)...)
	}
	return ids
}

func TestScan_findsTheFlakyClustersRankedByWaste(t *testing.T) {
	t.Parallel()
	s, c, sc := scenario(t)
	res, err := Scan(t.Context(), c, options(sc))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	var wasted []time.Duration
	for _, cand := range res.Candidates {
		got = append(got, testIDs(cand))
		wasted = append(wasted, cand.Wasted)
	}
	if !slices.EqualFunc(got, sc.Flaky, slices.Equal) {
		t.Fatalf("clusters = %v, want %v", got, sc.Flaky)
	}
	if !slices.Equal(wasted, sc.FlakyWasted) {
		t.Errorf("wasted = %v, want %v", wasted, sc.FlakyWasted)
	}
	for _, id := range sc.NotFlaky {
		if slices.Contains(allTests(res.Candidates), id) {
			t.Errorf("%s reported flaky", id)
		}
	}
	equal(t, "window", []string{res.From.Format(time.DateOnly), res.To.Format(time.DateOnly)},
		[]string{sc.First.Format(time.DateOnly), sc.Last.Format(time.DateOnly)})
	equal(t, "runs", res.Runs, sc.Runs)
	equal(t, "logs read (every failed job of a non-cancelled run)", res.Logs, sc.FailedJobs)
	equal(t, "ignored", res.Ignored, Ignored{CancelledRuns: 1, NonTestFailure: 1, Infrastructure: 1})
	equal(t, "truncated days", len(res.TruncatedDays), 0)
	// The scan's own count of API calls is the fake's.
	api := 0
	for _, r := range s.Requests() {
		if r.Host == "api" {
			api++
		}
	}
	equal(t, "API calls", res.APICalls, api)
	equal(t, "listing calls (one per day)", s.CountMatching("GET", "/repos/org/app/actions/runs"), sc.Days)
	t.Logf("API calls: %d for %d days, %d runs, %d attempts (%.1f per day): %d listings, %d attempt job listings, %d log requests",
		res.APICalls, sc.Days, sc.Runs, sc.Attempts, float64(res.APICalls)/float64(sc.Days), s.CountMatching("GET", "/repos/org/app/actions/runs"),
		s.CountMatching("GET", "/repos/org/app/actions/runs/*/attempts/*/jobs"), s.CountMatching("GET", "/repos/org/app/actions/jobs/*/logs"))
}

func TestScan_evidence(t *testing.T) {
	t.Parallel()
	_, c, sc := scenario(t)
	res, err := Scan(t.Context(), c, options(sc))
	if err != nil {
		t.Fatal(err)
	}
	byFirst := map[string]Candidate{}
	for _, cand := range res.Candidates {
		byFirst[cand.Tests[0].Test] = cand
	}
	shutdown := byFirst["TestServerShutdown"]
	equal(t, "shutdown signals", shutdown.Signals, []string{SignalAcrossCommit})
	equal(t, "shutdown failures", len(shutdown.Failures), 3)
	equal(t, "shutdown commits", len(shutdown.Commits), 3)
	for _, p := range shutdown.Passes {
		if p.Branch != "main" || p.RunCreated.Before(shutdown.Failures[0].RunCreated) || p.RunCreated.After(shutdown.Failures[2].RunCreated) {
			t.Errorf("pass %+v is not between the failures on main", p)
		}
	}
	ref := shutdown.Tests[0]
	equal(t, "ref", ref, TestRef{Workflow: "CI", WorkflowID: 1, Job: "test (ubuntu-latest)", Package: "example.com/app/api", Test: "TestServerShutdown"})
	if len(shutdown.Messages) != 1 || !strings.Contains(shutdown.Messages[0], "context deadline exceeded") {
		t.Errorf("messages = %q", shutdown.Messages)
	}

	pool := byFirst["TestWorkerDrain"]
	equal(t, "cluster signals", pool.Signals, []string{SignalSameCode, SignalAcrossCommit})
	prPass := false
	for _, p := range pool.Passes {
		if p.Event == "pull_request" {
			prPass = p.Attempt == 2 && p.RunID == pool.Failures[1].RunID && pool.Failures[1].Attempt == 1
		}
	}
	if !prPass {
		t.Errorf("the pull_request re-run is not the same-code evidence: failures %+v passes %+v", pool.Failures, pool.Passes)
	}

	cache := byFirst["TestCacheEviction"]
	if !slices.Contains(cache.Signals, SignalSameCode) {
		t.Errorf("cache signals = %v", cache.Signals)
	}
	for i, f := range cache.Failures {
		if f.Attempt != 1 || f.Duration != 6*time.Minute || !strings.HasSuffix(f.AttemptURL, "/attempts/1") ||
			!strings.HasPrefix(f.RunURL, "https://github.com/org/app/actions/runs/") || f.JobURL == "" {
			t.Errorf("failure %d = %+v", i, f)
		}
	}
}

func TestScan_withoutDefaultBranchOnlySameCode(t *testing.T) {
	t.Parallel()
	_, c, sc := scenario(t)
	opt := options(sc)
	opt.DefaultBranch = ""
	res, err := Scan(t.Context(), c, opt)
	if err != nil {
		t.Fatal(err)
	}
	// TestServerShutdown never passed on its own commits: no same-code signal.
	equal(t, "tests", allTests(res.Candidates), []string{"TestWorkerDrain", "TestWorkerPool", "TestCacheEviction"})
}

func TestScan_truncatedDayIsReportedAndUnused(t *testing.T) {
	t.Parallel()
	s, c, sc := scenario(t)
	day2 := sc.First.AddDate(0, 0, 2)
	for i := range ghapi.MaxFilteredRuns {
		s.AddHistoryRun("org/app", ghtest.HistoryRun{Name: "Docs", WorkflowID: 9, HeadSHA: fmt.Sprintf("%040d", i),
			Created: day2.Add(time.Duration(i) * time.Second), Attempts: []ghtest.Attempt{{Jobs: []ghtest.HistoryJob{{Name: "docs"}}}}})
	}
	res, err := Scan(t.Context(), c, options(sc))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "truncated", res.TruncatedDays, []time.Time{day2})
	for _, cand := range res.Candidates {
		for _, o := range append(cand.Failures, cand.Passes...) {
			if o.RunCreated.Format(time.DateOnly) == day2.Format(time.DateOnly) {
				t.Errorf("%v uses run %d of the truncated day", testIDs(cand), o.RunID)
			}
		}
	}
	// Day 6 still shows TestCacheEviction failing and its re-run passing.
	if !slices.Contains(allTests(res.Candidates), "TestCacheEviction") {
		t.Errorf("candidates = %v", allTests(res.Candidates))
	}
}

func TestScan_logBudgetRefusesAPartialScan(t *testing.T) {
	t.Parallel()
	_, c, sc := scenario(t)
	opt := options(sc)
	opt.MaxLogs = 3
	if _, err := Scan(t.Context(), c, opt); err == nil || !strings.Contains(err.Error(), "more than 3 failed jobs") {
		t.Fatalf("err = %v", err)
	}
}

func TestScan_badOptionsAndCancel(t *testing.T) {
	t.Parallel()
	s, c, sc := scenario(t)
	if _, err := Scan(t.Context(), c, Options{Repo: "app"}); err == nil {
		t.Error("no owner accepted")
	}
	opt := options(sc)
	opt.Days = -1
	if _, err := Scan(t.Context(), c, opt); err == nil {
		t.Error("negative window accepted")
	}
	ctx, cancel := contextWithCancel(t)
	cancel()
	before := len(s.Requests())
	if _, err := Scan(ctx, c, options(sc)); err == nil {
		t.Error("cancelled scan succeeded")
	}
	equal(t, "requests after cancel", len(s.Requests()), before)
}

func TestScan_faults(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	sc := ghtest.SeedFlakyHistory(s, "org/app", lastDay)
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1,
		Retry: ghapi.RetryPolicy{BaseBackoff: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	// A transient 502 on a day's listing is retried by ghapi; the first
	// failed job's log has expired.
	s.Inject(ghtest.Fault{Method: "GET", Path: "/repos/org/app/actions/runs", Nth: 3, Status: http.StatusBadGateway})
	s.Inject(ghtest.Fault{Method: "GET", Path: "/repos/org/app/actions/jobs/*", Status: http.StatusGone})
	res, err := Scan(t.Context(), c, options(sc))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, cand := range res.Candidates {
		got = append(got, testIDs(cand))
	}
	if !slices.EqualFunc(got, sc.Flaky, slices.Equal) {
		t.Errorf("clusters = %v, want %v", got, sc.Flaky)
	}
	equal(t, "logs gone", res.Ignored.LogsGone, 1)
	equal(t, "faults fired", s.Fired(), 2)
	api := 0
	for _, r := range s.Requests() {
		if r.Host == "api" {
			api++
		}
	}
	equal(t, "API calls (the retry is the transport's)", res.APICalls, api-1)

	// A token without actions: read stops the scan with a clear error.
	s.Inject(ghtest.Fault{Method: "GET", Path: "/repos/org/app/actions/runs/*", Status: http.StatusForbidden, Times: -1})
	_, err = Scan(t.Context(), c, options(sc))
	if !errors.Is(err, ghapi.ErrForbidden) || !strings.Contains(err.Error(), "actions: read") {
		t.Errorf("err = %v", err)
	}
}

func TestScan_greenJobWithAFailedStepIsNoPass(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	s.AddRepo("org/app", "main", nil)
	at := lastDay.Add(-2 * time.Hour)
	// The re-run's job is green only because its test step ran under
	// continue-on-error: the test did not pass there.
	s.AddHistoryRun("org/app", ghtest.HistoryRun{HeadSHA: strings.Repeat("a", 40), Created: at, Attempts: []ghtest.Attempt{
		{Jobs: []ghtest.HistoryJob{{Name: "test", Conclusion: "failure", Log: ghtest.ScenarioLog(at, "TestCacheEviction")}}},
		{Jobs: []ghtest.HistoryJob{{Name: "test", Conclusion: "success", Steps: []ghtest.Step{{Name: "Set up job", Conclusion: "success"},
			{Name: "Run go test -v ./...", Conclusion: "failure"}}}}},
	}})
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Scan(t.Context(), c, Options{Owner: "org", Repo: "app", End: lastDay, Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "candidates", len(res.Candidates), 0)
}
