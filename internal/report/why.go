package report

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
)

// Why says in one line why a run ended without a validated fix or a
// diagnosis ("not fixed: the model ended without a patch after 4 turns");
// it is "" for a run that fixed, explained, or found nothing to fix. Every
// report of a stopped run leads with it.
func Why(b *bundle.Bundle) string {
	switch b.Status {
	case "", bundle.StatusFixed, bundle.StatusExplained, bundle.StatusNothingToFix:
		return ""
	case bundle.StatusCancelled:
		return "cancelled: the run was interrupted " + afterTurns(b) + "; nothing more was run"
	case bundle.StatusNotReproduced:
		return notReproducedWhy(b)
	case bundle.StatusRefused:
		return refusedWhy(b)
	case bundle.StatusValidationFailed:
		var failed []string
		for _, c := range b.Validation {
			if !c.Passed {
				failed = append(failed, fmt.Sprintf("%s (exit %d)", c.Name, c.ExitCode))
			}
		}
		return "validation failed: the model finished, but the harness's rerun of the tests failed: " + strings.Join(failed, ", ")
	}
	prefix := "not fixed"
	if b.ReadOnly() {
		prefix = "no diagnosis"
	}
	if bl := b.Baseline; bl != nil && bl.Verdict == bundle.VerdictIntermittent && b.Diff == "" && b.Run.StopReason == "" {
		return prefix + ": the failure is intermittent at the base (" + RecordsText(bl.Targets) + "): a flake for the flaky path (mini-agent flaky --fix), not a one-rerun fix"
	}
	if p := b.Proof; p != nil && !p.Holds && len(p.Reasons) > 0 && b.Status != bundle.StatusValidationFailed {
		return prefix + ": not proven on the published tree: " + p.Reasons[0]
	}
	for _, w := range b.Warnings {
		if strings.Contains(w, "was discarded") || strings.Contains(w, "changed during a read-only run") ||
			strings.Contains(w, "could not be reproduced on a clean checkout") {
			return prefix + ": " + w
		}
	}
	switch {
	case b.Run.StoppedEarly():
		clause := stopClause(b.Run.Detail, b.Run.StopReason)
		if !strings.Contains(clause, "model turns") && b.Run.Steps > 0 {
			clause += " " + afterTurns(b)
		}
		return prefix + ": " + clause
	case b.ReadOnly():
		return prefix + ": the model ended without a diagnosis " + afterTurns(b)
	case b.Diff == "":
		return prefix + ": the model ended without a patch " + afterTurns(b)
	}
	return prefix + ": the change was not validated"
}

// refusedWhy is the line that leads the report of a refused run: "the
// model refused: " and what it (or the provider's filter) said, on one
// line, after N turns.
func refusedWhy(b *bundle.Bundle) string {
	said := strings.TrimRight(strings.Join(strings.Fields(b.Run.Refusal), " "), ".")
	if said == "" {
		said = "no reason given"
	}
	return "the model refused: " + oneLine(said, 300) + " (" + afterTurns(b) + ")"
}

// afterTurns is "after N turns".
func afterTurns(b *bundle.Bundle) string {
	if b.Run.Steps == 1 {
		return "after 1 turn"
	}
	return fmt.Sprintf("after %d turns", b.Run.Steps)
}

var gaveUp = regexp.MustCompile(`failed after retries: (?:[a-z][a-z ]*: )?gave up after (\d+) attempts: `)

// stopClause takes the "why" part of the loop's detail ("stopped: WHY.
// Done: ... Remains: ..."), or names the stop reason when the detail has
// another shape.
func stopClause(detail string, reason agent.StopReason) string {
	why, ok := strings.CutPrefix(detail, "stopped: ")
	if i := strings.Index(why, ". Done: "); ok && i >= 0 {
		why = why[:i]
	} else {
		return "stopped (" + string(reason) + ")"
	}
	why = gaveUp.ReplaceAllString(why, "failed after $1 attempts: ")
	return oneLine(why, 300)
}

// oneLine keeps the first line of s, at most n bytes.
func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
