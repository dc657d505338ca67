package flakyissue

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/flakyscan"
)

const token = "ghs_fake_token_for_flakyissue"

var lastDay = time.Date(2026, 3, 14, 18, 0, 0, 0, time.UTC)

type scene struct {
	s  *ghtest.Server
	c  *ghapi.Client
	sc ghtest.FlakyScenario
}

func newScene(t *testing.T) *scene {
	t.Helper()
	s := ghtest.NewServer(t, token)
	sc := ghtest.SeedFlakyHistory(s, "org/app", lastDay)
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return &scene{s, c, sc}
}

// issueCalls counts the requests to the issues API.
func (sc *scene) issueCalls() int {
	n := 0
	for _, r := range sc.s.Requests() {
		if strings.HasPrefix(r.Path, "/repos/org/app/issues") {
			n++
		}
	}
	return n
}

// scheduled is one scheduled run: scan the history, then publish.
func (sc *scene) scheduled(t *testing.T, opt Options) (*flakyscan.Result, *Outcome) {
	t.Helper()
	before := sc.issueCalls()
	defer func() { t.Logf("issues API calls of this run: %d", sc.issueCalls()-before) }()
	res, err := flakyscan.Scan(t.Context(), sc.c, flakyscan.Options{Owner: "org", Repo: "app", End: lastDay, DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	opt.Owner, opt.Repo = "org", "app"
	out, err := Publish(t.Context(), sc.c, res, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res, out
}

func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s =\n%+v\nwant\n%+v", what, got, want)
	}
}

func issueByTitle(t *testing.T, s *ghtest.Server, prefix string) ghtest.Issue {
	t.Helper()
	for _, is := range s.Issues("org/app") {
		if strings.HasPrefix(is.Title, prefix) {
			return is
		}
	}
	t.Fatalf("no issue titled %q in %+v", prefix, s.Issues("org/app"))
	return ghtest.Issue{}
}

func commentsOn(s *ghtest.Server) int {
	n := 0
	for _, is := range s.Issues("org/app") {
		n += len(s.Comments("org/app", is.Number))
	}
	return n
}

func TestPublish_threeScheduledRuns(t *testing.T) {
	t.Parallel()
	sc := newScene(t)

	// Run 1: one issue per cluster, nothing else.
	_, out := sc.scheduled(t, Options{})
	equal(t, "run 1 created", len(out.Created), 3)
	equal(t, "run 1 commented", len(out.Commented), 0)
	issues := sc.s.Issues("org/app")
	var titles []string
	for _, is := range issues {
		titles = append(titles, is.Title)
		equal(t, "labels of #"+fmt.Sprint(is.Number), is.Labels, []string{DefaultLabel})
	}
	equal(t, "titles (rank order)", titles, []string{"Flaky test: TestServerShutdown",
		"Flaky tests: TestWorkerDrain and 1 more failing with it", "Flaky test: TestCacheEviction"})

	// Run 2: the same history: nothing posted.
	_, out = sc.scheduled(t, Options{})
	equal(t, "run 2", []int{len(out.Created), len(out.Commented), len(out.Unchanged)}, []int{0, 0, 3})
	equal(t, "run 2's issue per candidate (rank order)", out.Issues, []int{issues[0].Number, issues[1].Number, issues[2].Number})
	equal(t, "issues after run 2", len(sc.s.Issues("org/app")), 3)
	equal(t, "comments after run 2", commentsOn(sc.s), 0)

	// The maintainer dismisses the shutdown issue; then both it and the cache
	// test fail again on the last day.
	shutdown := issueByTitle(t, sc.s, "Flaky test: TestServerShutdown")
	sc.s.CloseIssue("org/app", shutdown.Number)
	start := sc.sc.Last.Add(20 * time.Hour)
	sc.s.AddHistoryRun("org/app", ghtest.HistoryRun{Event: "push", HeadBranch: "main", HeadSHA: strings.Repeat("d", 40), Created: start,
		Attempts: []ghtest.Attempt{{Jobs: []ghtest.HistoryJob{{Name: "test (ubuntu-latest)", Conclusion: "failure", Duration: 9 * time.Minute,
			Log: ghtest.ScenarioLog(start, "TestServerShutdown", "TestParseDate")}}}}})
	sc.s.AddHistoryRun("org/app", ghtest.HistoryRun{Event: "pull_request", HeadBranch: "feature-x", HeadSHA: strings.Repeat("e", 40),
		Created: start.Add(time.Hour), Attempts: []ghtest.Attempt{
			{Jobs: []ghtest.HistoryJob{{Name: "test (ubuntu-latest)", Conclusion: "failure", Duration: 6 * time.Minute,
				Log: ghtest.ScenarioLog(start.Add(time.Hour), "TestCacheEviction")}}},
			{Jobs: []ghtest.HistoryJob{{Name: "test (ubuntu-latest)", Duration: 3 * time.Minute}}},
		}})

	// Run 3: comments on the two issues with new evidence, the closed one
	// included, and no reopen, no new issue.
	_, out = sc.scheduled(t, Options{})
	cache := issueByTitle(t, sc.s, "Flaky test: TestCacheEviction")
	equal(t, "run 3 created", len(out.Created), 0)
	got := slices.Clone(out.Commented)
	slices.Sort(got)
	want := []int{shutdown.Number, cache.Number}
	slices.Sort(want)
	equal(t, "run 3 commented", got, want)
	equal(t, "run 3 unchanged", len(out.Unchanged), 1)
	equal(t, "dismissed issue state", issueByTitle(t, sc.s, "Flaky test: TestServerShutdown").State, "closed")
	equal(t, "issue edits (reopen)", sc.s.CountMatching("PATCH", "/repos/org/app/issues/*"), 0)
	cs := sc.s.Comments("org/app", shutdown.Number)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "1 more failed attempt") || !strings.Contains(cs[0].Body, "`ddddddd`") {
		t.Errorf("comment on the dismissed issue = %+v", cs)
	}

	// Run 4: what the comments reported is not reported again.
	_, out = sc.scheduled(t, Options{})
	equal(t, "run 4", []int{len(out.Created), len(out.Commented), len(out.Unchanged)}, []int{0, 0, 3})
	equal(t, "comments after run 4", commentsOn(sc.s), 2)
	equal(t, "issues after run 4", len(sc.s.Issues("org/app")), 3)
}

func TestPublish_issueBody(t *testing.T) {
	t.Parallel()
	sc := newScene(t)
	res, err := flakyscan.Scan(t.Context(), sc.c, flakyscan.Options{Owner: "org", Repo: "app", End: lastDay, DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	var pool flakyscan.Candidate
	for _, c := range res.Candidates {
		if c.Tests[0].Test == "TestWorkerDrain" {
			pool = c
		}
	}
	proofs := map[flakyscan.TestRef]Proof{pool.Tests[1]: {Runs: 200, Failures: 7, Rate: 0.035, Low: 0.017, High: 0.07,
		Command: "go test -run '^TestWorkerPool$' -count=200 -shuffle=on ./queue", Seed: "1712345678"}}
	if _, err := Publish(t.Context(), sc.c, res, Options{Owner: "org", Repo: "app", Proofs: proofs}); err != nil {
		t.Fatal(err)
	}
	body := issueByTitle(t, sc.s, "Flaky tests: TestWorkerDrain").Body
	for _, want := range []string{
		Marker(pool.Tests[0]), Marker(pool.Tests[1]),
		"`TestWorkerPool` in `example.com/app/queue`",
		"| failed attempts | 3, on 3 commit(s) |",
		"| CI time wasted | 15.0 min",
		"7 failures in 200 runs = 3.5% (95% interval 1.7%–7.0%)",
		"go test -run '^TestWorkerPool$' -count=200 -shuffle=on ./queue", "`1712345678`",
		"worker 3 never finished: deadline exceeded",
		"(https://github.com/org/app/actions/runs/",
		"/attempts/2)",
		"@\u200boctocat",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	// Log text cannot forge a marker nor mention anyone.
	if strings.Contains(body, "<!-- mini-agent:flaky id=forged") || strings.Contains(body, " @octocat") {
		t.Errorf("untrusted log text reached the body raw:\n%s", body)
	}
	hidden := strings.Count(body, "<!--")
	equal(t, "hidden lines (two markers and the seen list)", hidden, 3)
}

func TestPublish_budget(t *testing.T) {
	t.Parallel()
	sc := newScene(t)
	_, out := sc.scheduled(t, Options{MaxNewIssues: 2})
	equal(t, "created", len(out.Created), 2)
	equal(t, "deferred", out.Deferred, []string{"TestCacheEviction"})
	equal(t, "issue per candidate (the deferred one has none)", out.Issues, []int{out.Created[0], out.Created[1], 0})
	_, out = sc.scheduled(t, Options{MaxNewIssues: 2})
	equal(t, "next run created", len(out.Created), 1)
	equal(t, "next run unchanged", len(out.Unchanged), 2)
	equal(t, "issues", len(sc.s.Issues("org/app")), 3)
	_, out = sc.scheduled(t, Options{MaxNewIssues: -1})
	equal(t, "no-new-issue run", []int{len(out.Created), len(out.Unchanged)}, []int{0, 3})
}

func TestPublish_defaultBudgetIsFive(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	s.AddRepo("org/app", "main", map[string]string{"go.mod": "module example.com/app\n"})
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	res := &flakyscan.Result{From: lastDay.AddDate(0, 0, -13), To: lastDay}
	for i := range 7 {
		res.Candidates = append(res.Candidates, flakyscan.Candidate{
			Tests:    []flakyscan.TestRef{{Workflow: "CI", WorkflowID: 1, Job: "test", Package: "example.com/app", Test: fmt.Sprintf("TestFlaky%d", i)}},
			Signals:  []string{flakyscan.SignalSameCode},
			Failures: []flakyscan.Occurrence{{RunID: int64(100 + i), Attempt: 1, JobID: int64(200 + i), HeadSHA: strings.Repeat("a", 40)}},
		})
	}
	out, err := Publish(t.Context(), c, res, Options{Owner: "org", Repo: "app"})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "created", len(out.Created), DefaultMaxNewIssues)
	equal(t, "deferred", out.Deferred, []string{"TestFlaky5", "TestFlaky6"})
	equal(t, "issues", len(s.Issues("org/app")), 5)
}

func TestPublish_nothingFoundPostsNothing(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	s.AddRepo("org/app", "main", nil)
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Publish(t.Context(), c, &flakyscan.Result{}, Options{Owner: "org", Repo: "app"})
	if err != nil || len(out.Created)+len(out.Commented) != 0 {
		t.Fatalf("out = %+v, err = %v", out, err)
	}
	equal(t, "requests", len(s.Requests()), 0)
}

func TestPublish_aPersonsIssueWithTheMarkerIsNotOurs(t *testing.T) {
	t.Parallel()
	sc := newScene(t)
	res, err := flakyscan.Scan(t.Context(), sc.c, flakyscan.Options{Owner: "org", Repo: "app", End: lastDay, DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	forged := sc.s.AddIssue("org/app", ghtest.Issue{Title: "hijack", Author: "mallory", Labels: []string{DefaultLabel},
		Body: Marker(res.Candidates[0].Tests[0]) + "\n" + seenPrefix + " -->\n"})
	out, err := Publish(t.Context(), sc.c, res, Options{Owner: "org", Repo: "app"})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "created", len(out.Created), 3)
	equal(t, "comments on the person's issue", len(sc.s.Comments("org/app", forged)), 0)
}

func TestPublish_droppedLabelStopsBeforeDuplicates(t *testing.T) {
	t.Parallel()
	sc := newScene(t)
	sc.s.DropIssueLabels("org/app")
	res, err := flakyscan.Scan(t.Context(), sc.c, flakyscan.Options{Owner: "org", Repo: "app", End: lastDay, DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Publish(t.Context(), sc.c, res, Options{Owner: "org", Repo: "app"})
	if err == nil || !strings.Contains(err.Error(), "dropped the label") {
		t.Fatalf("err = %v", err)
	}
	equal(t, "created before stopping", len(out.Created), 1)
	equal(t, "issues", len(sc.s.Issues("org/app")), 1)
}
