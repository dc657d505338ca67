package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/mini-agent/internal/golden"
)

func sampleReport() *Report {
	r := &Report{Model: "script", Tasks: []TaskResult{
		{Name: "b", Resolved: false, Steps: 6, StopReason: "max_steps", Tokens: 300, WallS: 2, ToolErrors: 2, Reason: "status | x"},
		{Name: "a", Resolved: true, Steps: 4, StopReason: "final_message", Tokens: 100, WallS: 1, PolicyDenials: 1, PatchRefusals: 1, CostUSD: 0.5, CostKnown: true},
		{Name: "c", Skipped: true, Reason: "toolchain missing: `pytest --version`"},
	}}
	r.Sum()
	return r
}

func TestReportTotals(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	want := Totals{Tasks: 3, Ran: 2, Skipped: 1, Resolved: 1, ResolvedRate: 0.5, MeanSteps: 5, Tokens: 400,
		CostUSD: 0.5, CostKnown: true, WallS: 3, ToolErrors: 2, PolicyDenials: 1, PatchRefusals: 1}
	if diff := cmp.Diff(want, r.Totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	if r.Tasks[0].Name != "a" || r.OK() {
		t.Errorf("not sorted or OK with a failure: %+v", r.Tasks)
	}
	var md strings.Builder
	r.Markdown(&md)
	for _, w := range []string{
		"| a | yes | final_message | 4 | 0 | 1 | 1 | 100 | 0.5000 | 1.0 |  |",
		"| b | **no** | max_steps | 6 | 2 | 0 | 0 | 300 | n/a | 2.0 | status \\| x |",
		"| c | skipped |",
		"| **total** | **1/2 (50%)** | | mean 5.0 | 2 | 1 | 1 | 400 | 0.5000 | 3.0 | 1 skipped |",
	} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q:\n%s", w, md.String())
		}
	}
}

func TestReportJSONAndMerge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	full := sampleReport()
	var paths []string
	for i, part := range [][]TaskResult{full.Tasks[:1], full.Tasks[1:]} {
		r := &Report{Model: "openai/gpt-x", Shard: "x", Tasks: part}
		r.Sum()
		p := filepath.Join(dir, "report-"+string(rune('1'+i))+".json")
		if err := r.WriteJSON(p); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var reports []*Report
	for _, p := range paths {
		r, err := ReadReport(p)
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, r)
	}
	merged, err := Merge(reports...)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Report{Model: "openai/gpt-x", Tasks: full.Tasks, Totals: full.Totals}, merged); diff != "" {
		t.Errorf("merged report (-want +got):\n%s", diff)
	}
	if _, err := Merge(reports[0], reports[0]); err == nil || !strings.Contains(err.Error(), "more than one report") {
		t.Errorf("overlapping shards merged: %v", err)
	}
	data, _ := os.ReadFile(paths[0])
	for _, key := range []string{`"name"`, `"resolved"`, `"steps"`, `"stop_reason"`, `"tokens"`, `"wall_s"`,
		`"tool_errors"`, `"policy_denials"`, `"patch_refusals"`, `"cost_usd"`, `"skipped"`, `"totals"`, `"resolved_rate"`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON report lacks %s", key)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"tasks":[],"totals":{},"extra":1}`), 0o644)
	if _, err := ReadReport(bad); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("unknown field accepted: %v", err)
	}
}

// The rendered markdown report, byte for byte. After an intended change:
// go test ./eval -run ReportMarkdownGolden -update, then review git diff.
func TestReportMarkdownGolden(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	r.Shard = "2/3"
	var md strings.Builder
	r.Markdown(&md)
	golden.AssertString(t, filepath.Join("testdata", "golden", "report.md"), md.String())
}
