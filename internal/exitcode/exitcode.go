// Package exitcode owns mini-agent's exit codes, a public contract, and is
// the one place that turns how a command ended — an error, the job's
// status, the publisher's outcome — into a code. Every command (the CLI's
// subcommands, the action, publish) asks it; nothing else names a code.
//
// It sits at the job level: it knows the typed errors of the packages that
// report configuration mistakes (pipeline, provider, config, route), so
// they need not know about exit codes.
//
// Job level: maps the job-level packages' errors and statuses to codes; only entry points import it.
package exitcode

import (
	"context"
	"errors"
	"fmt"

	"github.com/org/mini-agent/agent/provider/pricing"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

// The exit codes.
const (
	// OK: fixed and validated, explained, nothing to fix, skipped or answered.
	OK = 0
	// NotFixed: the run ended without a validated fix.
	NotFixed = 1
	// Usage: a usage or configuration error (flags, inputs, policy file).
	Usage = 2
	// ValidationFailed: the model finished but the harness's tests fail.
	ValidationFailed = 3
	// Failed: the action or publish met a GitHub API error, or publishing
	// refused the bundle.
	Failed = 4
	// Refused: the model refused the task, or the provider's content
	// filter blocked its reply (status and stop reason refused): nothing
	// was fixed or explained, and another try with the same model and
	// prompt will most likely be refused too.
	Refused = 5
	// Cancelled: interrupted (SIGINT, SIGTERM, the job cancelled).
	Cancelled = 130
)

// ErrUsage marks a usage or configuration error a command finds itself (a
// flag, an input, a missing token): wrap it with %w.
var ErrUsage = errors.New("usage")

// IsUsage reports whether err is one the user fixes in the command line,
// the workflow's inputs or the policy file.
func IsUsage(err error) bool {
	var (
		ce *pipeline.ConfigError
		be *pricing.BudgetError
		pe *config.Error
	)
	return errors.Is(err, ErrUsage) || errors.As(err, &ce) || errors.As(err, &be) || errors.As(err, &pe) ||
		errors.Is(err, pricing.ErrConfig) || errors.Is(err, route.ErrEvent)
}

// For is the code of a local command (fix, explain, demo, tool, eval)
// that ended with err: nil is OK, and an error that is neither a usage
// error nor a cancellation means nothing was fixed.
func For(ctx context.Context, err error) int { return forErr(ctx, err, NotFixed) }

// ForAction is the code of the action or publish ending with err: their
// other errors come from GitHub or from publishing.
func ForAction(ctx context.Context, err error) int { return forErr(ctx, err, Failed) }

func forErr(ctx context.Context, err error, other int) int {
	switch {
	case err == nil:
		return OK
	case IsUsage(err):
		return Usage
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return Cancelled
	}
	return other
}

// ForRun is the code of a local job that ended with the bundle status and
// outputs, the error writing the files it was asked for (the bundle, the
// summary, the trace: a link planted at one is refused): a job that ended
// well but could not deliver an output is NotFixed, never OK.
func ForRun(status bundle.Status, outputs error) int {
	code := ForStatus(status)
	if outputs != nil && code == OK {
		return NotFixed
	}
	return code
}

// ForStatus is the code of a job that ended with the bundle status.
func ForStatus(status bundle.Status) int {
	switch status {
	case bundle.StatusFixed, bundle.StatusExplained, bundle.StatusNothingToFix:
		return OK
	case bundle.StatusValidationFailed:
		return ValidationFailed
	case bundle.StatusRefused:
		return Refused
	case bundle.StatusCancelled:
		return Cancelled
	}
	return NotFixed
}

// ForFlaky is the code of `mini-agent flaky` once the tests were judged:
// flakyTests and failingTests count the verdicts, fix is the fix's status
// ("" when none was attempted) and fixBundle its agent run's status. A fix
// that failed the rerun bar or a diff check is ValidationFailed; an
// unproven one is NotFixed, never OK, or Refused when the model refused
// it (fixBundle refused), as for `mini-agent fix` and the action. With
// no fix, any flaky or failing test is NotFixed (a failing test is a
// regression for `mini-agent fix`, not a green run). A proven fix (of one
// test) is OK only when it was the one flaky test and none was failing.
func ForFlaky(flakyTests, failingTests int, fix flaky.FixStatus, fixBundle bundle.Status) int {
	switch fix {
	case flaky.FixFailedBar, flaky.FixRejected:
		return ValidationFailed
	case flaky.FixUnproven:
		if fixBundle == bundle.StatusRefused {
			return Refused
		}
		return NotFixed
	case flaky.FixProven:
		if failingTests > 0 || flakyTests > 1 { // a fix is for one test: others remain
			return NotFixed
		}
		return OK
	}
	if flakyTests > 0 || failingTests > 0 {
		return NotFixed
	}
	return OK
}

// ForPublished is the code of the action or publish once the publisher
// decided: outcome is its status, bundleStatus the job's.
func ForPublished(outcome publish.Status, bundleStatus bundle.Status) int {
	switch outcome {
	case publish.StatusFixed, publish.StatusExplained, publish.StatusSkipped, publish.StatusAnswered:
		return OK
	case publish.StatusNotFixed:
		switch bundleStatus {
		case bundle.StatusValidationFailed:
			return ValidationFailed
		case bundle.StatusRefused:
			return Refused
		}
		return NotFixed
	case publish.StatusNotReproduced:
		return NotFixed
	}
	return Failed
}

// Usagef is a usage error with the message: it matches ErrUsage and wraps
// what a %w in format names.
func Usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

type usageError struct{ err error }

func (e *usageError) Error() string        { return e.err.Error() }
func (e *usageError) Unwrap() error        { return e.err }
func (e *usageError) Is(target error) bool { return target == ErrUsage }
