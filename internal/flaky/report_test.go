package flaky

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/org/mini-agent/internal/diffcheck"
)

var update = flag.Bool("update", false, "rewrite testdata/report.golden.json")

func TestReportJSONGolden(t *testing.T) {
	flakyEv := &Evidence{ID: "example.com/x.TestOrder"}
	for i := 1; i <= 10; i++ {
		o := Outcome{Seed: "17" + string(rune('0'+i-1)), Flags: "-shuffle=on"}
		if i == 3 || i == 6 || i == 9 {
			o.Failed, o.Message = true, "order_test.go:14: got 2 items, want 1 (took 0.01s)"
		}
		flakyEv.Add(o)
	}
	passing := &Evidence{ID: "example.com/x.TestOK"}
	for i := 0; i < 4; i++ {
		passing.Add(Outcome{})
	}
	var rep Report
	for _, e := range []*Evidence{flakyEv, passing} {
		tr, err := NewTestReport(e)
		if err != nil {
			t.Fatal(err)
		}
		rep.Tests = append(rep.Tests, tr)
	}
	bar, err := NewBar(flakyEv.Runs, flakyEv.Failures, 100)
	if err != nil {
		t.Fatal(err)
	}
	after := &Evidence{}
	for bar.Continue(after) {
		after.Add(Outcome{})
	}
	rep.Fix = NewFixReport(bar.Judge(after), []Check{{Name: "removed-parallel", Severity: "flag", File: "order_test.go", Line: 9, Reason: "t.Parallel() was removed"}})

	got, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "report.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("report JSON differs from %s:\n got: %s\nwant: %s", path, got, want)
	}
	// The shape the issue names, checked by key, not by golden alone.
	var generic map[string]any
	if err := json.Unmarshal(got, &generic); err != nil {
		t.Fatal(err)
	}
	test0 := generic["tests"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "verdict", "runs", "failures", "rate", "ci95", "messages", "seeds"} {
		if _, ok := test0[k]; !ok {
			t.Errorf("tests[0] lacks %q", k)
		}
	}
	fix := generic["fix"].(map[string]any)
	for _, k := range []string{"status", "runs_after", "failures_after", "checks"} {
		if _, ok := fix[k]; !ok {
			t.Errorf("fix lacks %q", k)
		}
	}
	test1 := generic["tests"].([]any)[1].(map[string]any)
	if test1["messages"] == nil || test1["seeds"] == nil {
		t.Errorf("a passing test's messages/seeds encode as null, want []: %v", test1)
	}
}

func TestNewTestReportRefusesNoRuns(t *testing.T) {
	t.Parallel()
	if _, err := NewTestReport(&Evidence{ID: "T"}); err == nil {
		t.Error("report of a test with no runs accepted")
	}
}

// TestCheckMatchesDiffcheckFinding keeps the report's check entries and
// diffcheck's findings one JSON shape, so a finding copies across as is.
func TestCheckMatchesDiffcheckFinding(t *testing.T) {
	t.Parallel()
	f := diffcheck.Finding{Check: diffcheck.NewSleep, Severity: diffcheck.Reject, File: "a_test.go", Line: 7, Reason: "why"}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var c Check
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("a diffcheck finding does not decode as a report check: %v (%s)", err, data)
	}
	if want := (Check{Name: "new-sleep", Severity: "reject", File: "a_test.go", Line: 7, Reason: "why"}); c != want {
		t.Errorf("decoded %+v, want %+v", c, want)
	}
}

func TestFixReportFailedBar(t *testing.T) {
	t.Parallel()
	bar, err := NewBar(10, 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	after := &Evidence{}
	for bar.Continue(after) {
		after.Add(Outcome{Failed: after.Runs == 3, Message: "boom"})
	}
	got, err := json.Marshal(NewFixReport(bar.Judge(after), nil))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":"failed-bar","runs_after":4,"failures_after":1,"failed_runs":[4],"runs_needed":23,"reason":"the test failed 1 of 4 runs after the fix (first failing run: 4)","checks":[]}`
	if string(got) != want {
		t.Errorf("failed-bar report:\n got %s\nwant %s", got, want)
	}
}
