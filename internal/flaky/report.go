package flaky

import (
	"fmt"
	"math"
)

// Report is the JSON document `mini-agent flaky --json` writes:
//
//	{"tests":[{"id","verdict","runs","failures","rate","ci95":[lo,hi],
//	  "messages":[...],"seeds":[...]}],
//	 "fix":{"status","runs_after","failures_after","checks":[...]}}
type Report struct {
	Tests []TestReport `json:"tests"`
	// Fix is absent when no fix was attempted.
	Fix *FixReport `json:"fix,omitempty"`
}

// TestReport is one test's evidence. Rates are rounded to 4 decimals.
type TestReport struct {
	ID       string     `json:"id"`
	Verdict  Verdict    `json:"verdict"`
	Runs     int        `json:"runs"`
	Failures int        `json:"failures"`
	Rate     float64    `json:"rate"`
	CI95     [2]float64 `json:"ci95"`
	Messages []string   `json:"messages"`
	Seeds    []string   `json:"seeds"`
	// Races and Flags are the race reports and the stressor flags of
	// failing runs; omitted when there are none.
	Races []string `json:"races,omitempty"`
	Flags []string `json:"flags,omitempty"`
}

// FixReport is the judgement of a fix.
type FixReport struct {
	Status        FixStatus `json:"status"`
	RunsAfter     int       `json:"runs_after"`
	FailuresAfter int       `json:"failures_after"`
	// FailedRuns are the post-fix runs that failed (1-based), for failed-bar.
	FailedRuns []int `json:"failed_runs,omitempty"`
	// Need is the bar's run count.
	Need   int     `json:"runs_needed"`
	Reason string  `json:"reason"`
	Checks []Check `json:"checks"`
}

// Check is one anti-pattern finding on the fix's diff, as reported.
type Check struct {
	Name     string `json:"name"`
	Severity string `json:"severity"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Reason   string `json:"reason"`
}

// NewTestReport turns evidence into its report; zero runs is refused.
// Slices are never nil, so the JSON has [] rather than null.
func NewTestReport(e *Evidence) (TestReport, error) {
	v, err := e.Verdict()
	if err != nil {
		return TestReport{}, fmt.Errorf("flaky: %s: %w", e.ID, err)
	}
	ci, err := Wilson(e.Failures, e.Runs)
	if err != nil {
		return TestReport{}, fmt.Errorf("flaky: %s: %w", e.ID, err)
	}
	return TestReport{
		ID:       e.ID,
		Verdict:  v,
		Runs:     e.Runs,
		Failures: e.Failures,
		Rate:     round4(float64(e.Failures) / float64(e.Runs)),
		CI95:     [2]float64{round4(ci.Lo), round4(ci.Hi)},
		Messages: nonNil(e.Messages),
		Seeds:    nonNil(e.Seeds),
		Races:    e.Races,
		Flags:    e.Flags,
	}, nil
}

// NewFixReport turns a judgement and the diff checks into the report.
func NewFixReport(r Result, checks []Check) *FixReport {
	if checks == nil {
		checks = []Check{}
	}
	return &FixReport{Status: r.Status, RunsAfter: r.Runs, FailuresAfter: r.Failures, FailedRuns: r.FailedRuns, Need: r.Need, Reason: r.Reason, Checks: checks}
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return append([]string(nil), s...)
}
