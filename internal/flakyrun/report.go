package flakyrun

import (
	"fmt"
	"slices"
	"strings"

	"github.com/org/mini-agent/internal/flaky"
)

// Report is the JSON document `mini-agent flaky --json` writes: the
// issue's shape ({"tests":[...],"fix":{...}}) and how the detection ran.
type Report struct {
	flaky.Report
	// Command is the test command as configured.
	Command string `json:"command"`
	// CommandRuns counts the runs of the command (a run executes a test
	// several times under -count or -cpu).
	CommandRuns int `json:"command_runs"`
	// StoppedBy says why the detection stopped: evidence, max-runs, max-time.
	StoppedBy string   `json:"stopped_by"`
	Notes     []string `json:"notes,omitempty"`
}

// verdictOrder puts flaky tests first, then failing, then passing.
var verdictOrder = map[flaky.Verdict]int{flaky.VerdictFlaky: 0, flaky.VerdictFailing: 1, flaky.VerdictPassing: 2}

// NewReport turns a detection into its report; tests are ordered flaky,
// failing, passing, then by ID.
func NewReport(command string, res *Result) (*Report, error) {
	rep := &Report{Command: command, CommandRuns: len(res.Runs), StoppedBy: res.Stop, Notes: res.Notes}
	rep.Tests = []flaky.TestReport{}
	for _, e := range res.Tests {
		tr, err := flaky.NewTestReport(e)
		if err != nil {
			return nil, err
		}
		rep.Tests = append(rep.Tests, tr)
	}
	slices.SortStableFunc(rep.Tests, func(a, b flaky.TestReport) int {
		if d := verdictOrder[a.Verdict] - verdictOrder[b.Verdict]; d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	return rep, nil
}

// Count is how many tests have the verdict.
func (r *Report) Count(v flaky.Verdict) int {
	n := 0
	for _, t := range r.Tests {
		if t.Verdict == v {
			n++
		}
	}
	return n
}

// StopText says why the detection stopped, for people.
func StopText(stop string) string {
	switch stop {
	case StopMaxRuns:
		return "the run budget (--max-runs) ended it"
	case StopMaxTime:
		return "the time budget (--max-minutes) ended it"
	}
	return "every test had enough evidence"
}

// Summary is a short human summary: one line per flaky or failing test,
// a count of the passing ones.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d command runs of %q; %s.\n", r.CommandRuns, r.Command, StopText(r.StoppedBy))
	for _, t := range r.Tests {
		if t.Verdict == flaky.VerdictPassing {
			continue
		}
		fmt.Fprintf(&b, "%-7s %s: %d of %d runs failed (rate %.2f, 95%% interval %.2f to %.2f)",
			t.Verdict, t.ID, t.Failures, t.Runs, t.Rate, t.CI95[0], t.CI95[1])
		if len(t.Seeds) > 0 {
			fmt.Fprintf(&b, "; seeds %s", strings.Join(t.Seeds[:min(3, len(t.Seeds))], ", "))
		}
		if len(t.Races) > 0 {
			b.WriteString("; data race reported")
		}
		b.WriteString("\n")
		if len(t.Messages) > 0 {
			fmt.Fprintf(&b, "        first message: %s\n", firstLine(t.Messages[0]))
		}
	}
	fmt.Fprintf(&b, "%d flaky, %d failing, %d passing.\n", r.Count(flaky.VerdictFlaky), r.Count(flaky.VerdictFailing), r.Count(flaky.VerdictPassing))
	if r.Fix != nil {
		fmt.Fprintf(&b, "fix: %s (%d runs after, %d failures): %s\n", r.Fix.Status, r.Fix.RunsAfter, r.Fix.FailuresAfter, r.Fix.Reason)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}
