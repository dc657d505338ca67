package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyfix"
	"github.com/org/mini-agent/internal/flakyrun"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/redact"
	"github.com/org/mini-agent/internal/safefile"
	"github.com/org/mini-agent/internal/testcmd"
)

// flakyFlags are the flags of `mini-agent flaky`: its own, and the fix
// job's model, budget, safety and output flags (for --fix).
type flakyFlags struct {
	job        *jobFlags
	tests      string
	maxRuns    int
	maxMinutes float64
	jsonPath   string
	fix        bool
	seed       int64
}

// flakyJobFlags are the fix flags `mini-agent flaky` takes over.
var flakyJobFlags = []string{"workdir", "test-command", "test-timeout", "instructions",
	"provider", "model", "base-url", "script",
	"max-steps", "max-tokens", "max-cost-usd", "price-in", "price-out", "timeout",
	"protected", "secret-env", "test-env", "test-writable", "test-network", "test-socket", "no-sandbox",
	"trace", "bundle", "summary"}

func flakyCommand() (*command, *flakyFlags) {
	fixCmd, j := jobCommand(agent.ModeFix)
	f := &flakyFlags{job: j}
	meta := map[string]string{"tests": "IDS", "json": "FILE", "max-minutes": "M", "seed": "N"}
	for k, v := range fixCmd.meta {
		meta[k] = v
	}
	return &command{
		name:  "flaky",
		usage: "flaky --workdir DIR --test-command CMD [--tests ID,...] [--max-runs N] [--max-minutes M] [--json FILE] [--fix] [flags]",
		about: "Finds and proves flaky tests locally: runs the test command again and again (go test with -json " +
			"under rotating stressors: -count, -race, -shuffle=on with every seed recorded, -cpu 1,2,4; other " +
			"runners repeat the command as configured), reads each test's outcome from every run, and gives each " +
			"test a verdict: flaky (both outcomes seen), failing (failed every run: a regression for " +
			"'mini-agent fix'), passing (never failed here). A test stops early after 5 failures; the run and " +
			"time budgets bound the rest. Every run is contained like run_test's (environment allow-list, " +
			"sandbox, every child killed, deadline). The summary goes to stdout, progress to stderr.",
		groups: []flagGroup{
			{"Workspace and tests", []string{"workdir", "test-command", "tests", "test-timeout"}},
			{"Budgets of the detection", []string{"max-runs", "max-minutes", "seed"}},
			{"Fix (--fix)", []string{"fix", "instructions"}},
			{"Model", []string{"provider", "model", "base-url", "script"}},
			{"Budgets of the agent (with --fix)", []string{"max-steps", "max-tokens", "max-cost-usd", "price-in", "price-out", "timeout"}},
			{"Safety", []string{"protected", "secret-env", "test-env", "test-writable", "test-network", "test-socket", "no-sandbox"}},
			{"Output", []string{"json", "trace", "bundle", "summary"}},
		},
		required: []string{"test-command"},
		meta:     meta,
		examples: []string{
			`mini-agent flaky --workdir . --test-command "go test ./..." --json flaky.json`,
			`mini-agent flaky --workdir . --test-command "pytest -v" --tests tests/test_ids.py::test_two_ids_differ --max-runs 60`,
		},
		footer: "Exit codes: 0 nothing flaky or failing (or the fix of the one flaky test was proven), 1 a test is flaky or failing " +
			"and not fixed (or the fix is unproven), 2 usage or configuration error, 3 the fix failed the rerun " +
			"bar or a diff check, 130 cancelled.",
		define: func(fs *flag.FlagSet) {
			all := flag.NewFlagSet("fix", flag.ContinueOnError)
			j.define(all)
			for _, name := range flakyJobFlags {
				g := all.Lookup(name)
				fs.Var(g.Value, g.Name, g.Usage)
			}
			fs.StringVar(&f.tests, "tests", "", "comma-separated test ids to examine (default: the whole suite): first alone; when none of them "+
				"fails alone (an order dependence needs the tests around it), the whole suite, which is then reported. "+
				"--fix fixes a named test only (a flaky test not named is reported, not fixed) and proves it on the selection it failed in")
			fs.IntVar(&f.maxRuns, "max-runs", flakyrun.DefaultMaxRuns, "at most this many runs of the test command in the detection (with --tests, in the runs alone and again in the whole suite's; with --fix, the rerun bar makes as many more as it needs, within --max-minutes)")
			fs.Float64Var(&f.maxMinutes, "max-minutes", flakyrun.DefaultMaxTime.Minutes(), "wall-clock limit of the detection, in minutes (with --tests, of the runs alone and again of the whole suite's; with --fix, the rerun bar has its own limit of the same length)")
			fs.Int64Var(&f.seed, "seed", 0, "make the shuffled orders reproducible: runs that shuffle use -shuffle=N, N+1, ... (default 0: random seeds; every failing run's seed is recorded either way)")
			fs.StringVar(&f.jsonPath, "json", "", "write the JSON report here")
			fs.BoolVar(&f.fix, "fix", false, "have the agent fix the flaky test's root cause, then prove the fix with the rerun bar")
		},
	}, f
}

// check validates the flaky-specific flags; the error names the flag.
func (f *flakyFlags) check() error {
	if f.maxRuns < 1 || f.maxRuns > flaky.MaxRuns {
		return fmt.Errorf("--max-runs %d is not a positive number of runs", f.maxRuns)
	}
	if !(f.maxMinutes > 0) || math.IsInf(f.maxMinutes, 0) || f.maxMinutes > 7*24*60 {
		return fmt.Errorf("--max-minutes %v is not a positive number of minutes (at most a week)", f.maxMinutes)
	}
	if f.seed < 0 {
		return fmt.Errorf("--seed %d is negative (go test -shuffle takes a seed of 0 or more)", f.seed)
	}
	if f.job.job.TestCommand == "" {
		return errors.New("--test-command is required")
	}
	if fi, err := os.Stat(f.job.job.Workdir); err != nil || !fi.IsDir() {
		return fmt.Errorf("--workdir %q is not a directory", f.job.job.Workdir)
	}
	if f.jsonPath != "" { // written at the end: a path that cannot be written fails now
		if fi, err := os.Stat(filepath.Dir(f.jsonPath)); err != nil || !fi.IsDir() {
			return fmt.Errorf("--json %s: its directory does not exist", f.jsonPath)
		}
		if err := safefile.CheckTarget(f.jsonPath); err != nil {
			return fmt.Errorf("--json %v", err) // a link, a directory: never written through
		}
	}
	return nil
}

// runFlaky is `mini-agent flaky`.
func runFlaky(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, f := flakyCommand()
	fs := c.flagSet()
	if code, done := c.parse(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		return c.usageError(stderr, unexpectedArgs(fs.Args()))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.job.finish(set); err != nil {
		return c.usageError(stderr, err.Error())
	}
	if err := f.check(); err != nil {
		return c.usageError(stderr, err.Error())
	}
	cmd, err := testcmd.Parse(f.job.job.TestCommand)
	if err != nil {
		return c.usageError(stderr, "--test-command: "+err.Error())
	}
	job := f.job.job
	var model provider.Selected
	if f.fix { // a job or model that cannot run fails now, not after the detection
		job.Mode = agent.ModeFix
		err := job.Check()
		if err == nil {
			model, err = provider.Select(f.job.choice)
		}
		if err != nil {
			if exitcode.IsUsage(err) {
				return c.usageError(stderr, describe(err))
			}
			fmt.Fprintf(stderr, "mini-agent flaky: %v\n", err)
			return exitcode.For(ctx, err)
		}
	}
	// Test output reaches the report (failure messages, test names) and
	// the progress: redacted like a fix job's, the checkout's persisted
	// credentials included.
	rd := flakyRedaction(ctx, job)
	stderr = redact.Writer{W: stderr, Rd: rd}
	dcfg := flakyrun.Config{
		Workdir: job.Workdir, Command: cmd, Tests: splitList(f.tests),
		MaxRuns: f.maxRuns, MaxTime: time.Duration(f.maxMinutes * float64(time.Minute)), Seed: f.seed,
		RunTimeout: job.TestTimeout, EnvAllow: job.TestEnv, SecretNames: job.SecretNames,
		WritableDirs: job.TestWritable, NoSandbox: job.NoSandbox, Access: job.TestAccess(), Progress: stderr, KeepFailureLog: f.fix,
	}
	// With --tests, an order-dependent test never fails alone: Examine
	// runs the whole suite when none of the tests failed alone.
	ex, err := flakyrun.Examine(ctx, dcfg, flakyrun.DefaultProbeRuns)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "mini-agent flaky: %v\n", err)
		return exitcode.Cancelled
	case errors.Is(err, testcmd.ErrNarrowing):
		return c.usageError(stderr, "--tests: "+err.Error())
	case errors.Is(err, proc.ErrNotStarted):
		return c.usageError(stderr, "--test-command: "+err.Error())
	case err != nil:
		fmt.Fprintf(stderr, "mini-agent flaky: %v\n", err)
		return exitcode.For(ctx, err)
	}
	res := ex.Result
	defer res.RemoveLogs()
	rep, err := flakyrun.NewReport(cmd.Line(), res)
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent flaky: %v\n", err)
		return exitcode.NotFixed
	}
	if ex.Widened() {
		rep.Notes = append(rep.Notes, wholeSuiteNote(ex, f.tests, f.fix))
	}
	var fixStatus flaky.FixStatus
	var fixBundle bundle.Status // the fix's agent run, for its exit code (a refusal is 5)
	if target := flakyrun.FixTarget(res.Tests, ex.Requested); f.fix && target != nil {
		fmt.Fprintf(stderr, "mini-agent flaky: fixing %s (%d of %d runs failed)\n", target.ID, target.Failures, target.Runs)
		// ex.Config is the selection the evidence came from: the rerun bar
		// reruns the whole suite when the test failed only among it.
		fr, err := flakyfix.Fix(ctx, flakyfix.FixConfig{Detect: ex.Config, Target: target, FailureLog: res.FailureLogs[target.ID],
			Job: job, Deps: pipeline.Deps{Model: model, Progress: stderr}})
		if err != nil {
			fmt.Fprintf(stderr, "mini-agent flaky: --fix: %v\n", err)
			if code := exitcode.For(ctx, err); code != exitcode.NotFixed {
				return code
			}
			rep.Fix = flaky.NewFixReport(flaky.Result{Status: flaky.FixUnproven, Reason: "the fix could not be judged: " + err.Error()}, nil)
		} else {
			rep.Fix = fr.Report
			if fr.Outcome != nil {
				fixBundle = fr.Outcome.Bundle.Status
			}
		}
		fixStatus = rep.Fix.Status
	} else if f.fix {
		if other := flakyrun.FixTarget(res.Tests, nil); other != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("--fix: none of the tests named in --tests is flaky; %s is, but it was not named: reported, not fixed", other.ID))
		} else {
			rep.Notes = append(rep.Notes, "--fix: no flaky test to fix")
		}
	}
	code := exitcode.ForFlaky(rep.Count(flaky.VerdictFlaky), rep.Count(flaky.VerdictFailing), fixStatus, fixBundle)
	if f.jsonPath != "" {
		if err := writeJSON(f.jsonPath, rep, rd); err != nil {
			fmt.Fprintf(stderr, "mini-agent flaky: --json: %v\n", err)
			code = max(code, exitcode.NotFixed)
		}
	}
	fmt.Fprint(stdout, rd(rep.Summary()))
	return code
}

// flakyRedaction masks the secrets of the environment and the credentials
// the workspace's git config persists.
func flakyRedaction(ctx context.Context, job pipeline.Job) redact.Func {
	values := proc.SecretValues(os.Environ(), job.SecretNames)
	creds, _ := redact.FromGitConfig(ctx, job.Workdir)
	for _, c := range creds {
		values = append(values, c.Values...)
	}
	return redact.New(values)
}

// wholeSuiteNote says that the tests named in --tests never failed alone,
// so the report is the whole suite's.
func wholeSuiteNote(ex *flakyrun.Examined, names string, fix bool) string {
	names = strings.Join(splitList(names), ", ")
	if !ex.WholeSuite {
		return fmt.Sprintf("%s never failed in %d runs alone, nor among the whole suite: the report is the whole suite's", names, ex.ProbeRuns)
	}
	note := fmt.Sprintf("%s never failed in %d runs alone, only among the whole suite (an order dependence on the tests around it): "+
		"the report is the whole suite's", names, ex.ProbeRuns)
	if fix {
		note += ", and the rerun bar of the fix runs the whole suite"
	}
	return note
}

// writeJSON writes v, indented, to path, never through a link (the report
// may be asked for in the workspace, where test code can plant one).
func writeJSON(path string, v any, rd redact.Func) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	// Secrets are printable text JSON does not escape (token formats,
	// base64): redacting the document masks them where they stand.
	return safefile.WriteFile(path, append([]byte(rd(string(data))), '\n'), 0o644)
}
