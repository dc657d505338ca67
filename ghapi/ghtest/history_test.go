package ghtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/failure"
)

func TestGoTestLogIsWhatTheExtractorReads(t *testing.T) {
	t.Parallel()
	log := ghtest.GoTestLog(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
		ghtest.GoPackage{Path: "example.com/app/store", Tests: []ghtest.GoTest{{Name: "TestGet"},
			{Name: "TestEvict", Fail: true, File: "cache_test.go", Line: 57, Message: "len=3, want 2"}}},
		ghtest.GoPackage{Path: "example.com/app/api", Tests: []ghtest.GoTest{{Name: "TestRoutes"}}})
	if !strings.HasPrefix(log, "\ufeff2026-03-01T09:00:00.1370000Z ") {
		t.Errorf("log does not start with a BOM and an Actions timestamp: %.60q", log)
	}
	fc, err := failure.Extract(strings.NewReader(log), failure.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fc.Failures) != 1 {
		t.Fatalf("failures = %+v", fc.Failures)
	}
	f := fc.Failures[0]
	equal(t, "failure", []string{f.ID, f.Package, f.Message, fc.Step}, []string{"TestEvict", "example.com/app/store", "len=3, want 2", "Run go test -v ./..."})
	if !strings.HasSuffix(f.Location, "cache_test.go:57") {
		t.Errorf("location = %q", f.Location)
	}
	fc, err = failure.Extract(strings.NewReader(ghtest.LintLog(time.Now())), failure.Options{})
	if err != nil || len(fc.Failures) != 0 {
		t.Errorf("lint log: failures %+v, err %v", fc, err)
	}
}

func get(t *testing.T, s *ghtest.Server, path string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", s.URL+strings.TrimPrefix(path, "/"), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	_ = json.Unmarshal(b, &v)
	return resp.StatusCode, v
}

func TestHistoryRoutes(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	sc := ghtest.SeedFlakyHistory(s, "org/app", time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC))
	code, v := get(t, s, "/repos/org/app/actions/runs?created=2026-03-06")
	equal(t, "status", code, 200)
	equal(t, "day 5's runs", int(v["total_count"].(float64)), len(sc.DayOf[5]))
	if code, _ := get(t, s, "/repos/org/app/actions/runs?created=%3E2026-03-01"); code != 422 {
		t.Errorf("a range the fake does not model: status %d", code)
	}
	id := sc.DayOf[2][0] // day 2's push: failed, then passed on re-run
	code, v = get(t, s, "/repos/org/app/actions/runs/"+itoa(id)+"/attempts/1")
	equal(t, "attempt 1", []any{code, v["conclusion"], v["run_attempt"]}, []any{200, "failure", float64(1)})
	code, v = get(t, s, "/repos/org/app/actions/runs/"+itoa(id)+"/attempts/2")
	equal(t, "attempt 2", []any{code, v["conclusion"], v["run_attempt"]}, []any{200, "success", float64(2)})
	if code, _ := get(t, s, "/repos/org/app/actions/runs/"+itoa(id)+"/attempts/3/jobs"); code != 404 {
		t.Errorf("attempt 3: status %d", code)
	}
	equal(t, "CountMatching", s.CountMatching("GET", "/repos/*/*/actions/runs/*/attempts/*"), 2)
	equal(t, "CountMatching jobs", s.CountMatching("GET", "/repos/*/*/actions/runs/*/attempts/*/jobs"), 1)
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
