package flakyjob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyissue"
	"github.com/org/mini-agent/internal/flakyrun"
	"github.com/org/mini-agent/internal/flakyscan"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/testcmd"
)

// detectConfig is the local runs' configuration for tests (nil: the whole
// suite).
func (r *runner) detectConfig(tests []string) flakyrun.Config {
	fc := r.job.Config.Flaky
	return flakyrun.Config{Workdir: r.job.Workdir, Command: r.job.Command, Tests: tests,
		MaxRuns: fc.MaxRuns, MaxTime: time.Duration(fc.MaxMinutes) * time.Minute, MinRuns: r.job.MinRuns, Seed: r.job.Seed,
		RunTimeout: r.job.Fix.TestTimeout, Env: r.job.Env, EnvAllow: r.job.EnvAllow, SecretNames: r.job.SecretNames,
		WritableDirs: r.job.WritableDirs, NoSandbox: r.job.NoSandbox, Access: r.job.Fix.TestAccess(), Progress: r.log, KeepFailureLog: true}
}

// probeRuns bounds the clean executions of the narrowed probe.
const probeRuns = flakyrun.DefaultProbeRuns

// examined is a candidate's local detection, kept for its fix.
type examined struct {
	cfg flakyrun.Config
	res *flakyrun.Result
}

// examine stress-runs the candidate's tests (flakyrun.Examine): narrowed
// to them first, then, when none failed alone, the whole suite. Proofs of
// flaky tests are added to proofs for the issue.
func (r *runner) examine(ctx context.Context, c *Candidate, proofs map[flakyscan.TestRef]flakyissue.Proof) error {
	c.Examined = true
	var names []string
	for _, t := range c.Candidate.Tests {
		if !contains(names, t.Test) {
			names = append(names, t.Test)
		}
	}
	r.logf("flaky: examining %s locally", strings.Join(names, ", "))
	ex, err := flakyrun.Examine(ctx, r.detectConfig(names), probeRuns)
	var whole *flakyrun.WholeSuiteError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &whole):
		return fmt.Errorf("flakyjob: local runs of the whole suite: %w", whole.Err)
	case errors.Is(err, proc.ErrNotStarted):
		return fmt.Errorf("flakyjob: the test command: %w", err)
	case errors.Is(err, testcmd.ErrNarrowing), err != nil && strings.Contains(err.Error(), "never ran"):
		// The workspace does not have these tests (or not by these
		// names): say so, do not guess.
		for _, t := range c.Candidate.Tests {
			c.Tests = append(c.Tests, TestResult{Ref: t, Problem: "not found in the workspace: " + oneLine(err.Error())})
		}
		return nil
	case err != nil:
		return fmt.Errorf("flakyjob: local runs of %s: %w", strings.Join(names, ", "), err)
	}
	res := ex.Result
	c.WholeSuite = ex.WholeSuite
	c.local = &examined{cfg: ex.Config, res: res}
	for _, t := range c.Candidate.Tests {
		tr := TestResult{Ref: t}
		ev := evidenceOf(res.Tests, t)
		if ev == nil {
			tr.Problem = "no outcome in the local runs"
			c.Tests = append(c.Tests, tr)
			continue
		}
		rep, err := flaky.NewTestReport(ev)
		if err != nil {
			tr.Problem = err.Error()
			c.Tests = append(c.Tests, tr)
			continue
		}
		tr.LocalID, tr.Report = ev.ID, &rep
		c.Tests = append(c.Tests, tr)
		if rep.Verdict == flaky.VerdictFlaky {
			cmd, seed := reproduce(res, ev.ID)
			proofs[t] = flakyissue.Proof{Runs: rep.Runs, Failures: rep.Failures, Rate: rep.Rate, Low: rep.CI95[0], High: rep.CI95[1],
				Command: cmd, Seed: seed}
		}
	}
	return nil
}

// evidenceOf maps a CI test to the local runs' evidence: the same name, or
// "package.Name" when the name is in several packages.
func evidenceOf(es []*flaky.Evidence, t flakyscan.TestRef) *flaky.Evidence {
	for _, e := range es {
		if e.ID == t.Test || (t.Package != "" && e.ID == t.Package+"."+t.Test) {
			return e
		}
	}
	return nil
}

// reproduce is the command line of the first local run in which id failed
// (its shuffle seed in place of -shuffle=on), and that seed.
func reproduce(res *flakyrun.Result, id string) (string, string) {
	for _, run := range res.Runs {
		if !contains(run.Failed, id) {
			continue
		}
		seed := ""
		if len(run.Seeds) > 0 {
			seed = run.Seeds[0]
		}
		args := make([]string, 0, len(run.Argv))
		for _, a := range run.Argv {
			if a == "-shuffle=on" && seed != "" {
				a = "-shuffle=" + seed
			}
			args = append(args, quote(a))
		}
		return strings.Join(args, " "), seed
	}
	return "", ""
}

// quote shell-quotes one argument when it needs it. A lone "&&" is the
// separator of a suite's commands (testcmd.Invocation.Argv) and stays one.
func quote(s string) string {
	if s == "&&" || s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// flakiest is the candidate's flaky test with the highest local rate, nil
// when none is flaky.
func flakiest(ts []TestResult) *TestResult {
	var best *TestResult
	for i := range ts {
		t := &ts[i]
		if t.Report == nil || t.Report.Verdict != flaky.VerdictFlaky || strings.HasSuffix(t.LocalID, " (package)") {
			continue
		}
		if best == nil || t.Report.Rate > best.Report.Rate {
			best = t
		}
	}
	return best
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
