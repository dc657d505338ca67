package ghapi

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
)

func historyScene(t *testing.T) (*ghtest.Server, *Client) {
	t.Helper()
	s := ghtest.NewServer(t, testToken)
	s.AddRepo("o/r", "main", map[string]string{"go.mod": "module x\n"})
	c, err := New(t.Context(), Options{Token: testToken, BaseURL: s.URL, WriteInterval: -1, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

var day0 = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)

func greenRun(created time.Time) ghtest.HistoryRun {
	return ghtest.HistoryRun{HeadSHA: "abc", Created: created, Attempts: []ghtest.Attempt{{Jobs: []ghtest.HistoryJob{{Name: "test"}}}}}
}

func TestRunsOnDay_filtersByDayAndPaginates(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	for i := range 150 { // 150 runs on day0, spread over the day
		s.AddHistoryRun("o/r", greenRun(day0.Add(time.Duration(i)*9*time.Minute)))
	}
	s.AddHistoryRun("o/r", greenRun(day0.Add(-time.Second)))             // the day before
	s.AddHistoryRun("o/r", greenRun(day0.Add(24*time.Hour)))             // the day after
	d, err := c.RunsOnDay(t.Context(), "o", "r", day0.Add(13*time.Hour)) // any time of the day
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "day", d.Day, day0)
	equal(t, "truncated", d.Truncated, false)
	equal(t, "total", d.TotalCount, 150)
	equal(t, "runs", len(d.Runs), 150)
	equal(t, "requests", d.Requests, 2)
	equal(t, "fake's count", s.CountMatching("GET", "/repos/o/r/actions/runs"), 2)
	for _, r := range s.Requests() {
		if r.Path == "/repos/o/r/actions/runs" && r.Query.Get("created") != "2026-03-10" {
			t.Errorf("created = %q, want 2026-03-10", r.Query.Get("created"))
		}
	}
	for _, r := range d.Runs {
		if r.CreatedAt.Format(time.DateOnly) != "2026-03-10" || r.Conclusion != "success" || r.RunAttempt != 1 || r.HeadSHA != "abc" {
			t.Fatalf("run %+v", r)
		}
	}
}

func TestRunsOnDay_overTheCapIsTruncatedNotPartial(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	for i := range MaxFilteredRuns + 1 {
		s.AddHistoryRun("o/r", greenRun(day0.Add(time.Duration(i)*time.Second)))
	}
	d, err := c.RunsOnDay(t.Context(), "o", "r", day0)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "truncated", d.Truncated, true)
	equal(t, "total", d.TotalCount, MaxFilteredRuns+1)
	equal(t, "runs", len(d.Runs), 0)
	equal(t, "requests (one page tells)", d.Requests, 1)

	// Exactly at the cap: complete.
	s2, c2 := historyScene(t)
	for i := range MaxFilteredRuns {
		s2.AddHistoryRun("o/r", greenRun(day0.Add(time.Duration(i)*time.Second)))
	}
	d, err = c2.RunsOnDay(t.Context(), "o", "r", day0)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "truncated at the cap", d.Truncated, false)
	equal(t, "runs at the cap", len(d.Runs), MaxFilteredRuns)
}

func TestRunsOnDay_errorsAreClassified(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	s.Inject(ghtest.Fault{Method: "GET", Path: "/repos/o/r/actions/runs", Status: http.StatusForbidden, Times: -1})
	_, err := c.RunsOnDay(t.Context(), "o", "r", day0)
	var ae *APIError
	if !errors.Is(err, ErrForbidden) || !errors.As(err, &ae) || ae.Permission != "actions: read" {
		t.Fatalf("err = %v", err)
	}
}

func TestRunsByDay_oneListingPerDayOldestFirst(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	s.AddHistoryRun("o/r", greenRun(day0.Add(-2*24*time.Hour+time.Hour)))
	s.AddHistoryRun("o/r", greenRun(day0.Add(time.Hour)))
	ds, err := c.RunsByDay(t.Context(), "o", "r", day0.Add(5*time.Hour), 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var n []int
	for _, d := range ds {
		got = append(got, d.Day.Format(time.DateOnly))
		n = append(n, len(d.Runs))
	}
	equal(t, "days", got, []string{"2026-03-08", "2026-03-09", "2026-03-10"})
	equal(t, "runs per day", n, []int{1, 0, 1})
	if _, err := c.RunsByDay(t.Context(), "o", "r", day0, 0); err == nil {
		t.Error("a zero-day window was accepted")
	}
}

func TestJobsOfAttempt(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	start := day0.Add(9 * time.Hour)
	id := s.AddHistoryRun("o/r", ghtest.HistoryRun{HeadSHA: "abc", Created: start, Attempts: []ghtest.Attempt{
		{Jobs: []ghtest.HistoryJob{{ID: 11, Name: "test", Conclusion: "failure", Duration: 5 * time.Minute}, {ID: 12, Name: "lint"}}},
		{Jobs: []ghtest.HistoryJob{{ID: 21, Name: "test", Duration: 3 * time.Minute}}},
	}})
	a1, err := c.JobsOfAttempt(t.Context(), "o", "r", id, 1)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "jobs", len(a1.Jobs), 2)
	j := a1.Jobs[0]
	equal(t, "job", []any{j.ID, j.Name, j.Conclusion, j.RunAttempt, j.Failed(), j.Duration(), j.FailedSteps()},
		[]any{int64(11), "test", "failure", int64(1), true, 5 * time.Minute, []string{"Run go test -v ./..."}})
	equal(t, "started", j.StartedAt, start)
	equal(t, "steps", len(j.Steps), 3)
	a2, err := c.JobsOfAttempt(t.Context(), "o", "r", id, 2)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "attempt 2", []any{len(a2.Jobs), a2.Jobs[0].ID, a2.Jobs[0].Conclusion, a2.Jobs[0].RunAttempt, a2.Requests},
		[]any{1, int64(21), "success", int64(2), 1})
	equal(t, "attempts endpoint calls", s.CountMatching("GET", "/repos/*/*/actions/runs/*/attempts/*/jobs"), 2)

	if _, err := c.JobsOfAttempt(t.Context(), "o", "r", id, 3); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing attempt: err = %v", err)
	}
	before := len(s.Requests())
	if _, err := c.JobsOfAttempt(t.Context(), "o", "r", id, 0); err == nil || len(s.Requests()) != before {
		t.Errorf("attempt 0: err = %v, requests made = %d", err, len(s.Requests())-before)
	}
	// The single-run endpoint sees the latest attempt.
	r, err := c.WorkflowRun(t.Context(), "o", "r", id)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "latest", []any{r.RunAttempt, r.Conclusion}, []any{2, "success"})
}
