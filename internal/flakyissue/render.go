package flakyissue

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/org/mini-agent/internal/flakyscan"
	"github.com/org/mini-agent/internal/report"
	"github.com/org/mini-agent/internal/route"
)

// maxRows bounds the rows of each evidence table.
const maxRows = 30

// maxTitle keeps titles under GitHub's 256 characters.
const maxTitle = 200

var hexSHA = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// untrusted makes text from logs and the history safe to show: what a
// reader cannot see (hidden comments, invisible and bidirectional-control
// characters) removed as for comment commands, no marker forged, no
// mention that notifies.
func untrusted(s string) string { return report.Untrusted(route.Sanitize(s)) }

// inline makes untrusted text (test ids, job and branch names from the
// history) safe inside a table cell or a code span: no hidden comment, no
// mention, one line, no pipe or backtick to break out.
func inline(s string) string {
	s = untrusted(s)
	s = strings.NewReplacer("\r", " ", "\n", " ", "|", "\\|", "`", "'").Replace(s)
	return strings.TrimSpace(s)
}

// code renders untrusted text as a code span.
func code(s string) string { return "`" + inline(s) + "`" }

// fenced renders untrusted multi-line text in a code block whose fence no
// line of the text can close.
func fenced(s string) string {
	s = untrusted(s)
	fence := report.Fence(s, 3)
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

// link renders [text](u) when u is an absolute http(s) URL that cannot break
// out of the link, else text alone.
func link(text, u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || strings.ContainsAny(u, " ()<>[]\n\"'`") {
		return text
	}
	return "[" + text + "](" + u + ")"
}

func shortSHA(s string) string {
	if !hexSHA.MatchString(s) {
		return "(invalid)"
	}
	return "`" + s[:7] + "`"
}

func minutes(c flakyscan.Occurrence) string {
	return fmt.Sprintf("%.1f min", flakyscan.Minutes(c.Duration))
}

// Title names the candidate's first test and how many more.
func Title(c flakyscan.Candidate) string {
	t := "Flaky test: " + inline(c.Tests[0].Test)
	if n := len(c.Tests) - 1; n > 0 {
		t = fmt.Sprintf("Flaky tests: %s and %d more failing with it", inline(c.Tests[0].Test), n)
	}
	if len(t) > maxTitle {
		cut := maxTitle - 1
		for cut > 0 && t[cut]&0xC0 == 0x80 {
			cut--
		}
		t = t[:cut] + "…"
	}
	return t
}

var signalText = map[string]string{
	flakyscan.SignalSameCode:     "failed and passed on the same code (a re-run, or another run of the same commit)",
	flakyscan.SignalAcrossCommit: "failed on several commits of the default branch while passing on commits between them",
}

// Body renders the issue for c: the evidence, the proof when given, the
// tests' hidden markers and the evidence already reported.
func Body(c flakyscan.Candidate, res *flakyscan.Result, proof *Proof) string {
	var w strings.Builder
	fmt.Fprintf(&w, "## %s\n\n", Title(c))
	fmt.Fprintf(&w, "mini-agent's scheduled scan of the CI history (%s to %s) found ", res.From.Format("2006-01-02"), res.To.Format("2006-01-02"))
	if len(c.Tests) == 1 {
		w.WriteString("this test failing and passing without a code change that explains it.\n\n")
	} else {
		w.WriteString("these tests failing together, and passing, without a code change that explains it.\n\n")
	}
	w.WriteString("| | |\n|---|---|\n")
	t0 := c.Tests[0]
	fmt.Fprintf(&w, "| workflow / job | %s / %s |\n", code(t0.Workflow), code(t0.Job))
	var sig []string
	for _, s := range c.Signals {
		sig = append(sig, signalText[s])
	}
	fmt.Fprintf(&w, "| signal | %s |\n", strings.Join(sig, "; "))
	fmt.Fprintf(&w, "| failed attempts | %d, on %d commit(s) |\n", len(c.Failures), len(c.Commits))
	fmt.Fprintf(&w, "| passing attempts used as evidence | %d |\n", len(c.Passes))
	fmt.Fprintf(&w, "| CI time wasted | %.1f min (sum of the failed jobs' durations) |\n", flakyscan.Minutes(c.Wasted))
	writeProof(&w, proof)
	w.WriteString("\n### Tests\n\n")
	for _, t := range c.Tests {
		fmt.Fprintf(&w, "- %s in %s\n", code(t.Test), code(t.Package))
	}
	if len(c.Messages) > 0 {
		w.WriteString("\n### Failure messages (from the CI logs)\n\n")
		w.WriteString(fenced(strings.Join(c.Messages, "\n")))
	}
	w.WriteString("\n### Failed attempts\n\n")
	occTable(&w, c.Failures)
	if len(c.Passes) > 0 {
		w.WriteString("\n### Passing attempts (the same code, or commits between the failures)\n\n")
		occTable(&w, c.Passes)
	}
	w.WriteString("\n_Closing this issue dismisses it: mini-agent will not reopen it, and comments on it only when new failed attempts appear._\n\n")
	writeMarkers(&w, c, seenOf(c.Failures))
	return w.String()
}

// Comment renders the update posted on an existing issue: the failed
// attempts not reported before (fresh) and the candidate's current totals.
// Its hidden line lists every failed attempt of the window (older ones can
// never be seen again, so the line stays bounded by the window).
func Comment(c flakyscan.Candidate, res *flakyscan.Result, proof *Proof, fresh []flakyscan.Occurrence) string {
	var w strings.Builder
	fmt.Fprintf(&w, "### New evidence: %d more failed attempt(s)\n\n", len(fresh))
	fmt.Fprintf(&w, "Scan of %s to %s: %d failed attempts on %d commit(s) in the window, %.1f min of CI time wasted.\n\n",
		res.From.Format("2006-01-02"), res.To.Format("2006-01-02"), len(c.Failures), len(c.Commits), flakyscan.Minutes(c.Wasted))
	if proof != nil {
		w.WriteString("| | |\n|---|---|\n")
		writeProof(&w, proof)
		w.WriteString("\n")
	}
	occTable(&w, fresh)
	if len(c.Messages) > 0 {
		w.WriteString("\nFailure messages (from the CI logs):\n\n")
		w.WriteString(fenced(strings.Join(c.Messages, "\n")))
	}
	w.WriteString("\n")
	writeMarkers(&w, flakyscan.Candidate{}, seenOf(c.Failures))
	return w.String()
}

func writeProof(w *strings.Builder, p *Proof) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "| measured rate | %d failures in %d runs = %.1f%% (95%% interval %.1f%%–%.1f%%) |\n",
		p.Failures, p.Runs, 100*p.Rate, 100*p.Low, 100*p.High)
	if p.Command != "" {
		fmt.Fprintf(w, "| reproduce | %s |\n", code(p.Command))
	}
	if p.Seed != "" {
		fmt.Fprintf(w, "| seed | %s |\n", code(p.Seed))
	}
}

func occTable(w *strings.Builder, os []flakyscan.Occurrence) {
	w.WriteString("| run | attempt | commit | branch | event | job | duration |\n|---|---|---|---|---|---|---|\n")
	for i, o := range os {
		if i == maxRows {
			fmt.Fprintf(w, "\n_…and %d more._\n", len(os)-maxRows)
			break
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", link(fmt.Sprintf("%d", o.RunID), o.RunURL),
			link(fmt.Sprintf("%d", o.Attempt), o.AttemptURL), shortSHA(o.HeadSHA), code(o.Branch), inline(o.Event),
			link("log", o.JobURL), minutes(o))
	}
}

// writeMarkers writes one hidden marker per test of c, then the hidden
// list of failed attempts reported so far.
func writeMarkers(w *strings.Builder, c flakyscan.Candidate, seen map[string]bool) {
	for _, t := range c.Tests {
		w.WriteString(Marker(t))
		w.WriteString("\n")
	}
	w.WriteString(seenLine(seen))
	w.WriteString("\n")
}
