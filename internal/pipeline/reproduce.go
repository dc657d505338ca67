package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/cleantree"
	"github.com/org/mini-agent/internal/failure"
	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/report"
	"github.com/org/mini-agent/internal/testcmd"
	"github.com/org/mini-agent/tools"
)

// The harness's own events in the stream: the baseline's verdict (before
// the loop; data: verdict, commit, runs, targets, pre_existing, or
// cancelled) and the proof on the published tree (after it; data: tree,
// holds, runs, reasons).
const (
	EventBaseline = "harness.baseline"
	EventProof    = "harness.proof"
)

// maxLeftOut bounds the left-out files a bundle names.
const maxLeftOut = 20

// baselineTargets are the tests the baseline must see fail: the failure
// context's tests; the full command itself when the failure names none (a
// build error); none for a requested change on a passing suite.
func baselineTargets(fc *failure.FailureContext, passing bool) []string {
	if passing {
		return nil
	}
	if ids := fc.IDs(); len(ids) > 0 {
		return ids
	}
	return []string{FullCommandID}
}

// reproduce runs the baseline and routes by its verdict. stop is true
// when the run ends here (with out and err to return).
func (s *session) reproduce(ctx context.Context, targets []string) (out *Outcome, stop bool, err error) {
	bl, err := s.prove.baseline(ctx, targets)
	// The runs were on a clean checkout of their own; without the kernel
	// sandbox test code could still reach the workspace's .git.
	s.cont.after(ctx, "baseline")
	switch {
	case err != nil && ctx.Err() != nil:
		s.emit(EventBaseline, map[string]any{"cancelled": true, "stop_reason": "cancelled"})
		out, err = s.finish(bundle.StatusCancelled)
		return out, true, err
	case errors.Is(err, proc.ErrNotStarted), errors.Is(err, testcmd.ErrNarrowing):
		return nil, true, configErr("test-command", ": %v", err)
	case err != nil:
		// Nothing can be proven without the baseline: say why, claim nothing.
		s.b.Warnings = append(s.b.Warnings, "the failure could not be reproduced on a clean checkout of the base commit: "+oneLine(err.Error()))
		out, err = s.finish(bundle.StatusNotFixed)
		return out, true, err
	}
	s.b.Baseline = bl
	s.emit(EventBaseline, map[string]any{"verdict": string(bl.Verdict), "commit": bl.Commit, "runs": bl.Runs,
		"targets": report.RecordsText(bl.Targets), "pre_existing": strings.Join(bl.PreExisting, ", ")})
	switch bl.Verdict {
	case bundle.VerdictNotReproduced:
		if s.r.Flaky || s.r.ChangeRequested {
			// The flaky path has its own evidence; a requested change (a
			// review iteration) is the job whatever the tests do here: its
			// proof is that nothing that passes breaks.
			return nil, false, nil
		}
		if logs := s.r.failureLogs(); len(logs) > 0 {
			// What differs: CI's machine as its log tells it, beside this one.
			if ci, err := failure.CIMachine(logs...); err == nil {
				bl.CIEnvironment = ci
			}
		}
		out, err = s.finish(bundle.StatusNotReproduced)
		return out, true, err
	case bundle.VerdictIntermittent:
		if s.r.Flaky {
			return nil, false, nil
		}
		// A flake: one passing rerun proves nothing. The flaky path's
		// evidence and rerun bar do (mini-agent flaky --fix).
		s.b.Warnings = append(s.b.Warnings, fmt.Sprintf("the failure is intermittent at the base (%s): a flaky test is fixed through the flaky path "+
			"(mini-agent flaky --fix --tests %s), whose rerun bar proves the fix; a single passing rerun would prove nothing",
			report.RecordsText(bl.Targets), strings.Join(testcmd.Names(withoutFullCommand(targets)), ",")))
		out, err = s.finish(bundle.StatusNotFixed)
		return out, true, err
	}
	return nil, false, nil
}

// validate proves the change on the tree it publishes: the base commit
// plus exactly the bundle's files, on a clean checkout.
func (s *session) validate(ctx context.Context) error {
	b := s.b
	bl := b.Baseline
	if bl == nil {
		return errors.New("pipeline: validation without a baseline")
	}
	proof, ph, err := s.prove.prove(ctx, bl, TreeChanges(b.Files))
	s.cont.after(ctx, "validation")
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		b.Warnings = append(b.Warnings, "the change could not be validated on a clean checkout: "+oneLine(err.Error()))
		b.Validation = append(b.Validation, bundle.Check{Name: "clean checkout", Tail: err.Error()})
		return nil
	}
	proof.LeftOut = s.leftOut(ctx)
	if !proof.Holds && len(proof.LeftOut) > 0 {
		proof.Reasons = append(proof.Reasons, "the run created files the change does not carry (ignored or untracked): "+strings.Join(proof.LeftOut, ", "))
	}
	b.Proof, b.TreeSHA = proof, proof.Tree
	s.emit(EventProof, map[string]any{"tree": proof.Tree, "holds": proof.Holds, "runs": proof.Runs,
		"reasons": strings.Join(proof.Reasons, "; ")})
	b.Validation = append(b.Validation, checksOf(bl, proof, ph)...)
	return nil
}

// TreeChanges is the bundle's files as a clean tree applies them.
func TreeChanges(files []bundle.File) []cleantree.Change {
	out := make([]cleantree.Change, 0, len(files))
	for _, f := range files {
		out = append(out, cleantree.Change{Path: f.Path, OldPath: f.OldPath, Status: f.Status, Mode: f.Mode, Content: f.Content})
	}
	return out
}

// checksOf renders the proof as the bundle's validation checks: the target
// tests, then the full command.
func checksOf(bl *bundle.Baseline, proof *bundle.Proof, ph *phaseResult) []bundle.Check {
	if ph == nil {
		return []bundle.Check{{Name: "module cache", Tail: strings.Join(proof.Reasons, "\n")}}
	}
	var out []bundle.Check
	targets := proofTargets(bl)
	if len(withoutFullCommand(targets)) > 0 {
		c := bundle.Check{Name: "failing tests", Command: firstOr(ph.Commands, ""), Passed: true, Duration: ph.narrowSecs}
		var lines []string
		for _, id := range targets {
			before, _ := bl.Target(id)
			after, _ := ph.Target(id)
			if !after.Passes() {
				c.Passed, c.ExitCode = false, 1
			}
			lines = append(lines, fmt.Sprintf("%s: at the base failed %d of %d runs; on the published tree failed %d of %d runs",
				id, before.Failures, before.Runs, after.Failures, after.Runs))
		}
		c.Tail = tailOf(ph.narrowTail) + "[mini-agent harness] clean checkout, caches off\n" + strings.Join(lines, "\n")
		out = append(out, c)
	}
	full := bundle.Check{Name: "full test command", Command: lastOr(ph.Commands, ""), ExitCode: ph.lastFull, Duration: ph.fullSecs}
	full.Passed = ph.FullRan && (ph.FullPassed || (ph.failedKnown && len(ph.Failed) > 0 && len(proof.NewFailures) == 0 &&
		!slices.ContainsFunc(ph.Failed, func(f string) bool {
			return slices.ContainsFunc(targets, func(id string) bool { return sameTest(f, id) })
		})))
	switch {
	case ph.FullPassed:
		full.Tail = "[mini-agent harness] clean checkout, caches off: passed"
	case full.Passed:
		full.Tail = "[mini-agent harness] clean checkout, caches off: only tests that already failed at the base failed: " + strings.Join(ph.Failed, ", ")
	default:
		full.Tail = "[mini-agent harness] clean checkout, caches off: " + strings.Join(proof.Reasons, "; ")
	}
	full.Tail = tailOf(ph.fullTail) + full.Tail
	if !proof.Holds && full.Passed && (len(out) == 0 || out[0].Passed) {
		// A reason beyond the tests (the module cache changed).
		full.Passed = false
	}
	return append(out, full)
}

func firstOr(list []string, def string) string {
	if len(list) == 0 {
		return def
	}
	return list[0]
}

func lastOr(list []string, def string) string {
	if len(list) == 0 {
		return def
	}
	return list[len(list)-1]
}

// baselineGoal tells the model what the harness saw at the base.
func baselineGoal(bl *bundle.Baseline) string {
	if bl == nil || bl.Verdict == bundle.VerdictNoTargets {
		return ""
	}
	var w strings.Builder
	fmt.Fprintf(&w, "\nThe harness ran the tests at the base commit on a clean checkout before you started (verdict: %s): %s.\n",
		bl.Verdict, report.RecordsText(bl.Targets))
	if len(bl.PreExisting) > 0 {
		fmt.Fprintf(&w, "These tests already failed at the base and are not your task (they must not get worse): %s.\n", strings.Join(bl.PreExisting, ", "))
	}
	w.WriteString("Your change is validated on a clean checkout of the base commit plus your change: files the repository ignores are not part of it.\n")
	return w.String()
}

// ignoredFiles lists the workspace's ignored files and directories (git's
// own view, directories collapsed).
func ignoredFiles(ctx context.Context, dir string) (map[string]bool, error) {
	out, err := gitexec.Output(ctx, gitexec.Options{Dir: dir}, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			m[p] = true
		}
	}
	return m, nil
}

// leftOut are the ignored files the run created that the change does not
// carry (the harness's own outputs excepted).
func (s *session) leftOut(ctx context.Context) []string {
	if s.ignored == nil {
		return nil
	}
	now, err := ignoredFiles(ctx, s.ws.Dir())
	if err != nil {
		return nil
	}
	own := map[string]bool{}
	for _, p := range []string{s.r.TracePath, s.r.BundlePath, s.r.SummaryPath} {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if rel, err := filepath.Rel(s.ws.Dir(), abs); err == nil {
				own[filepath.ToSlash(rel)] = true
			}
		}
	}
	var out []string
	for p := range now {
		if !s.ignored[p] && !own[p] && !own[strings.TrimSuffix(p, "/")] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	if len(out) > maxLeftOut {
		out = append(out[:maxLeftOut], fmt.Sprintf("(%d more)", len(out)-maxLeftOut))
	}
	return out
}

// tailOf is a run's output bounded for the bundle, ending in a newline.
func tailOf(out string) string {
	if out == "" {
		return ""
	}
	t := checkFrom("", tools.RunOutcome{Output: out}).Tail
	if !strings.HasSuffix(t, "\n") {
		t += "\n"
	}
	return t
}

// redactProof removes secrets from the baseline's and the proof's texts
// (failure messages and notes are test output).
func redactProof(b *bundle.Bundle, rd func(string) string) {
	phase := func(p *bundle.Phase) {
		for i := range p.Targets {
			p.Targets[i].Message = rd(p.Targets[i].Message)
		}
		for i := range p.Notes {
			p.Notes[i] = rd(p.Notes[i])
		}
		for i := range p.Failed {
			p.Failed[i] = rd(p.Failed[i])
		}
	}
	if bl := b.Baseline; bl != nil {
		phase(&bl.Phase)
		for _, list := range [][]string{bl.PreExisting, bl.Environment, bl.CIEnvironment} {
			for i := range list {
				list[i] = rd(list[i])
			}
		}
	}
	if p := b.Proof; p != nil {
		phase(&p.Phase)
		for i := range p.Reasons {
			p.Reasons[i] = rd(p.Reasons[i])
		}
		for i := range p.NewFailures {
			p.NewFailures[i] = rd(p.NewFailures[i])
		}
		for i := range p.LeftOut {
			p.LeftOut[i] = rd(p.LeftOut[i])
		}
	}
	for i := range b.Warnings {
		b.Warnings[i] = rd(b.Warnings[i])
	}
	for i := range b.FailingTests {
		b.FailingTests[i] = rd(b.FailingTests[i]) // a hostile subtest may be named after a secret
	}
}

// emit sends one of the harness's own events to the stream (trace,
// progress, the caller's sink).
func (s *session) emit(typ string, data map[string]any) {
	s.sinks.Emit(agent.Event{Type: agent.EventType(typ), Time: time.Now(), Data: redactEvent(data, s.redact)})
}
