// Package flakyrun is the job behind `mini-agent flaky`: it runs a
// workspace's test command again and again under stressors, reads every
// run's per-test outcomes, and gathers each test's evidence (runs,
// failures, messages, race reports, shuffle seeds) for internal/flaky to
// judge as flaky, failing or passing.
//
// Go tests run with -json and rotating stressors (-count, -race,
// -shuffle=on, -cpu 1,2,4); other runners repeat the command as
// configured. Every run goes through the run_test tool's contained path
// (tools.RunTest: environment allow-list, kernel sandbox, kill of every
// child, deadline). Budgets: a number of command runs and a wall-clock
// limit; ctx cancels at any time.
//
// Job level: uses tools, pipeline, testcmd, flaky and diffcheck.
package flakyrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/testcmd"
	"github.com/org/mini-agent/tools"
)

// ErrNeverRan is wrapped by Detect when a selected test never reported an
// outcome (renamed, deleted, or not in this tree).
var ErrNeverRan = errors.New("never ran")

// Default budgets.
const (
	DefaultMaxRuns = 40
	DefaultMaxTime = 10 * time.Minute
	// DefaultMinRuns is how many clean executions of a test end its
	// examination when it never failed.
	DefaultMinRuns = 30
	// defaultRunTimeout bounds one run of the command.
	defaultRunTimeout = 5 * time.Minute
)

// Why a detection stopped.
const (
	StopEvidence = "evidence" // every test had enough evidence
	StopMaxRuns  = "max-runs" // the run budget ended it
	StopMaxTime  = "max-time" // the time budget ended it
)

// Config is one detection.
type Config struct {
	// Workdir is the workspace the tests run in.
	Workdir string
	// Command is the parsed test command (trusted).
	Command *testcmd.Command
	// Tests, when set, are the tests to examine instead of the whole suite
	// (untrusted: validated by testcmd's narrowing).
	Tests []string
	// MaxRuns bounds the runs of the command; 0 means DefaultMaxRuns.
	MaxRuns int
	// MaxTime bounds the wall-clock time; 0 means DefaultMaxTime.
	MaxTime time.Duration
	// MinRuns is the clean executions after which a never-failing test is
	// done; 0 means DefaultMinRuns.
	MinRuns int
	// RunTimeout bounds one run; 0 means the lesser of 5 minutes and MaxTime.
	RunTimeout time.Duration
	// Stress, when non-empty, replaces the Go stressor rotation (the
	// acceptance bar reruns with the stressors that showed the flake).
	Stress []testcmd.Stress
	// Seed, when not zero, makes the shuffled order reproducible: the runs
	// that would shuffle with a random seed (-shuffle=on) use Seed, Seed+1,
	// Seed+2, ... in run order instead. Zero keeps random seeds. Either way
	// every failing run's seed is recorded.
	Seed int64
	// Done, when set, replaces the stop rule: the detection ends when it
	// returns true for the evidence so far (the rerun bar).
	Done func(tests []*flaky.Evidence) bool
	// KeepFailureLog keeps the full output of the first run in which each
	// test failed (up to maxKeptLogs tests), in Result.FailureLogs (the fix
	// job's failure).
	KeepFailureLog bool
	// The run_test tool's containment settings (see tools.RunTestConfig).
	Env, EnvAllow, SecretNames, WritableDirs []string
	NoSandbox                                bool
	// Access is the sandbox's access (the network, opted-in sockets,
	// credential masks, a workspace the harness made): see
	// tools.RunTestConfig.Access.
	Access sandbox.Access
	// PrefetchModules downloads the Go module's dependencies before the
	// first run without network (tools.RunTestConfig.PrefetchModules):
	// Examine sets it for its first detection only.
	PrefetchModules bool
	// ReadOnlyModules keeps the Go module cache out of the sandbox's
	// writable places (the proof's runs, after the harness downloaded the
	// dependencies): see tools.RunTestConfig.ReadOnlyModules.
	ReadOnlyModules bool
	// KeepTail keeps each run's bounded output in Run.Tail.
	KeepTail bool
	// OnRun, when set, sees every run's outcome as it ends, a cancelled or
	// timed-out one too (before its log is removed).
	OnRun func(tools.RunOutcome)
	// Progress receives one line per run; nil discards.
	Progress io.Writer
}

// Run is one run of the command.
type Run struct {
	Argv     []string      `json:"argv"`
	Flags    string        `json:"flags,omitempty"`
	Seeds    []string      `json:"seeds,omitempty"`
	ExitCode int           `json:"exit_code"`
	Duration time.Duration `json:"duration_ns"`
	// Failed names the tests that failed in this run.
	Failed []string `json:"failed,omitempty"`
	// Tail is the run's bounded head and tail of output, with
	// Config.KeepTail (the harness's own validation reports it).
	Tail string `json:"-"`
}

// Result is a detection's evidence.
type Result struct {
	// Tests are the examined tests' evidence, sorted by ID.
	Tests []*flaky.Evidence
	// Runs are the command runs made, in order.
	Runs []Run
	// Stop says why it stopped (StopEvidence, StopMaxRuns, StopMaxTime).
	Stop string
	// FailureLogs map a test to a copy of the output of the first run it
	// failed in, outside the workspace, when Config.KeepFailureLog; the
	// caller removes them with RemoveLogs.
	FailureLogs map[string]string
	// Notes say what could not be done as asked (a stressor dropped, the
	// output read as one outcome).
	Notes    []string
	Duration time.Duration
}

// goRotation is the stressors rotated across Go rounds. Every round
// shuffles, so every failure has a seed that reproduces its order.
var goRotation = []testcmd.Stress{
	{Count: 1, Race: true, Shuffle: "on"},
	{Count: 1, Shuffle: "on"},
	{Count: 1, Shuffle: "on", CPU: []int{1, 2, 4}},
	{Count: 3, Shuffle: "on"},
}

// raceProbe is the stressor of the extra -race runs, and raceProbeRuns
// their most.
var raceProbe = testcmd.Stress{Count: 3, Race: true, Shuffle: "on"}

const raceProbeRuns = 3

// Detect stress-runs the tests and returns their evidence. It returns an
// error (and no verdicts) when the command cannot run, a narrowing is
// invalid, or the output never told a test's outcome; on cancellation the
// context's error.
func Detect(ctx context.Context, cfg Config) (*Result, error) {
	res := &Result{}
	if err := detect(ctx, cfg, res); err != nil {
		res.RemoveLogs()
		return nil, err
	}
	return res, nil
}

func detect(ctx context.Context, cfg Config, res *Result) error {
	if cfg.Command == nil {
		return errors.New("flakyrun: no test command")
	}
	if cfg.MaxRuns < 0 || cfg.MaxTime < 0 || cfg.MinRuns < 0 {
		return errors.New("flakyrun: negative budget")
	}
	maxRuns := cmp(cfg.MaxRuns, DefaultMaxRuns)
	maxTime := cmpDur(cfg.MaxTime, DefaultMaxTime)
	minRuns := cmp(cfg.MinRuns, DefaultMinRuns)
	runTimeout := cmpDur(cfg.RunTimeout, min(defaultRunTimeout, maxTime))

	ws, err := tools.OpenWorkspace(cfg.Workdir, tools.WorkspaceOptions{})
	if err != nil {
		return err
	}
	defer ws.Close()
	rt := tools.NewRunTest(ws, tools.RunTestConfig{
		Command: cfg.Command, Timeout: runTimeout, Env: cfg.Env, EnvAllow: cfg.EnvAllow,
		SecretNames: cfg.SecretNames, WritableDirs: cfg.WritableDirs, NoSandbox: cfg.NoSandbox,
		Access: cfg.Access, PrefetchModules: cfg.PrefetchModules,
		// Evidence is never a cached replay of an earlier run.
		Uncached: true, ReadOnlyModules: cfg.ReadOnlyModules,
	})

	start := time.Now()
	deadline := start.Add(maxTime)
	tctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	d := &detection{cfg: cfg, tests: map[string]*tracked{}, rotation: goRotation}
	if len(cfg.Stress) > 0 {
		d.rotation = cfg.Stress
	}
	isGo := cfg.Command.Runner() == testcmd.Go
	sel := testcmd.Selection{Tests: cfg.Tests}
	// one makes a command run under stress and records it; stop is true
	// when the time budget cut it (the cut run is not counted).
	one := func(stress testcmd.Stress) (stop bool, err error) {
		stress = d.seeded(stress)
		out, err := rt.RunStressed(tctx, sel, testcmd.GoJSON, stress)
		if cfg.OnRun != nil && out.Argv != nil {
			cfg.OnRun(out) // also a run cut short: what contained it
		}
		if err != nil && ctx.Err() == nil && tctx.Err() != nil {
			return true, nil
		}
		if err != nil {
			if out.LogPath != "" {
				os.Remove(out.LogPath)
			}
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, fmt.Errorf("flakyrun: %w", err)
		}
		run, perr := d.record(out, stress)
		if cfg.KeepTail {
			run.Tail = out.Output
		}
		if perr == nil && cfg.KeepFailureLog {
			perr = res.keepLogs(out.LogPath, run.Failed)
		}
		os.Remove(out.LogPath)
		if perr != nil {
			return false, perr
		}
		res.Runs = append(res.Runs, run)
		d.progress(len(res.Runs), maxRuns, run)
		return false, nil
	}
	for len(res.Runs) < maxRuns {
		if d.finished(minRuns) {
			res.Stop = StopEvidence
			break
		}
		stress := testcmd.Stress{}
		if isGo {
			stress = d.nextStress()
		}
		stop, err := one(stress)
		if err != nil {
			return err
		}
		if stop || time.Now().After(deadline) {
			res.Stop = StopMaxTime
			break
		}
	}
	if res.Stop == "" {
		if d.finished(minRuns) {
			res.Stop = StopEvidence
		} else {
			res.Stop = StopMaxRuns
		}
	}
	// A flaky Go test whose failures never came with a race report gets a
	// few more -race runs within the budgets: only one round in four of the
	// rotation runs -race, and when the cause is a data race its report is
	// the evidence that names it. These runs add race reports only: every
	// test's examination is already over.
	for probes := 0; isGo && res.Stop == StopEvidence && probes < raceProbeRuns && len(res.Runs) < maxRuns &&
		time.Now().Before(deadline) && d.needRaceProbe(); probes++ {
		stop, err := one(raceProbe)
		if err != nil {
			return err
		}
		if stop {
			break
		}
	}
	res.Duration = time.Since(start)
	res.Notes = d.notes
	if missing := d.missing(); len(missing) > 0 && len(res.Runs) > 0 {
		return fmt.Errorf("flakyrun: %q %w in %d runs: check the names", missing, ErrNeverRan, len(res.Runs))
	}
	res.Tests = d.evidence()
	if len(res.Tests) == 0 && len(res.Runs) > 0 {
		return errors.New("flakyrun: the test command ran but no test outcome could be read from its output")
	}
	return nil
}

// maxKeptLogs bounds the tests whose failing output is kept.
const maxKeptLogs = 10

// keepLogs keeps the log for each failed test that has none yet.
func (r *Result) keepLogs(path string, failed []string) error {
	kept := ""
	for _, id := range failed {
		if _, ok := r.FailureLogs[id]; ok || len(r.FailureLogs) >= maxKeptLogs {
			continue
		}
		if kept == "" {
			var err error
			if kept, err = keepLog(path); err != nil {
				return err
			}
		}
		if r.FailureLogs == nil {
			r.FailureLogs = map[string]string{}
		}
		r.FailureLogs[id] = kept
	}
	return nil
}

// RemoveLogs removes the kept failure logs.
func (r *Result) RemoveLogs() {
	for _, p := range r.FailureLogs {
		os.Remove(p)
	}
	r.FailureLogs = nil
}

// keepLog copies a run's log to a temporary file.
func keepLog(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("flakyrun: keep the failing run's output: %w", err)
	}
	f, err := os.CreateTemp("", "mini-agent-flaky-*.log")
	if err != nil {
		return "", fmt.Errorf("flakyrun: keep the failing run's output: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("flakyrun: keep the failing run's output: %w", err)
	}
	return f.Name(), nil
}

func cmp(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func cmpDur(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// Test is the evidence of the test with this id, nil when it did not run.
func (r *Result) Test(id string) *flaky.Evidence {
	for _, e := range r.Tests {
		if e.ID == id {
			return e
		}
	}
	return nil
}
