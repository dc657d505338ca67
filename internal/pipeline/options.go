package pipeline

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider/pricing"
	"github.com/org/mini-agent/internal/protect"
	"github.com/org/mini-agent/internal/safefile"
	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/testcmd"
)

// Job describes one job: what to fix or explain, where, how to test it,
// within which limits, and where the reports go.
type Job struct {
	Mode        agent.Mode
	Workdir     string
	TestCommand string
	// FailureLog is a CI log / test output / JUnit file; empty means the
	// harness runs the test command first to see what fails.
	FailureLog string
	// FailureLogs are more logs, one per failed job or matrix leg: each is
	// extracted on its own and identical failures are merged with a count.
	FailureLogs  []string
	Instructions string
	// ChangeRequested: a person asked for a change (a review iteration on
	// mini-agent's own PR), so a passing test command does not end the run
	// as nothing to fix; the model makes the change and the harness
	// validates the full test command as usual.
	ChangeRequested bool
	// Flaky: the flaky path drives this job (flakyfix): its own evidence
	// says the target is flaky, so an intermittent or passing baseline
	// does not end the run, and its rerun bar judges the fix.
	Flaky bool

	Limits      agent.Limits
	TestTimeout time.Duration
	// Protected globs never written; nil means the defaults.
	Protected []string
	// SecretNames are extra environment variable names treated as secrets.
	SecretNames []string
	// TestEnv are extra environment variable names the test command keeps
	// beyond the allow-list (secret names are still removed).
	TestEnv []string
	// TestWritable are extra directories the test command may write to in
	// the kernel sandbox.
	TestWritable []string
	// NoSandbox runs the test command without the kernel sandbox.
	NoSandbox bool
	// TestNetwork is the network the test command gets: "" or loopback (a
	// network namespace with only loopback), or open (--test-network).
	TestNetwork sandbox.Network
	// TestSockets are unix sockets the test command may connect to
	// although the isolation would keep it from them (--test-socket; the
	// docker socket for tests that drive containers): absolute paths.
	TestSockets []string
	// Version of mini-agent, recorded in the bundle and the report footer.
	Version string

	TracePath   string
	BundlePath  string
	SummaryPath string
}

// Deps are what a job runs with: the model, where progress and events go,
// and the environment secrets are read from.
type Deps struct {
	// Model is the model the agent drives, built by the caller
	// (provider.Select).
	Model pricing.Selected
	// Progress receives one line per step (stderr in the CLI); nil discards.
	Progress io.Writer
	// Events receives every event too (the action's log groups, the eval).
	Events agent.EventSink
	// Environ is the environment for secret scrubbing and redaction; nil
	// means os.Environ().
	Environ []string
	// WrapTool, when set, wraps each tool the model drives before it is
	// registered (the harness's own validation runs stay unwrapped). It is a
	// test seam: the eval's broken-harness check swaps in a faulty tool to
	// prove its scenarios catch it. Production callers leave it nil.
	WrapTool func(agent.Tool) agent.Tool
}

// ConfigError is a job that cannot run as described. Field names the Job
// field at fault in the words users know it by ("workdir", "test-command",
// "failure-log", "trace", "bundle", "summary", "mode"); the caller names
// it its own way (a CLI flag, an action input) with Describe.
type ConfigError struct {
	Field string
	// Problem follows the field's name: " is required", ": <why>".
	Problem string
}

func (e *ConfigError) Error() string { return e.Describe(e.Field) }

// Describe is the error with the field called name.
func (e *ConfigError) Describe(name string) string { return name + e.Problem }

func configErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// runner is one run's job and dependencies.
type runner struct {
	Job
	Deps
}

// check checks the job and fills in the dependencies' defaults.
func (o *runner) check() error {
	if err := o.Job.Check(); err != nil {
		return err
	}
	if o.Model.Model == nil {
		return configErr("model", " is required")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	return nil
}

// Check reports a job that cannot run as described (a *ConfigError); Run
// checks it first too, so a caller calls it only to learn it earlier.
func (o *Job) Check() error {
	if o.Mode != agent.ModeFix && o.Mode != agent.ModeExplain {
		return configErr("mode", " %q is not fix or explain", o.Mode)
	}
	if o.Workdir == "" {
		return configErr("workdir", " is required")
	}
	fi, err := os.Stat(o.Workdir)
	if err != nil || !fi.IsDir() {
		return configErr("workdir", " %s is not a directory", o.Workdir)
	}
	if o.TestCommand == "" {
		return configErr("test-command", " is required")
	}
	if _, err := testcmd.Parse(o.TestCommand); err != nil {
		return configErr("test-command", ": %v", err)
	}
	if _, err := protect.New(o.Protected); err != nil {
		return configErr("protected", ": %v", err)
	}
	if _, err := sandbox.ParseNetwork(string(o.TestNetwork)); err != nil {
		return configErr("test-network", ": %v", err)
	}
	for _, s := range o.TestSockets {
		if !filepath.IsAbs(s) || filepath.Clean(s) != s {
			return configErr("test-socket", ": %q is not a clean absolute path", s)
		}
	}
	for _, p := range o.failureLogs() {
		if _, err := os.Stat(p); err != nil {
			return configErr("failure-log", ": %v", err)
		}
	}
	// Output files are written at the end: a path that cannot be written
	// must fail now, not after a whole run.
	for _, out := range []struct{ field, path string }{{"bundle", o.BundlePath}, {"summary", o.SummaryPath}, {"trace", o.TracePath}} {
		if out.path == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(out.path)); err != nil || !fi.IsDir() {
			return configErr(out.field, " %s: its directory does not exist", out.path)
		}
		// Never written through a link: one already there is refused now
		// (one planted during the run, when written).
		if err := safefile.CheckTarget(out.path); err != nil {
			return configErr(out.field, " %v", err)
		}
	}
	return nil
}

// TestAccess is the sandbox access the job's test runs get: the network
// and the opted-in sockets.
func (o *Job) TestAccess() sandbox.Access {
	n, _ := sandbox.ParseNetwork(string(o.TestNetwork)) // Check refused a bad one
	return sandbox.Access{Network: n, Sockets: o.TestSockets}
}

// failureLogs lists every given failure log.
func (o *Job) failureLogs() []string {
	var out []string
	if o.FailureLog != "" {
		out = append(out, o.FailureLog)
	}
	return append(out, o.FailureLogs...)
}
