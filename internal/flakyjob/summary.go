package flakyjob

import (
	"fmt"
	"strings"

	"github.com/org/mini-agent/internal/flakyscan"
)

// IssueNumbers are the issues the run created or commented on, then the
// ones it found unchanged, without duplicates.
func (r *Result) IssueNumbers() []int {
	var out []int
	if r.Issues == nil {
		return nil
	}
	for _, l := range [][]int{r.Issues.Created, r.Issues.Commented, r.Issues.Unchanged} {
		for _, n := range l {
			if n != 0 && !containsInt(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// PRNumbers are the PRs of the run's candidates: opened now or earlier.
func (r *Result) PRNumbers() []int {
	var out []int
	for _, c := range r.Candidates {
		for _, p := range []*PR{c.PR, c.Quarantine} {
			if p != nil && !containsInt(out, p.Number) {
				out = append(out, p.Number)
			}
		}
	}
	return out
}

// Opened counts the PRs opened by this run.
func (r *Result) Opened() int {
	n := 0
	for _, c := range r.Candidates {
		for _, p := range []*PR{c.PR, c.Quarantine} {
			if p != nil && !p.Existing {
				n++
			}
		}
	}
	return n
}

func containsInt(l []int, n int) bool {
	for _, x := range l {
		if x == n {
			return true
		}
	}
	return false
}

// Markdown is the job summary: what was scanned, the candidates with their
// local verdicts, issues, fixes and PRs, and what the budgets left out.
func (r *Result) Markdown() string {
	var w strings.Builder
	w.WriteString("## mini-agent: flaky tests\n\n")
	s := r.Scan
	if s == nil {
		return w.String()
	}
	fmt.Fprintf(&w, "Scanned %s to %s: %d runs, %d attempts, %d job logs, %d GitHub API calls.\n",
		s.From.Format("2006-01-02"), s.To.Format("2006-01-02"), s.Runs, s.Attempts, s.Logs, s.APICalls)
	if len(s.TruncatedDays) > 0 {
		var days []string
		for _, d := range s.TruncatedDays {
			days = append(days, d.Format("2006-01-02"))
		}
		fmt.Fprintf(&w, "\n**Truncated days** (GitHub could not list them completely; nothing from them was used): %s.\n", strings.Join(days, ", "))
	}
	ig := s.Ignored
	fmt.Fprintf(&w, "Ignored: %d cancelled runs, %d failures outside the tests, %d infrastructure failures, %d expired logs.\n\n",
		ig.CancelledRuns, ig.NonTestFailure, ig.Infrastructure, ig.LogsGone)
	if len(s.Candidates) == 0 {
		w.WriteString("No flaky test found: nothing was posted.\n")
		return w.String()
	}
	w.WriteString("| # | tests | CI failures | CI time lost | local verdict | issue | fix | PR |\n|---|---|---|---|---|---|---|---|\n")
	for i, c := range r.Candidates {
		var tests, verdicts []string
		for _, t := range c.Candidate.Tests {
			tests = append(tests, code(t.Test))
		}
		for _, t := range c.Tests {
			switch {
			case t.Report != nil:
				verdicts = append(verdicts, fmt.Sprintf("%s %s (%d/%d failed, 95%% %s)", code(t.LocalID), t.Report.Verdict,
					t.Report.Failures, t.Report.Runs, interval(t.Report.Failures, t.Report.Runs)))
			case t.Problem != "":
				verdicts = append(verdicts, code(t.Ref.Test)+": "+inline(t.Problem))
			}
		}
		if !c.Examined {
			verdicts = []string{"not examined"}
		}
		issue, fix, pr := "–", "–", "–"
		if c.Issue != 0 {
			issue = fmt.Sprintf("#%d", c.Issue)
		}
		if c.Fix != nil {
			fix = fmt.Sprintf("`%s`", c.Fix.Status)
		}
		var prs []string
		for _, p := range []*PR{c.PR, c.Quarantine} {
			if p == nil {
				continue
			}
			what := "fix"
			if p == c.Quarantine {
				what = "quarantine"
			}
			if p.Existing {
				what += ", earlier"
			}
			prs = append(prs, fmt.Sprintf("#%d (%s)", p.Number, what))
		}
		if len(prs) > 0 {
			pr = strings.Join(prs, ", ")
		}
		fmt.Fprintf(&w, "| %d | %s | %d on %d commit(s) | %.1f min | %s | %s | %s | %s |\n", i+1, strings.Join(tests, ", "),
			len(c.Failures), len(c.Commits), flakyscan.Minutes(c.Wasted), strings.Join(verdicts, "; "), issue, fix, pr)
	}
	var notes []string
	for i, c := range r.Candidates {
		if c.WholeSuite {
			notes = append(notes, fmt.Sprintf("%d: failed locally only with the whole suite (an order dependence)", i+1))
		}
		if c.Fix != nil && c.Fix.Reason != "" {
			notes = append(notes, fmt.Sprintf("%d: fix %s: %s", i+1, c.Fix.Status, inline(c.Fix.Reason)))
		}
		for _, n := range c.Notes {
			notes = append(notes, fmt.Sprintf("%d: %s", i+1, inline(n)))
		}
	}
	if r.Issues != nil {
		fmt.Fprintf(&w, "\nIssues: %d created, %d commented, %d unchanged", len(r.Issues.Created), len(r.Issues.Commented), len(r.Issues.Unchanged))
		if len(r.Issues.Deferred) > 0 {
			fmt.Fprintf(&w, ", %d left for a later run by flaky.max-issues", len(r.Issues.Deferred))
		}
		w.WriteString(".\n")
	}
	for _, n := range r.Notes {
		notes = append(notes, inline(n))
	}
	if len(notes) > 0 {
		w.WriteString("\n")
		for _, n := range notes {
			fmt.Fprintf(&w, "- %s\n", n)
		}
	}
	return w.String()
}
