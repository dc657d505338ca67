package report

import (
	"fmt"
	"strings"

	"github.com/org/mini-agent/internal/bundle"
)

// Proof renders what the harness proved, as markdown: the baseline's
// verdict, the before/after table of the target tests, the pre-existing
// failures, the full command and the validated tree. "" when the bundle
// has no baseline.
func Proof(b *bundle.Bundle) string {
	bl := b.Baseline
	if bl == nil {
		return ""
	}
	var w strings.Builder
	w.WriteString("### Proof (run by the harness on clean checkouts)\n\n")
	fmt.Fprintf(&w, "Baseline at `%s`: **%s**. %s\n\n", cell(short(bl.Commit)), bl.Verdict, verdictText(bl))
	p := b.Proof
	if len(bl.Targets) > 0 {
		w.WriteString("| test | at the base: failed / runs | after: passed / runs |\n|---|---|---|\n")
		for _, t := range bl.Targets {
			after := "not run"
			if p == nil {
				after = "—"
			} else if a, ok := p.Target(t.ID); ok && a.Runs > 0 {
				after = fmt.Sprintf("%d / %d", a.Runs-a.Failures, a.Runs)
			}
			fmt.Fprintf(&w, "| `%s` | %d / %d | %s |\n", cell(t.ID), t.Failures, t.Runs, after)
		}
		w.WriteString("\n")
	}
	if len(bl.PreExisting) > 0 {
		fmt.Fprintf(&w, "Pre-existing failures (failing at the base, not this change's target; required not to get worse): %s\n\n", codeList(bl.PreExisting))
	}
	if p != nil {
		full := "passed"
		switch {
		case !p.FullRan:
			full = "did not run to an outcome"
		case !p.FullPassed && len(p.NewFailures) == 0 && p.Holds:
			full = "failed only by the pre-existing failures"
		case !p.FullPassed:
			full = "**failed**"
		}
		fmt.Fprintf(&w, "Full test command on the published tree: %s. Validated tree: `%s` (the base commit plus exactly this change; ignored and untracked files are not in it).\n\n",
			full, cell(p.Tree))
		if len(p.NewFailures) > 0 {
			fmt.Fprintf(&w, "New failures (passed or did not run at the base): %s\n\n", codeList(p.NewFailures))
		}
		if !p.Holds {
			w.WriteString("**Not proven:**\n\n")
			for _, r := range p.Reasons {
				fmt.Fprintf(&w, "- %s\n", Untrusted(r))
			}
			w.WriteString("\n")
		}
	}
	if len(bl.Environment) > 0 && bl.Verdict == bundle.VerdictNotReproduced {
		fmt.Fprintf(&w, "This machine: %s.\n\n", cell(strings.Join(bl.Environment, "; ")))
	}
	if len(bl.CIEnvironment) > 0 && bl.Verdict == bundle.VerdictNotReproduced {
		fmt.Fprintf(&w, "CI's machine (from its log): %s.\n\n", Untrusted(cell(strings.Join(bl.CIEnvironment, "; "))))
	}
	for _, n := range append(append([]string(nil), bl.Notes...), proofNotes(p)...) {
		fmt.Fprintf(&w, "- note: %s\n", Untrusted(n))
	}
	if len(bl.Notes) > 0 || len(proofNotes(p)) > 0 {
		w.WriteString("\n")
	}
	return w.String()
}

func proofNotes(p *bundle.Proof) []string {
	if p == nil {
		return nil
	}
	return p.Notes
}

// verdictText says what the verdict means for this run.
func verdictText(bl *bundle.Baseline) string {
	runs := fmt.Sprintf("%d command runs, caches off", bl.Runs)
	switch bl.Verdict {
	case bundle.VerdictReproduced:
		return "The target tests failed on every run before the change (" + runs + ")."
	case bundle.VerdictIntermittent:
		return "The target tests failed on some runs only (" + runs + "): a flaky failure, judged by the flaky path's rerun bar."
	case bundle.VerdictNotReproduced:
		return "The tests CI saw fail passed on every run here (" + runs + "): no fix can be proven, so none is claimed."
	}
	return "No failing test to reproduce (" + runs + "); the change must not break a test that passes."
}

// notReproducedWhy is the one-line reason of a not-reproduced run.
func notReproducedWhy(b *bundle.Bundle) string {
	bl := b.Baseline
	if bl == nil {
		return "not reproduced: the failure did not reproduce here"
	}
	var parts []string
	for _, t := range bl.Targets {
		parts = append(parts, fmt.Sprintf("%s passed %d of %d runs", t.ID, t.Runs-t.Failures, t.Runs))
	}
	return "not reproduced: the tests CI saw fail pass here on a clean checkout of " + short(bl.Commit) + " (" + strings.Join(parts, ", ") +
		"); no fix can be proven, so none is claimed"
}

func codeList(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "`" + cell(id) + "`"
	}
	return strings.Join(out, ", ")
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// RecordsText is "TestA failed 1 of 3 runs, TestB failed 0 of 3 runs".
func RecordsText(recs []bundle.TestRecord) string {
	var parts []string
	for _, t := range recs {
		parts = append(parts, fmt.Sprintf("%s failed %d of %d runs", t.ID, t.Failures, t.Runs))
	}
	return strings.Join(parts, ", ")
}

// proofText is the terminal report's proof lines.
func proofText(b *bundle.Bundle) string {
	bl := b.Baseline
	if bl == nil {
		return ""
	}
	var w strings.Builder
	fmt.Fprintf(&w, "\nProof (clean checkouts, caches off): baseline at %s %s\n", short(bl.Commit), bl.Verdict)
	for _, t := range bl.Targets {
		after := "-"
		if b.Proof != nil {
			if a, ok := b.Proof.Target(t.ID); ok {
				after = fmt.Sprintf("passed %d of %d", a.Runs-a.Failures, a.Runs)
			}
		}
		fmt.Fprintf(&w, "  %-30s base: failed %d of %d   after: %s\n", t.ID, t.Failures, t.Runs, after)
	}
	if len(bl.PreExisting) > 0 {
		fmt.Fprintf(&w, "  pre-existing failures: %s\n", strings.Join(bl.PreExisting, ", "))
	}
	if p := b.Proof; p != nil {
		fmt.Fprintf(&w, "  validated tree: %s  proof holds: %t\n", p.Tree, p.Holds)
		for _, r := range p.Reasons {
			fmt.Fprintf(&w, "  not proven: %s\n", r)
		}
	}
	return w.String()
}
