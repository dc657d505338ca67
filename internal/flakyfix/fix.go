// Package flakyfix fixes one flaky test and judges the fix against its
// evidence: the fix job with the evidence pack, the anti-pattern checks on
// the diff, the statistical rerun bar under the same stressors and seeds,
// and the whole suite once more under -race -shuffle=on.
//
// Job level: uses pipeline, flakyrun, flaky, diffcheck and testcmd.
package flakyfix

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/cleantree"
	"github.com/org/mini-agent/internal/diffcheck"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyrun"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/testcmd"
	"github.com/org/mini-agent/tools"
)

// FixConfig is one fix of one flaky test.
type FixConfig struct {
	// Detect is the detection's configuration: workspace, command,
	// budgets (MaxRuns and MaxTime bound the rerun bar) and containment.
	Detect flakyrun.Config
	// Target is the flaky test's pre-fix evidence.
	Target *flaky.Evidence
	// FailureLog is the output of a run in which the target failed: the
	// fix job's failure.
	FailureLog string
	// Job is the fix job (model limits, outputs, protected paths, extra
	// instructions); Mode, Workdir, TestCommand and FailureLog are set here.
	Job  pipeline.Job
	Deps pipeline.Deps
}

// FixResult is the judged fix.
type FixResult struct {
	// Attempts counts the fix jobs run: 2 when the first diff was rejected.
	Attempts int
	Report   *flaky.FixReport
	Outcome  *pipeline.Outcome
	// Findings are diffcheck's findings on the fix's diff.
	Findings []diffcheck.Finding
}

// Fix runs the fix job on the flaky test with its evidence, then accepts
// the fix only when (d) the diff passes the anti-pattern checks, (c) the
// harness's validation (the failing test and the full command) passed, (a)
// the rerun bar holds under the same stressors and seeds, and (b) the
// suite passes once more under -race -shuffle=on (Go). Anything less is
// rejected, failed-bar or unproven; never proven. A job that could not
// run is an error.
func Fix(ctx context.Context, fc FixConfig) (*FixResult, error) {
	if fc.FailureLog == "" {
		return nil, errors.New("flakyfix: no failing run's output was kept")
	}
	if fc.Target == nil || fc.Target.Failures == 0 || fc.Target.Failures == fc.Target.Runs {
		return nil, errors.New("flakyfix: the target is not a flaky test")
	}
	if strings.HasSuffix(fc.Target.ID, flakyrun.PackageSuffix) {
		return nil, fmt.Errorf("flakyfix: %s fails outside any test; only a test's flakiness can be proven fixed", fc.Target.ID)
	}
	bar, err := flaky.NewBar(fc.Target.Runs, fc.Target.Failures, flaky.MaxRuns)
	if err != nil {
		return nil, err
	}
	before, skipped, err := snapshotTree(fc.Detect.Workdir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(before)

	job := fc.Job
	job.Mode, job.Flaky = agent.ModeFix, true
	job.Workdir, job.TestCommand, job.FailureLog = fc.Detect.Workdir, fc.Detect.Command.Line(), fc.FailureLog
	instructions := strings.TrimSpace(Instructions(fc.Target, bar) + "\n\n" + job.Instructions)
	res := &FixResult{}
	judge := func(status flaky.FixStatus, reason string, after *flaky.Evidence) *FixResult {
		r := flaky.Result{Status: status, Reason: reason, Need: bar.Need}
		if after != nil {
			r.Runs, r.Failures, r.FailedRuns = after.Runs, after.Failures, slices.Clone(after.FailedRuns)
		}
		res.Report = flaky.NewFixReport(r, checks(res.Findings))
		return res
	}
	// A diff the anti-pattern checks reject goes back to the model once:
	// the workspace is restored and a second job gets the findings.
	firstRejected := ""
	for res.Attempts = 1; ; res.Attempts++ {
		job.Instructions = instructions
		if fc.Detect.Progress != nil {
			fmt.Fprintf(fc.Detect.Progress, "flaky: fix attempt %d of 2 for %s\n", res.Attempts, fc.Target.ID)
		}
		out, err := pipeline.Run(ctx, job, fc.Deps)
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		res.Outcome = out
		b := out.Bundle
		if b.Status == bundle.StatusRefused {
			// Whatever it changed before, a model that refused did not
			// propose a fix.
			return judge(flaky.FixUnproven, b.WhyStopped+firstRejected, nil), nil
		}
		if b.Diff == "" {
			return judge(flaky.FixUnproven, fmt.Sprintf("the agent made no change (job status %s)%s", b.Status, firstRejected), nil), nil
		}
		res.Findings, err = diffcheck.Check(b.Diff, diffcheck.Dirs{BeforeDir: before, AfterDir: fc.Detect.Workdir}, diffcheck.Options{Protected: job.Protected})
		if err != nil {
			return judge(flaky.FixRejected, "the diff could not be checked: "+err.Error(), nil), nil
		}
		if !diffcheck.Rejected(res.Findings) {
			break
		}
		reason := "the diff is rejected by the anti-pattern checks: " + strings.Join(diffcheck.RejectedChecks(res.Findings), ", ")
		if res.Attempts == 2 {
			return judge(flaky.FixRejected, reason+" (second attempt)", nil), nil
		}
		if err := restoreTree(fc.Detect.Workdir, before, skipped, b.Files); err != nil {
			return judge(flaky.FixRejected, reason+"; no second attempt: "+err.Error(), nil), nil
		}
		instructions = RejectionNote(res.Findings) + "\n\n" + instructions
		firstRejected = "; its first diff was rejected by " + strings.Join(diffcheck.RejectedChecks(res.Findings), ", ")
	}
	b := res.Outcome.Bundle
	if !b.Validated() {
		return judge(flaky.FixFailedBar, fmt.Sprintf("the harness's validation after the fix failed (job status %s)", b.Status), nil), nil
	}

	// The bar and the -race run are made on the tree the fix publishes (the
	// base commit plus exactly the bundle's files, on a clean checkout),
	// not in the workspace: what the PR does not carry cannot help.
	tree, err := publishedTree(ctx, fc.Detect.Workdir, b)
	if err != nil {
		return judge(flaky.FixUnproven, "the published tree could not be checked out: "+err.Error(), nil), nil
	}
	defer tree.Close()

	// (a) The rerun bar: the same selection, stressors and seeds.
	cfg := fc.Detect
	cfg.Workdir = tree.Dir()
	cfg.Access = cleanAccess(ctx, fc.Detect)
	// The same selection as the detection: narrowing to the target alone
	// would hide an order dependence on the tests around it, and a seed
	// replays an order of that selection only.
	cfg.Stress = barStress(cfg.Command, fc.Target.Seeds)
	cfg.KeepFailureLog, cfg.Progress = false, fc.Detect.Progress
	// The bar's run budget covers the runs the bar needs: a clean run of
	// the target counts once however many times it executed in the process
	// (-count=3), and the need is up to twice the detection's evidence, so
	// the detection's own budget would leave most fixes unproven. The time
	// budget still bounds it.
	cfg.MaxRuns = min(max(cmpOr(cfg.MaxRuns, flakyrun.DefaultMaxRuns), bar.Need), flaky.MaxRuns)
	cfg.Done = func(tests []*flaky.Evidence) bool {
		for _, e := range tests {
			if e.ID == fc.Target.ID {
				return !bar.Continue(e)
			}
		}
		return false
	}
	start := time.Now()
	after, err := flakyrun.Detect(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("flakyfix: rerun bar: %w", err)
	}
	ev := after.Test(fc.Target.ID)
	if ev == nil {
		return nil, fmt.Errorf("flakyfix: rerun bar: %s never ran", fc.Target.ID)
	}
	jr := bar.Judge(ev)
	if jr.Status == flaky.FixUnproven {
		jr.Reason = fmt.Sprintf("only %d of the %d clean runs needed were made before %s; the fix is not proven",
			ev.Runs, bar.Need, strings.TrimSuffix(flakyrun.StopText(after.Stop), " ended it"))
	}
	if jr.Status != flaky.FixProven {
		res.Report = flaky.NewFixReport(jr, checks(res.Findings))
		return res, nil
	}

	// (b) The whole suite once more under -race -shuffle=on (Go only).
	if cfg.Command.Runner() == testcmd.Go {
		whole := fc.Detect
		whole.Workdir, whole.Access = tree.Dir(), cfg.Access
		// One run that reports tests: a second only when -race proved
		// unavailable and the first told nothing.
		whole.Tests, whole.MaxRuns, whole.KeepFailureLog = nil, 2, false
		whole.Done = func([]*flaky.Evidence) bool { return true }
		whole.Stress = []testcmd.Stress{{Count: 1, Race: true, Shuffle: "on"}}
		if fc.Detect.MaxTime > 0 {
			whole.MaxTime = max(fc.Detect.MaxTime-time.Since(start), time.Minute)
		}
		sr, err := flakyrun.Detect(ctx, whole)
		if err != nil {
			return nil, fmt.Errorf("flakyfix: -race -shuffle=on run: %w", err)
		}
		for _, e := range sr.Tests {
			if e.Failures > 0 {
				jr.Status = flaky.FixFailedBar
				jr.Reason = fmt.Sprintf("%s; but the suite under -race -shuffle=on failed: %s", jr.Reason, e.ID)
				break
			}
		}
		for _, n := range sr.Notes {
			jr.Reason += "; " + n
		}
	} else {
		jr.Reason += "; " + cfg.Command.Runner().String() + " has no -race -shuffle=on equivalent here: that check was not made"
	}
	res.Report = flaky.NewFixReport(jr, checks(res.Findings))
	return res, nil
}

// RejectionNote tells the model why its first change was rejected and
// undone.
func RejectionNote(fs []diffcheck.Finding) string {
	var b strings.Builder
	b.WriteString("Your previous change was rejected by the anti-pattern checks and has been undone; the workspace is as it was. " +
		"Fix the root cause instead. A second rejection ends the run. The findings:\n")
	for _, f := range fs {
		if f.Severity == diffcheck.Reject {
			fmt.Fprintf(&b, "- %s at %s:%d: %s\n", f.Check, f.File, f.Line, f.Reason)
		}
	}
	return strings.TrimSpace(b.String())
}

// restoreTree undoes a change: each file the bundle lists is put back from
// the snapshot, or removed when the snapshot has none. A file too large
// to have been snapshotted cannot be restored: an error, nothing undone.
func restoreTree(dir, before string, skipped map[string]bool, files []bundle.File) error {
	var paths []string
	for _, f := range files {
		for _, p := range []string{f.Path, f.OldPath} {
			if p == "" || slices.Contains(paths, p) {
				continue
			}
			if skipped[filepath.FromSlash(p)] {
				return fmt.Errorf("%s was too large to snapshot and cannot be restored", p)
			}
			paths = append(paths, p)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range paths {
		rel := filepath.FromSlash(p)
		data, err := os.ReadFile(filepath.Join(before, rel))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("restore %s: %w", p, err)
			}
		case err != nil:
			return fmt.Errorf("restore %s: %w", p, err)
		default:
			if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
				return fmt.Errorf("restore %s: %w", p, err)
			}
			if err := root.WriteFile(rel, data, 0o644); err != nil {
				return fmt.Errorf("restore %s: %w", p, err)
			}
		}
	}
	return nil
}

// barStress is the rerun bar's stressors: the detection's kinds (-race,
// -cpu 1,2,4, -shuffle=on) with -count=3 in each run, so that the bar's
// runs fit the budget, and each seed that made the test fail replayed with
// -shuffle=SEED in between.
func barStress(c *testcmd.Command, seeds []string) []testcmd.Stress {
	if c.Runner() != testcmd.Go {
		return nil
	}
	out := []testcmd.Stress{
		{Count: 3, Shuffle: "on"},
		{Count: 3, Race: true, Shuffle: "on"},
		{Count: 1, Shuffle: "on", CPU: []int{1, 2, 4}},
	}
	for _, s := range seeds {
		out = append(out, testcmd.Stress{Count: 3, Shuffle: s})
	}
	return out
}

func checks(fs []diffcheck.Finding) []flaky.Check {
	out := []flaky.Check{}
	for _, f := range fs {
		out = append(out, flaky.Check{Name: f.Check, Severity: string(f.Severity), File: f.File, Line: f.Line, Reason: f.Reason})
	}
	return out
}

// Instructions are the flaky-specific instructions with the evidence pack.
func Instructions(e *flaky.Evidence, bar flaky.Bar) string {
	var b strings.Builder
	rate := float64(e.Failures) / float64(e.Runs)
	fmt.Fprintf(&b, "The test %s is flaky: on the same code it failed %d of %d runs (rate %.2f) under stress reruns. "+
		"Find and fix the root cause of the nondeterminism. Usual causes: shared state between tests (order "+
		"dependence shown by -shuffle), data races, waits done with sleeps, map iteration order, time and randomness.\n",
		e.ID, e.Failures, e.Runs, rate)
	b.WriteString("Forbidden, and rejected mechanically: new sleeps or time.After waits, raising a timeout or deadline, " +
		"retry loops, t.Skip or testing.Short guards, build tags, deleting or renaming tests, fewer assertions, recover(), " +
		"discarded errors, rerun/retry markers, and edits to go.mod, go.sum or CI configuration.\n")
	fmt.Fprintf(&b, "The fix is accepted only after %d clean reruns of the test under the same stressors and seeds, "+
		"then the whole suite under -race -shuffle=on, then the full test command.\n", bar.Need)
	if len(e.Flags) > 0 {
		fmt.Fprintf(&b, "Flags of failing runs: %s\n", strings.Join(e.Flags, "; "))
	}
	if len(e.Seeds) > 0 {
		fmt.Fprintf(&b, "Shuffle seeds of failing runs (go test -shuffle=SEED replays the order): %s\n", strings.Join(e.Seeds, ", "))
	}
	for i, m := range e.Messages {
		fmt.Fprintf(&b, "Failure message %d:\n%s\n", i+1, m)
	}
	for i, r := range e.Races {
		fmt.Fprintf(&b, "Race report %d:\n%s\n", i+1, r)
	}
	return b.String()
}

// snapshotTree copies the workspace's regular files (not .git, not files
// over diffcheck.MaxFileSize) to a temporary directory: the "before" side
// of the diff check.
func snapshotTree(dir string) (string, map[string]bool, error) {
	dst, err := os.MkdirTemp("", "mini-agent-flaky-before-")
	if err != nil {
		return "", nil, err
	}
	skipped := map[string]bool{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		if fi, err := d.Info(); err != nil || fi.Size() > diffcheck.MaxFileSize {
			skipped[rel] = true
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o600)
	})
	if err != nil {
		os.RemoveAll(dst)
		return "", nil, fmt.Errorf("flakyfix: snapshot the workspace before the fix: %w", err)
	}
	return dst, skipped, nil
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// publishedTree checks out the base commit of b with b's files applied,
// the tree publishing commits, and checks that it is the tree the
// harness's validation recorded.
func publishedTree(ctx context.Context, workdir string, b *bundle.Bundle) (*cleantree.Tree, error) {
	t, err := cleantree.Checkout(ctx, workdir, b.BaseSHA)
	if err != nil {
		return nil, err
	}
	// The workspace's installed dependencies (node_modules), read-only, as
	// the harness's own proof has them.
	pipeline.LinkDependencies(t, workdir, pipeline.WorkspaceDependencies(ctx, workdir))
	changes := pipeline.TreeChanges(b.Files)
	if err := t.Apply(changes); err != nil {
		t.Close()
		return nil, err
	}
	if b.TreeSHA != "" {
		if id, err := t.Hash(ctx, changes); err != nil || id != b.TreeSHA {
			t.Close()
			return nil, fmt.Errorf("the published tree is %s, the validated one %s (%v)", id, b.TreeSHA, err)
		}
	}
	return t, nil
}

// cleanAccess is the sandbox access of runs on a clean checkout the
// harness made: the detection's, the checkout given to the unprivileged
// user test code runs as (as root), and the workspace's persisted
// credentials masked there too (test code knows where the workspace is).
func cleanAccess(ctx context.Context, d flakyrun.Config) sandbox.Access {
	a := d.Access
	a.HandOver = true
	masks, _, _ := tools.CredentialMasks(ctx, d.Workdir)
	a.Masks = append(slices.Clone(a.Masks), masks...)
	return a
}
