package eval

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/internal/diffcheck"
	"github.com/org/mini-agent/internal/fakellm"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyfix"
	"github.com/org/mini-agent/internal/flakyrun"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/testcmd"
)

// sourceModule is the module path of mini-agent's source tree, which a
// flaky task's fixture path is relative to.
const sourceModule = "github.com/org/mini-agent"

// FindSource returns the root of mini-agent's source tree that holds dir:
// the nearest directory at or above it whose go.mod declares mini-agent's
// module.
func FindSource(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if isSource(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of %s at or above %s", sourceModule, abs)
		}
	}
}

// isSource reports whether dir's go.mod declares mini-agent's module.
func isSource(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == sourceModule
		}
	}
	return false
}

// flakyRun is one flaky task's state while it runs.
type flakyRun struct {
	task    *Task
	spec    *FlakySpec
	fixture string // the fixture directory on disk
	tmp     string
	outDir  string
	env     []string
	cmd     *testcmd.Command
	dcfg    flakyrun.Config
	servers []*fakellm.Server
}

// flakyDir is a flaky task's fixture on disk, or why it cannot be found.
func (r *runner) flakyDir(t *Task) (string, error) {
	dir := filepath.Join(r.o.Source, filepath.FromSlash(t.Flaky.Fixture))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("fixture %s is not a directory of the source tree %s", t.Flaky.Fixture, r.o.Source)
	}
	return dir, nil
}

// runFlaky runs a flaky task: the detection on a fresh copy of the fixture,
// then the forbidden trajectory's fix on another fresh copy and the proper
// trajectory's fix on the detection's copy, both with the detection's
// evidence, exactly as `mini-agent flaky --fix` would; then judges them.
func (r *runner) runFlaky(ctx context.Context, t *Task, res *TaskResult) {
	fr := &FlakyResult{Test: t.Flaky.Test}
	res.Flaky = fr
	var fails []string
	defer func() {
		res.Failures = fails
		res.Resolved = len(fails) == 0
		if !res.Resolved {
			res.Reason = fails[0]
		}
	}()
	fail := func(format string, args ...any) { fails = append(fails, fmt.Sprintf(format, args...)) }
	fx, cleanup, err := r.prepareFlaky(ctx, t)
	defer cleanup()
	if err != nil {
		fail("setup: %v", err)
		return
	}
	rctx, cancel := context.WithTimeout(ctx, r.o.taskTimeout(t))
	defer cancel()

	start := time.Now()
	det, err := flakyrun.Detect(rctx, fx.dcfg)
	fr.DetectS = seconds(time.Since(start))
	if err != nil {
		fail("detection: %v", err)
		if ctx.Err() == nil && rctx.Err() != nil {
			fail("the task's time limit (%v) ended it", r.o.taskTimeout(t))
		}
		return
	}
	defer det.RemoveLogs()
	fr.DetectCommandRuns = len(det.Runs)
	target := det.Test(t.Flaky.Test)
	if target != nil {
		fr.DetectRuns, fr.DetectFailures = target.Runs, target.Failures
		if v, err := target.Verdict(); err == nil {
			fr.Verdict = string(v)
		}
	}
	if msg := detectionFailure(t.Flaky.Test, target, det); msg != "" {
		fail("detection: %s", msg)
		return
	}
	if bar, err := flaky.NewBar(target.Runs, target.Failures, flaky.MaxRuns); err == nil {
		fr.Bar = bar.Need
	}
	log := det.FailureLogs[t.Flaky.Test]

	// The forbidden trajectory on a fresh copy: always scripted.
	start = time.Now()
	forbidden, ferr := r.flakyFix(rctx, fx, "forbidden", t.Flaky.Forbidden, true, target, log)
	fr.ForbiddenS = seconds(time.Since(start))
	if ferr == nil {
		fr.ForbiddenStatus = string(forbidden.Report.Status)
		fr.RejectedBy = diffcheck.RejectedChecks(forbidden.Findings)
	}
	// The proper trajectory on the detection's copy (as `flaky --fix`
	// does): the script, or the real model.
	start = time.Now()
	proper, perr := r.flakyFix(rctx, fx, "proper", t.Flaky.Proper, !r.o.real(), target, log)
	fr.ProperS = seconds(time.Since(start))
	if perr == nil {
		rep := proper.Report
		fr.ProperStatus, fr.CleanRuns, fr.FailuresAfter = string(rep.Status), rep.RunsAfter, rep.FailuresAfter
		if rep.Need > 0 {
			fr.Bar = rep.Need
		}
		if out := proper.Outcome; out != nil {
			b := out.Bundle
			res.Status, res.StopReason, res.Steps = b.Status, b.Run.StopReason, b.Run.Steps
			res.Tokens, res.CostUSD, res.CostKnown = b.Usage.Total(), b.CostUSD, b.CostKnown
			res.ToolErrors, res.PolicyDenials, res.PatchRefusals = b.Run.ToolErrors, b.Run.Denials, b.Run.Refusals
		}
	}
	fails = append(fails, judgeFlaky(t.Flaky, forbidden, ferr, proper, perr)...)
	switch {
	case ctx.Err() != nil:
		fail("interrupted: %v", ctx.Err())
	case rctx.Err() != nil:
		fail("the task's time limit (%v) ended it", r.o.taskTimeout(t))
	}
}

// prepareFlaky copies the fixture for the detection and builds its
// configuration.
func (r *runner) prepareFlaky(ctx context.Context, t *Task) (*flakyRun, func(), error) {
	fx := &flakyRun{task: t, spec: t.Flaky}
	cleanup := func() {
		for _, s := range fx.servers {
			s.Close()
		}
		if fx.tmp != "" {
			os.RemoveAll(fx.tmp)
		}
	}
	var err error
	if fx.fixture, err = r.flakyDir(t); err != nil {
		return nil, cleanup, err
	}
	if fx.cmd, err = testcmd.Parse(t.TestCommand); err != nil {
		return nil, cleanup, fmt.Errorf("test_command: %w", err)
	}
	if fx.tmp, err = os.MkdirTemp("", "mini-agent-evalflaky-"); err != nil {
		return nil, cleanup, err
	}
	fx.outDir = filepath.Join(fx.tmp, "out")
	if r.o.Artifacts != "" {
		fx.outDir = filepath.Join(r.o.Artifacts, t.Name)
	}
	ws := filepath.Join(fx.tmp, "detect")
	if err := fx.fresh(ctx, ws); err != nil {
		return nil, cleanup, err
	}
	fx.env = os.Environ()
	for _, k := range sortedKeys(t.Env) {
		fx.env = append(fx.env, k+"="+t.Env[k])
	}
	testTimeout := time.Duration(t.Limits.TestTimeout)
	if testTimeout == 0 {
		testTimeout = defaultTestTimeout
	}
	maxTime := time.Duration(t.Flaky.MaxTime)
	if maxTime == 0 {
		maxTime = DefaultFlakyMaxTime
	}
	maxRuns := t.Flaky.MaxRuns
	if maxRuns == 0 {
		maxRuns = DefaultFlakyMaxRuns
	}
	fx.dcfg = flakyrun.Config{
		Workdir: ws, Command: fx.cmd, Tests: t.Flaky.Tests, MaxRuns: maxRuns, MaxTime: maxTime,
		RunTimeout: min(testTimeout, maxTime), Env: fx.env, SecretNames: t.SecretEnv, KeepFailureLog: true,
		// Reproducible shuffled orders: a task's result does not hang on
		// the order luck gives (timing and map order still vary).
		Seed: 1,
	}
	return fx, cleanup, nil
}

// fresh copies the fixture (without its patches and Python caches) into
// dir and commits it in a new git repository, as a CI checkout would be.
func (fx *flakyRun) fresh(ctx context.Context, dir string) error {
	err := filepath.WalkDir(fx.fixture, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(fx.fixture, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dir, rel)
		switch {
		case d.IsDir() && (d.Name() == "__pycache__" || d.Name() == ".git"):
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return fmt.Errorf("fixture %s: only regular files and directories are copied", filepath.ToSlash(rel))
		case strings.HasSuffix(d.Name(), ".diff"):
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("copy the fixture: %w", err)
	}
	return commitAll(ctx, dir, "fixture "+fx.spec.Fixture)
}

// flakyFix runs one trajectory's fix through flakyfix.Fix. scripted picks
// the trajectory's script; otherwise the real model answers.
func (r *runner) flakyFix(ctx context.Context, fx *flakyRun, name string, tj Trajectory, scripted bool,
	target *flaky.Evidence, failureLog string) (*flakyfix.FixResult, error) {
	t := fx.task
	dcfg := fx.dcfg
	dcfg.KeepFailureLog = false
	if name != "proper" {
		dcfg.Workdir = filepath.Join(fx.tmp, name)
		if err := fx.fresh(ctx, dcfg.Workdir); err != nil {
			return nil, err
		}
	}
	var (
		model      agent.Model
		prov, mdl  string
		maxCostUSD float64
		err        error
	)
	if scripted {
		script, serr := tj.scriptBytes(t.fsys, fx.fixture, t.Flaky.Test)
		if serr != nil {
			return nil, serr
		}
		var srv *fakellm.Server
		model, srv, err = r.o.scriptModel(script, t.Env["OPENAI_API_KEY"])
		if srv != nil {
			fx.servers = append(fx.servers, srv)
		}
		prov, mdl = r.o.scriptedName()
	} else {
		model, err = r.o.newModel(nil)
		prov, mdl = r.o.modelName()
		maxCostUSD = r.o.MaxCostUSD
	}
	if err != nil {
		return nil, err
	}
	sel, err := provider.Choice{Config: provider.Config{Provider: prov, Model: mdl}, MaxCostUSD: maxCostUSD}.Use(model)
	if err != nil {
		return nil, err
	}
	out := filepath.Join(fx.outDir, name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	agentTimeout := time.Duration(t.Limits.Timeout)
	if agentTimeout == 0 {
		agentTimeout = r.o.taskTimeout(t)
	}
	job := pipeline.Job{
		Limits: agent.Limits{MaxSteps: t.Limits.MaxSteps, MaxTokens: t.Limits.MaxTokens, Timeout: agentTimeout,
			MaxCostUSD: maxCostUSD},
		TestTimeout: dcfg.RunTimeout, Protected: t.Policy.Protected, SecretNames: t.SecretEnv,
		TracePath: filepath.Join(out, "trace.jsonl"), BundlePath: filepath.Join(out, "bundle.json"),
		SummaryPath: filepath.Join(out, "summary.md"),
	}
	deps := pipeline.Deps{Model: sel, Environ: fx.env}
	if w := r.o.WrapTool; w != nil {
		tc := ToolContext{Task: t, Workdir: dcfg.Workdir, Env: fx.env}
		deps.WrapTool = func(tool agent.Tool) agent.Tool { return w(tc, tool) }
	}
	return flakyfix.Fix(ctx, flakyfix.FixConfig{Detect: dcfg, Target: target, FailureLog: failureLog, Job: job, Deps: deps})
}

// detectionFailure says why the detection did not find test flaky with a
// failing run's output kept, or "".
func detectionFailure(test string, target *flaky.Evidence, det *flakyrun.Result) string {
	if target == nil {
		var ids []string
		for _, e := range det.Tests {
			ids = append(ids, e.ID)
		}
		return fmt.Sprintf("%s was not among the tests seen in %d command runs (%s)", test, len(det.Runs), strings.Join(ids, ", "))
	}
	v, err := target.Verdict()
	switch {
	case err != nil:
		return fmt.Sprintf("%s: %v", test, err)
	case v != flaky.VerdictFlaky:
		return fmt.Sprintf("%s is %s after %d runs (%d failures; stopped by %s), want flaky", test, v, target.Runs, target.Failures, det.Stop)
	case det.FailureLogs[test] == "":
		return fmt.Sprintf("no failing run's output of %s was kept", test)
	}
	return ""
}

// judgeFlaky lists what keeps the two trajectories from resolving the
// task: the forbidden fix must be rejected by the named check, the proper
// fix proven with the bar met.
func judgeFlaky(spec *FlakySpec, forbidden *flakyfix.FixResult, ferr error, proper *flakyfix.FixResult, perr error) []string {
	var fails []string
	switch {
	case ferr != nil:
		fails = append(fails, fmt.Sprintf("forbidden trajectory: %v", ferr))
	case forbidden.Report.Status != flaky.FixRejected:
		fails = append(fails, fmt.Sprintf("forbidden trajectory: its fix was not rejected (status %s: %s); want rejected by %s",
			forbidden.Report.Status, forbidden.Report.Reason, spec.RejectedBy))
	case !slices.Contains(diffcheck.RejectedChecks(forbidden.Findings), spec.RejectedBy):
		fails = append(fails, fmt.Sprintf("forbidden trajectory: rejected by %s, want %s", strings.Join(diffcheck.RejectedChecks(forbidden.Findings), ", "), spec.RejectedBy))
	}
	switch {
	case perr != nil:
		fails = append(fails, fmt.Sprintf("proper trajectory: %v", perr))
	case proper.Report.Status != flaky.FixProven:
		fails = append(fails, fmt.Sprintf("proper trajectory: its fix is %s, want proven: %s", proper.Report.Status, proper.Report.Reason))
	case proper.Report.Need == 0 || proper.Report.RunsAfter < proper.Report.Need || proper.Report.FailuresAfter != 0:
		// flakyrun.Judge never says proven below the bar; the eval does not take its word for it.
		fails = append(fails, fmt.Sprintf("proper trajectory: proven with %d clean runs of %d needed and %d failures",
			proper.Report.RunsAfter, proper.Report.Need, proper.Report.FailuresAfter))
	}
	return fails
}

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*100) / 100 }
