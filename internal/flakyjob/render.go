package flakyjob

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/report"
	"github.com/org/mini-agent/internal/route"
)

// trackedMarker marks a PR body mini-agent already gave its flaky section.
const trackedMarker = "<!-- mini-agent:flaky-tracked -->"

// inline makes untrusted text (test ids, reasons quoting file names, log
// text) safe in a table cell or a sentence: nothing hidden, no mention, one
// line, no pipe or backtick to break out.
func inline(s string) string {
	s = report.Untrusted(route.Sanitize(s))
	s = strings.NewReplacer("\r", " ", "\n", " ", "|", "\\|", "`", "'").Replace(s)
	return strings.TrimSpace(s)
}

// code renders untrusted text as a code span.
func code(s string) string { return "`" + inline(s) + "`" }

// plainID is a test name for a title or commit message: printable, one
// line, bounded.
func plainID(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, route.Sanitize(s))
	return cut(strings.Join(strings.Fields(s), " "), 120)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

var hexRE = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

func shortSHA(s string) string {
	if !hexRE.MatchString(s) {
		return "(unknown commit)"
	}
	return "`" + s[:7] + "`"
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// interval is the 95% Wilson interval of failures in runs, "–" for none.
func interval(failures, runs int) string {
	ci, err := flaky.Wilson(failures, runs)
	if err != nil {
		return "–"
	}
	return pct(ci.Lo) + "–" + pct(ci.Hi)
}

func rate(failures, runs int) string {
	if runs == 0 {
		return "–"
	}
	return pct(float64(failures) / float64(runs))
}

// beforeAfter is the table of the local runs before and after the fix.
func beforeAfter(w *strings.Builder, t *TestResult, fix *flaky.FixReport) {
	w.WriteString("| | runs | failures | failure rate | 95% interval |\n|---|---|---|---|---|\n")
	b := t.Report
	fmt.Fprintf(w, "| before the fix | %d | %d | %s | %s |\n", b.Runs, b.Failures, rate(b.Failures, b.Runs), interval(b.Failures, b.Runs))
	if fix != nil && fix.RunsAfter > 0 {
		fmt.Fprintf(w, "| after the fix | %d | %d | %s | %s |\n", fix.RunsAfter, fix.FailuresAfter,
			rate(fix.FailuresAfter, fix.RunsAfter), interval(fix.FailuresAfter, fix.RunsAfter))
	}
}

// checksTable lists the anti-pattern checks' findings, flagged ones too.
func checksTable(w *strings.Builder, fix *flaky.FixReport) {
	if len(fix.Checks) == 0 {
		w.WriteString("No anti-pattern check flagged the diff (new sleeps or timeouts, retries, skips, build tags, deleted or " +
			"renamed tests, fewer assertions, recover, discarded errors, retry markers, protected files).\n")
		return
	}
	w.WriteString("| check | result | where | why |\n|---|---|---|---|\n")
	for _, ch := range fix.Checks {
		where := inline(ch.File)
		if ch.Line > 0 {
			where += fmt.Sprintf(":%d", ch.Line)
		}
		result := "flagged (allowed; review it)"
		if ch.Severity == "reject" {
			result = "**rejected**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", code(ch.Name), result, where, inline(ch.Reason))
	}
}

// fixSection starts a proven fix's PR body.
func fixSection(c *Candidate, t *TestResult) string {
	var w strings.Builder
	fmt.Fprintf(&w, "## Flaky test fix · Tracked by #%d\n\n", c.Issue)
	fmt.Fprintf(&w, "mini-agent's scheduled scan found %s flaky in CI (%d failed attempts on %d commit(s); see #%d). "+
		"It reproduced the flake locally, and this change passed the rerun bar: zero failures in %d runs under the same "+
		"stressors and seeds (at least %d were needed, so a change that fixed nothing would pass less than 1 time in 100), "+
		"the harness's validation and the anti-pattern checks.\n\n",
		code(t.Ref.Test), len(c.Failures), len(c.Commits), c.Issue, c.Fix.RunsAfter, c.Fix.Need)
	beforeAfter(&w, t, c.Fix)
	if c.WholeSuite {
		w.WriteString("\nThe test failed only when run with the rest of the suite (an order dependence), so both measurements ran the whole suite.\n")
	}
	w.WriteString("\n### Anti-pattern checks\n\n")
	checksTable(&w, c.Fix)
	w.WriteString("\n" + trackedMarker + "\n")
	return w.String()
}

// fixNote is the issue comment of a fix that is not proven.
func fixNote(c *Candidate, t *TestResult) string {
	var w strings.Builder
	what := map[flaky.FixStatus]string{
		flaky.FixRejected:  "rejected by the anti-pattern checks",
		flaky.FixFailedBar: "failed the rerun bar",
		flaky.FixUnproven:  "not proven (the status line below says why)",
	}[c.Fix.Status]
	if what == "" {
		what = string(c.Fix.Status)
	}
	fmt.Fprintf(&w, "**mini-agent tried to fix %s: %s.** No pull request was opened.\n\n", code(t.LocalID), what)
	fmt.Fprintf(&w, "Status `%s`: %s\n\n", c.Fix.Status, inline(c.Fix.Reason))
	beforeAfter(&w, t, c.Fix)
	if len(c.Fix.Checks) > 0 {
		w.WriteString("\n")
		checksTable(&w, c.Fix)
	}
	return w.String()
}
