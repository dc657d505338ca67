package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/failure"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyrun"
	"github.com/org/mini-agent/internal/testcmd"
	"github.com/org/mini-agent/tools"
)

// BaselineRuns is how many times the baseline runs the target tests,
// narrowed, before the full command's one run: a failure must show on
// every one of them to count as reproduced. The proof runs them at least
// as often.
const BaselineRuns = 2

// FullCommandID stands for the target when the failure names no test (a
// build error): the full command itself must fail at the base and pass
// after.
const FullCommandID = "(full command)"

// phaser runs one tree's phase through flakyrun.Detect, the owner of
// "run these tests N times and read each test's outcome": the targets
// narrowed n times, then the full command once, with the runner's result
// caches off (testcmd's Uncached, Go's -count=1).
type phaser struct {
	cmd      *testcmd.Command
	base     flakyrun.Config // containment settings and budgets, no Workdir/Tests
	progress io.Writer
	ran      func(protections string) // after each run, when set
}

// phaseResult is a phase with what judging it needs beyond the record.
type phaseResult struct {
	bundle.Phase
	// failedKnown: Failed names the full run's failures one by one (false
	// when the runner's output told only that the suite failed).
	failedKnown bool
	// lastFull is the full run's exit code.
	lastFull int
	// narrowTail and fullTail are the last narrowed and full runs' output.
	narrowTail, fullTail string
	// narrowSecs and fullSecs are the narrowed runs' and the full runs' time.
	narrowSecs, fullSecs float64
}

// run runs the phase in dir. targets are failure-context ids (empty: only
// the full command runs, once). A target the tree does not have is
// recorded with zero runs and a note.
func (p *phaser) run(ctx context.Context, dir string, targets []string, n int) (*phaseResult, error) {
	start := time.Now()
	pr := &phaseResult{}
	records := map[string]*bundle.TestRecord{}
	for _, id := range targets {
		records[id] = &bundle.TestRecord{ID: id}
	}
	names := testcmd.Names(withoutFullCommand(targets))
	fullRuns := 1
	switch {
	case len(names) > 0 && p.cmd.Narrowable():
		res, err := p.detect(ctx, dir, names, n)
		switch {
		case errors.Is(err, flakyrun.ErrNeverRan):
			pr.Notes = append(pr.Notes, "the narrowed run did not report every target test: "+oneLine(err.Error()))
			// The full run still tells which exist.
		case err != nil:
			return nil, err
		default:
			pr.Runs += len(res.Runs)
			pr.Commands = appendUnique(pr.Commands, runLines(res)...)
			if len(res.Runs) > 0 {
				pr.narrowTail = plainOutput(res.Runs[len(res.Runs)-1].Tail)
			}
			for _, r := range res.Runs {
				pr.narrowSecs += r.Duration.Seconds()
			}
			for _, id := range targets {
				addEvidence(records[id], evidenceFor(res, id), n)
			}
			res.RemoveLogs()
		}
	case len(targets) > 0:
		// Nothing to narrow to (shell syntax, an unknown runner, a build
		// error): the full command runs as often as the narrowed run would.
		fullRuns = n
		if len(names) > 0 {
			note := "the test command cannot be narrowed: the full command ran instead of the target tests"
			if a := p.cmd.Advice(); a != "" {
				note += " (" + a + ")"
			}
			pr.Notes = append(pr.Notes, note)
		}
	}
	res, err := p.detectFull(ctx, dir, fullRuns)
	if err != nil {
		return nil, err
	}
	defer res.RemoveLogs()
	pr.Runs += len(res.Runs)
	pr.Commands = appendUnique(pr.Commands, runLines(res)...)
	if len(res.Runs) > 0 {
		last := res.Runs[len(res.Runs)-1]
		pr.FullRan, pr.lastFull, pr.fullTail = true, last.ExitCode, plainOutput(last.Tail)
		for _, r := range res.Runs {
			pr.fullSecs += r.Duration.Seconds()
		}
		pr.FullPassed = last.ExitCode == 0
		for _, r := range res.Runs {
			pr.FullPassed = pr.FullPassed && r.ExitCode == 0
		}
	}
	pr.Failed, pr.failedKnown = fullFailures(res)
	pr.Failed = relativeIDs(dir, pr.Failed)
	for _, id := range targets {
		rec := records[id]
		if id == FullCommandID {
			for _, r := range res.Runs {
				o := flaky.Outcome{Failed: r.ExitCode != 0}
				addOutcome(rec, o)
			}
			continue
		}
		ev := evidenceFor(res, id)
		switch {
		case ev == nil:
			continue // the output names its tests, and not this one: it did not run
		case ev.ID != flakyrun.SuiteID:
			addEvidence(rec, ev, len(res.Runs))
			continue
		}
		// The output told the suite's outcome only: a clean run is a pass of
		// every test; of the failing runs, the first one's saved output is
		// read (fullFailures), the others tell nothing of this test.
		for _, r := range res.Runs {
			if r.ExitCode == 0 {
				rec.Runs++
			}
		}
		if !pr.FullPassed && pr.failedKnown && slices.ContainsFunc(pr.Failed, func(f string) bool { return sameTest(f, id) }) {
			rec.Runs++
			rec.Failures++
		}
	}
	suiteOnly := len(res.Tests) == 1 && res.Tests[0].ID == flakyrun.SuiteID
	for _, id := range targets {
		rec := records[id]
		switch {
		case rec.Runs > 0:
		case suiteOnly || !pr.failedKnown:
			// Nothing here tells this test's outcome: the full command's
			// outcome stands for it (it must fail at the base, pass after).
			for _, r := range res.Runs {
				addOutcome(rec, flaky.Outcome{Failed: r.ExitCode != 0})
			}
			pr.Notes = append(pr.Notes, fmt.Sprintf("%s is judged by the full command's exit status: the output does not tell its own", id))
		default:
			pr.Notes = append(pr.Notes, fmt.Sprintf("%s never ran on this tree (renamed, deleted, or not in this commit?)", id))
		}
		pr.Targets = append(pr.Targets, *rec)
	}
	pr.Notes = append(pr.Notes, res.Notes...)
	pr.Duration = time.Since(start).Seconds()
	return pr, nil
}

// detect runs the narrowed targets n times.
func (p *phaser) detect(ctx context.Context, dir string, names []string, n int) (*flakyrun.Result, error) {
	cfg := p.config(dir, names, n)
	return flakyrun.Detect(ctx, cfg)
}

// detectFull runs the full command n times, keeping the failing runs'
// output (the names of failures the runner reports only as text).
func (p *phaser) detectFull(ctx context.Context, dir string, n int) (*flakyrun.Result, error) {
	cfg := p.config(dir, nil, n)
	cfg.KeepFailureLog = true
	return flakyrun.Detect(ctx, cfg)
}

func (p *phaser) config(dir string, tests []string, n int) flakyrun.Config {
	cfg := p.base
	cfg.Workdir, cfg.Command, cfg.Tests = dir, p.cmd, tests
	cfg.MaxRuns, cfg.MinRuns = n, n
	cfg.Done = func([]*flaky.Evidence) bool { return false } // exactly n runs
	cfg.Seed = 0
	if p.cmd.Runner() == testcmd.Go {
		// Plain runs: no stressor but the one that turns go test's result
		// cache off.
		cfg.Stress = []testcmd.Stress{{Count: 1}}
	}
	cfg.Progress, cfg.KeepTail = p.progress, true
	cfg.OnRun = func(out tools.RunOutcome) {
		if p.ran != nil {
			p.ran(out.Protections)
		}
	}
	return cfg
}

// fullFailures names the full run's failures: the tests the output
// reported failing, or, when it tells only the suite's outcome, the
// failures extraction finds in the failing run's output.
func fullFailures(res *flakyrun.Result) ([]string, bool) {
	var out []string
	known := true
	for _, e := range res.Tests {
		if e.Failures == 0 {
			continue
		}
		if e.ID != flakyrun.SuiteID {
			out = append(out, e.ID)
			continue
		}
		names := extractIDs(res.FailureLogs[flakyrun.SuiteID])
		if len(names) == 0 {
			known = false
			out = append(out, flakyrun.SuiteID)
			continue
		}
		out = append(out, names...)
	}
	slices.Sort(out)
	return slices.Compact(out), known
}

// extractIDs are the failing test ids (and build errors' locations) in a
// saved output.
func extractIDs(path string) []string {
	if path == "" {
		return nil
	}
	fc, err := failure.ExtractFile(path, failure.Options{})
	if err != nil || fc.Empty() {
		return nil
	}
	out := fc.IDs()
	for _, e := range fc.BuildErrors {
		out = append(out, "build error at "+e.Location)
	}
	return out
}

// evidenceFor is the evidence of the failure-context id in res: the same
// id, its top-level test, "pkg.Test", or the suite's when the output told
// nothing per test.
func evidenceFor(res *flakyrun.Result, id string) *flaky.Evidence {
	var suite *flaky.Evidence
	for _, e := range res.Tests {
		if sameTest(e.ID, id) {
			return e
		}
		if e.ID == flakyrun.SuiteID {
			suite = e
		}
	}
	return suite
}

// sameTest reports whether an outcome's id names the failure-context id:
// equal, equal to its top-level test (a Go subtest narrows to its
// parent), or "pkg.Name" / "path::name" of it.
func sameTest(got, id string) bool {
	if got == id {
		return true
	}
	for _, n := range append([]string{id}, testcmd.Names([]string{id})...) {
		if got == n || strings.HasSuffix(got, "."+n) || strings.HasSuffix(got, "::"+n) {
			return true
		}
	}
	return false
}

// addEvidence adds a detection's outcomes of one test; a suite-level
// evidence counts each of the n runs as the test's.
func addEvidence(rec *bundle.TestRecord, e *flaky.Evidence, n int) {
	if e == nil {
		return
	}
	runs, failures := e.Runs, e.Failures
	if e.ID == flakyrun.SuiteID {
		runs = min(runs, n)
	}
	rec.Runs += runs
	rec.Failures += failures
	if rec.Message == "" && len(e.Messages) > 0 {
		rec.Message = bounded(e.Messages[0], 1500)
	}
}

func addOutcome(rec *bundle.TestRecord, o flaky.Outcome) {
	rec.Runs++
	if o.Failed {
		rec.Failures++
	}
}

func runLines(res *flakyrun.Result) []string {
	var out []string
	for _, r := range res.Runs {
		out = append(out, strings.Join(r.Argv, " "))
	}
	return out
}

func appendUnique(list []string, items ...string) []string {
	for _, s := range items {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

func withoutFullCommand(ids []string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(s string) bool { return s == FullCommandID })
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return bounded(s, 300)
}

func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// plainOutput turns a go test -json stream back into the text a person
// reads (each event's Output); other output is returned as it is. Lines
// that are not events (the head/tail marker, a build error) are kept.
func plainOutput(s string) string {
	if !strings.HasPrefix(strings.TrimSpace(s), "{") {
		return s
	}
	var w strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		var ev struct {
			Action string
			Output *string
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Action == "" {
			w.WriteString(line)
			continue
		}
		if ev.Output != nil {
			w.WriteString(*ev.Output)
		}
	}
	return w.String()
}

// relativeIDs removes the run's directory from test ids: a runner that
// names a test by its file (node --test, when the file does not load)
// names it by its absolute path, and each clean checkout is a new
// directory, so the same failure would be a new test on every tree.
func relativeIDs(dir string, ids []string) []string {
	prefixes := []string{dir + string(filepath.Separator)}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		prefixes = append(prefixes, real+string(filepath.Separator))
	}
	out := ids[:0:0]
	for _, id := range ids {
		for _, p := range prefixes {
			id = strings.ReplaceAll(id, p, "")
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
