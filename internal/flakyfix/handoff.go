package flakyfix

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyrun"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/report"
	"github.com/org/mini-agent/internal/testcmd"
)

// Intermittent reports whether out is a fix job the baseline found
// intermittent and ended before the loop: a job for the flaky path.
func Intermittent(out *pipeline.Outcome) bool {
	if out == nil || out.Bundle == nil {
		return false
	}
	b := out.Bundle
	return b.Baseline != nil && b.Baseline.Verdict == bundle.VerdictIntermittent && b.Status == bundle.StatusNotFixed &&
		b.Diff == "" && b.Run.StopReason == ""
}

// Handoff takes a fix job whose failure the baseline found intermittent
// to the flaky path: the failing tests are examined under stress
// (flakyrun.Examine: alone, then with the whole suite for an order
// dependence), and the flaky one is fixed with its evidence and judged by
// the rerun bar (Fix). The outcome's bundle is fixed only when the fix is
// proven; otherwise it says, in its warnings, what the flaky path found.
// The bundle and summary files the job names are rewritten.
func Handoff(ctx context.Context, job pipeline.Job, deps pipeline.Deps, out *pipeline.Outcome) (*pipeline.Outcome, error) {
	b := out.Bundle
	cmd, err := testcmd.Parse(job.TestCommand)
	if err != nil {
		return nil, err
	}
	names := testcmd.Names(b.FailingTests)
	if deps.Progress != nil {
		fmt.Fprintf(deps.Progress, "flaky: the failure is intermittent at the base; examining %s under stress\n", strings.Join(names, ", "))
	}
	cfg := flakyrun.Config{Workdir: job.Workdir, Command: cmd, Tests: names, RunTimeout: job.TestTimeout,
		Env: deps.Environ, EnvAllow: job.TestEnv, SecretNames: job.SecretNames, WritableDirs: job.TestWritable,
		NoSandbox: job.NoSandbox, Access: job.TestAccess(), Progress: deps.Progress, KeepFailureLog: true}
	ex, err := flakyrun.Examine(ctx, cfg, 0)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return noted(job, out, "the flaky path could not examine the failing tests: "+err.Error())
	}
	defer ex.Result.RemoveLogs()
	target := flakyrun.FixTarget(ex.Result.Tests, ex.Requested)
	if target == nil {
		return noted(job, out, "the flaky path found none of "+strings.Join(names, ", ")+" flaky under stress ("+summary(ex)+"): not fixed")
	}
	fr, err := Fix(ctx, FixConfig{Detect: ex.Config, Target: target, FailureLog: ex.Result.FailureLogs[target.ID], Job: job, Deps: deps})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return noted(job, out, "the flaky fix could not be judged: "+err.Error())
	}
	res := fr.Outcome
	if res == nil {
		return noted(job, out, "the flaky path made no fix: "+fr.Report.Reason)
	}
	fb := res.Bundle
	line := fmt.Sprintf("flaky path: %s was flaky in %d of %d stress runs; the fix is %s: %s",
		target.ID, target.Failures, target.Runs, fr.Report.Status, fr.Report.Reason)
	fb.Warnings = append(fb.Warnings, line)
	if fr.Report.Status != flaky.FixProven && fb.Status == bundle.StatusFixed {
		fb.Status = bundle.StatusNotFixed
		if fr.Report.Status == flaky.FixFailedBar || fr.Report.Status == flaky.FixRejected {
			fb.Status = bundle.StatusValidationFailed
		}
	}
	return rewrite(job, res)
}

func summary(ex *flakyrun.Examined) string {
	var parts []string
	for _, e := range ex.Result.Tests {
		if ex.Requested(e.ID) {
			parts = append(parts, fmt.Sprintf("%s failed %d of %d", e.ID, e.Failures, e.Runs))
		}
	}
	if len(parts) == 0 {
		return "no outcome"
	}
	return strings.Join(parts, ", ")
}

// noted adds a warning to the job's bundle (still not fixed) and rewrites
// its files.
func noted(job pipeline.Job, out *pipeline.Outcome, why string) (*pipeline.Outcome, error) {
	out.Bundle.Warnings = append(out.Bundle.Warnings, why)
	return rewrite(job, out)
}

// rewrite renders the outcome's summary again and writes the bundle and
// summary files the job names, never through a link (as the pipeline does).
func rewrite(job pipeline.Job, out *pipeline.Outcome) (*pipeline.Outcome, error) {
	b := out.Bundle
	b.WhyStopped = report.Why(b)
	out.Summary = report.Body(b, report.Options{Version: job.Version})
	var errs []error
	if job.BundlePath != "" {
		errs = append(errs, b.Write(job.BundlePath))
	}
	if job.SummaryPath != "" {
		errs = append(errs, pipeline.WriteSummary(job.SummaryPath, out.Summary))
	}
	return out, errors.Join(errs...)
}
