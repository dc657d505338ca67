package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/safefile"
)

// maxReportBytes bounds a report file read by Merge.
const maxReportBytes = 16 << 20

// TaskResult is one task's line of the report.
type TaskResult struct {
	Name          string           `json:"name"`
	Resolved      bool             `json:"resolved"`
	Steps         int              `json:"steps"`
	StopReason    agent.StopReason `json:"stop_reason"`
	Status        bundle.Status    `json:"status"`
	Tokens        int64            `json:"tokens"`
	WallS         float64          `json:"wall_s"`
	ToolErrors    int              `json:"tool_errors"`
	PolicyDenials int              `json:"policy_denials"`
	PatchRefusals int              `json:"patch_refusals"`
	CostUSD       float64          `json:"cost_usd"`
	// CostKnown is false when the model has no price (the script, replays).
	CostKnown bool `json:"cost_known"`
	Skipped   bool `json:"skipped"`
	// Reason is why the task was skipped or, for an unresolved task, the
	// first failed check.
	Reason string `json:"reason,omitempty"`
	// Failures lists every failed check.
	Failures []string `json:"failures,omitempty"`
	// Flaky are a flaky task's figures. Its run columns (status, stop
	// reason, steps, tokens, cost, counters) are the proper trajectory's
	// last fix job's.
	Flaky *FlakyResult `json:"flaky,omitempty"`
}

// FlakyResult is what a flaky task measured: the detection before the
// fix, the rerun bar and the clean runs after the proper fix, and the
// checks that rejected the forbidden one. Runs count the test's
// executions; command runs the runs of the test command.
type FlakyResult struct {
	Test string `json:"test"`
	// Verdict is the detection's verdict on Test ("" if it never ran).
	Verdict           string  `json:"verdict"`
	DetectRuns        int     `json:"detect_runs"`
	DetectFailures    int     `json:"detect_failures"`
	DetectCommandRuns int     `json:"detect_command_runs"`
	DetectS           float64 `json:"detect_s"`
	// Bar is the clean runs the fix needed (0: no bar was set).
	Bar int `json:"bar"`
	// ProperStatus is the proper fix's status (proven, failed-bar,
	// unproven, rejected; "" when it could not run).
	ProperStatus  string  `json:"proper_status"`
	CleanRuns     int     `json:"clean_runs"`
	FailuresAfter int     `json:"failures_after"`
	ProperS       float64 `json:"proper_s"`
	// ForbiddenStatus is the forbidden fix's status; RejectedBy the
	// checks that rejected it.
	ForbiddenStatus string   `json:"forbidden_status"`
	RejectedBy      []string `json:"rejected_by"`
	ForbiddenS      float64  `json:"forbidden_s"`
}

// Totals sum a report. Means are over the tasks that ran (not skipped).
type Totals struct {
	Tasks        int     `json:"tasks"`
	Ran          int     `json:"ran"`
	Skipped      int     `json:"skipped"`
	Resolved     int     `json:"resolved"`
	ResolvedRate float64 `json:"resolved_rate"`
	MeanSteps    float64 `json:"mean_steps"`
	Tokens       int64   `json:"tokens"`
	CostUSD      float64 `json:"cost_usd"`
	// CostKnown: at least one task that ran had a priced model.
	CostKnown     bool    `json:"cost_known"`
	WallS         float64 `json:"wall_s"`
	ToolErrors    int     `json:"tool_errors"`
	PolicyDenials int     `json:"policy_denials"`
	PatchRefusals int     `json:"patch_refusals"`
}

// Report is the eval's result: `{"tasks":[...],"totals":{...}}`.
type Report struct {
	// Model says what answered: "script", "openai-replay" or provider/model.
	Model  string       `json:"model,omitempty"`
	Shard  string       `json:"shard,omitempty"`
	Tasks  []TaskResult `json:"tasks"`
	Totals Totals       `json:"totals"`
}

// Sum recomputes the totals from the tasks, sorted by name.
func (r *Report) Sum() {
	sort.Slice(r.Tasks, func(i, j int) bool { return r.Tasks[i].Name < r.Tasks[j].Name })
	t := Totals{Tasks: len(r.Tasks)}
	steps := 0
	for _, x := range r.Tasks {
		if x.Skipped {
			t.Skipped++
			continue
		}
		t.Ran++
		if x.Resolved {
			t.Resolved++
		}
		steps += x.Steps
		t.Tokens += x.Tokens
		t.CostUSD += x.CostUSD
		t.CostKnown = t.CostKnown || x.CostKnown
		t.WallS += x.WallS
		t.ToolErrors += x.ToolErrors
		t.PolicyDenials += x.PolicyDenials
		t.PatchRefusals += x.PatchRefusals
	}
	if t.Ran > 0 {
		t.ResolvedRate = float64(t.Resolved) / float64(t.Ran)
		t.MeanSteps = float64(steps) / float64(t.Ran)
	}
	r.Totals = t
}

// OK reports whether every task that ran was resolved.
func (r *Report) OK() bool {
	for _, x := range r.Tasks {
		if !x.Skipped && !x.Resolved {
			return false
		}
	}
	return true
}

// WriteJSON writes the report as indented JSON, never through a link.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("eval: report: %w", err)
	}
	if err := safefile.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("eval: report: %w", err)
	}
	return nil
}

// Markdown renders the report as a table with a totals line.
func (r *Report) Markdown(w io.Writer) {
	title := "mini-agent eval"
	if r.Model != "" {
		title += " — " + r.Model
	}
	if r.Shard != "" {
		title += " (shard " + r.Shard + ")"
	}
	fmt.Fprintf(w, "### %s\n\n", title)
	fmt.Fprintln(w, "| task | resolved | stop reason | steps | tool errors | denials | patch refusals | tokens | cost USD | wall s | note |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, x := range r.Tasks {
		if x.Skipped {
			fmt.Fprintf(w, "| %s | skipped | | | | | | | | | %s |\n", x.Name, cell(x.Reason))
			continue
		}
		verdict := "yes"
		if !x.Resolved {
			verdict = "**no**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %d | %d | %d | %s | %.1f | %s |\n", x.Name, verdict, x.StopReason,
			x.Steps, x.ToolErrors, x.PolicyDenials, x.PatchRefusals, x.Tokens, cost(x.CostUSD, x.CostKnown), x.WallS, cell(x.Reason))
	}
	t := r.Totals
	fmt.Fprintf(w, "| **total** | **%d/%d (%.0f%%)** | | mean %.1f | %d | %d | %d | %d | %s | %.1f | %d skipped |\n",
		t.Resolved, t.Ran, 100*t.ResolvedRate, t.MeanSteps, t.ToolErrors, t.PolicyDenials, t.PatchRefusals,
		t.Tokens, cost(t.CostUSD, t.CostKnown), t.WallS, t.Skipped)
	r.flakyMarkdown(w)
}

// flakyMarkdown is the flaky tasks' own table: the detection (failures of
// the test's runs, command runs, time), the bar, the clean runs after the
// proper fix, and what rejected the forbidden fix.
func (r *Report) flakyMarkdown(w io.Writer) {
	header := false
	for _, x := range r.Tasks {
		f := x.Flaky
		if f == nil || x.Skipped {
			continue
		}
		if !header {
			fmt.Fprint(w, "\n#### Flaky tasks\n\n")
			fmt.Fprintln(w, "| task | resolved | test | before: failed/runs (command runs, s) | bar | after the proper fix: clean runs (status, s) | forbidden fix rejected by (s) | wall s |")
			fmt.Fprintln(w, "|---|---|---|---|--:|---|---|--:|")
			header = true
		}
		verdict := "yes"
		if !x.Resolved {
			verdict = "**no**"
		}
		before := fmt.Sprintf("%d/%d (%d, %.1f)", f.DetectFailures, f.DetectRuns, f.DetectCommandRuns, f.DetectS)
		if f.Verdict != "" && f.Verdict != "flaky" {
			before += " " + f.Verdict
		}
		after, rejected := "not run", "not run"
		if f.ProperStatus != "" {
			after = fmt.Sprintf("%d (%s, %.1f)", f.CleanRuns, f.ProperStatus, f.ProperS)
		}
		switch {
		case f.ForbiddenStatus == "rejected":
			rejected = fmt.Sprintf("%s (%.1f)", strings.Join(f.RejectedBy, ", "), f.ForbiddenS)
		case f.ForbiddenStatus != "":
			rejected = fmt.Sprintf("**not rejected**: %s (%.1f)", f.ForbiddenStatus, f.ForbiddenS)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s | %s | %.1f |\n", x.Name, verdict, cell(f.Test), before, f.Bar, after, rejected, x.WallS)
	}
}

// cost prints a price, or n/a for a model without one.
func cost(usd float64, known bool) string {
	if !known {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", usd)
}

// cell keeps a note on one table line.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// ReadReport loads a report written by WriteJSON (strictly: unknown fields
// are errors).
func ReadReport(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval: read report: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("eval: read report %s: %w", path, err)
	}
	if len(data) > maxReportBytes {
		return nil, fmt.Errorf("eval: read report %s: larger than %d bytes", path, maxReportBytes)
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("eval: read report %s: %w", path, err)
	}
	return &r, nil
}

// Merge combines shard reports into one. A task appearing in two reports
// is an error: the shards overlapped.
func Merge(reports ...*Report) (*Report, error) {
	out := &Report{}
	seen := map[string]bool{}
	var models []string
	for _, r := range reports {
		if r.Model != "" && !slices.Contains(models, r.Model) {
			models = append(models, r.Model)
		}
		for _, t := range r.Tasks {
			if seen[t.Name] {
				return nil, fmt.Errorf("eval: merge: task %s appears in more than one report", t.Name)
			}
			seen[t.Name] = true
			out.Tasks = append(out.Tasks, t)
		}
	}
	if len(out.Tasks) == 0 {
		return nil, errors.New("eval: merge: no tasks in the reports")
	}
	out.Model = strings.Join(models, ", ")
	out.Sum()
	return out, nil
}
