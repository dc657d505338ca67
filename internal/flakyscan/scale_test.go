package flakyscan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
)

// TestScan_apiCallsAtScale scans a busier history (55 runs a day: 40 green
// pull_request runs, 12 green pushes to main, a failing push re-run green,
// a failing pull_request run) and reports the API calls per day: a green
// pull_request run costs nothing beyond its share of the day's listing.
func TestScan_apiCallsAtScale(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	s.AddRepo("org/busy", "main", map[string]string{"go.mod": "module example.com/app\n"})
	first := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	greenPR := map[int64]bool{}
	job := func(start time.Time, failing ...string) ghtest.HistoryJob {
		j := ghtest.HistoryJob{Name: "test (ubuntu-latest)"}
		if len(failing) > 0 {
			j.Conclusion, j.Log = "failure", ghtest.ScenarioLog(start, failing...)
		}
		return j
	}
	for d := range 14 {
		day := first.AddDate(0, 0, d)
		for i := range 40 {
			at := day.Add(time.Duration(i) * 20 * time.Minute)
			id := s.AddHistoryRun("org/busy", ghtest.HistoryRun{Event: "pull_request", HeadBranch: fmt.Sprintf("f-%d-%d", d, i),
				HeadSHA: fmt.Sprintf("%040x", d*1000+i), Created: at, Attempts: []ghtest.Attempt{{Jobs: []ghtest.HistoryJob{job(at)}}}})
			greenPR[id] = true
		}
		for i := range 12 {
			at := day.Add(time.Duration(i)*time.Hour + 5*time.Minute)
			s.AddHistoryRun("org/busy", ghtest.HistoryRun{HeadSHA: fmt.Sprintf("%040x", 500000+d*100+i), Created: at,
				Attempts: []ghtest.Attempt{{Jobs: []ghtest.HistoryJob{job(at)}}}})
		}
		at := day.Add(13 * time.Hour)
		s.AddHistoryRun("org/busy", ghtest.HistoryRun{HeadSHA: fmt.Sprintf("%040x", 900000+d), Created: at,
			Attempts: []ghtest.Attempt{{Jobs: []ghtest.HistoryJob{job(at, "TestCacheEviction")}}, {Jobs: []ghtest.HistoryJob{job(at)}}}})
		at = day.Add(15 * time.Hour)
		s.AddHistoryRun("org/busy", ghtest.HistoryRun{Event: "pull_request", HeadBranch: "wip", HeadSHA: fmt.Sprintf("%040x", 950000+d),
			Created: at, Attempts: []ghtest.Attempt{{Jobs: []ghtest.HistoryJob{job(at, "TestParseDate")}}}})
	}
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Scan(t.Context(), c, Options{Owner: "org", Repo: "busy", End: first.AddDate(0, 0, 13), DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Candidates) != 1 || res.Candidates[0].Tests[0].Test != "TestCacheEviction" {
		t.Fatalf("candidates = %v", allTests(res.Candidates))
	}
	for _, r := range s.Requests() {
		if !strings.Contains(r.Path, "/attempts/") {
			continue
		}
		var id, n int64
		if _, err := fmt.Sscanf(r.Path, "/repos/org/busy/actions/runs/%d/attempts/%d/jobs", &id, &n); err == nil && greenPR[id] {
			t.Errorf("jobs of green pull_request run %d were listed", id)
		}
	}
	api := len(s.Requests()) - s.LogAuthViolations()
	for _, r := range s.Requests() {
		if r.Host != "api" {
			api--
		}
	}
	equal(t, "API calls", res.APICalls, api)
	t.Logf("busy history: %d runs over 14 days, %d API calls (%.1f per day): %d listing pages, %d attempt job listings, %d log requests",
		res.Runs, res.APICalls, float64(res.APICalls)/14, s.CountMatching("GET", "/repos/org/busy/actions/runs"),
		s.CountMatching("GET", "/repos/org/busy/actions/runs/*/attempts/*/jobs"), s.CountMatching("GET", "/repos/org/busy/actions/jobs/*/logs"))
}
