// Package pipeline runs one job end to end on a local workspace:
// failure context → agent loop → diff → harness validation → bundle and
// reports. The CLI's fix, explain and demo commands, the action and the
// eval are thin wiring over Run.
//
// Job level: uses the loop, the tools, the leaf engines, bundle and report; knows no GitHub.
package pipeline

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
)

// Options describe one job.
type Options struct {
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

	Provider   string
	Model      string
	BaseURL    string
	ScriptPath string
	Script     []byte // embedded trajectory (demo)

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
	// PriceOverrides: model → [input, output] USD per million tokens.
	PriceOverrides map[string][2]float64
	// Price is the run's model's price, {input, output} USD per million
	// tokens (--price-in/--price-out); it wins over PriceOverrides and the
	// built-in table. nil: none given.
	Price *[2]float64
	// Version of mini-agent, recorded in the bundle and the report footer.
	Version string

	TracePath   string
	BundlePath  string
	SummaryPath string

	// Progress receives one line per step (stderr in the CLI); nil discards.
	Progress io.Writer
	// Events receives every event too (the action's log groups, the eval).
	Events agent.EventSink
	// Getenv reads the environment (API keys); nil means os.Getenv.
	Getenv func(string) string
	// Environ is the environment for secret scrubbing; nil means os.Environ().
	Environ []string
	// Model overrides the provider (tests and the eval inject one).
	ModelImpl agent.Model
	// WrapTool, when set, wraps each tool the model drives before it is
	// registered (the harness's own validation runs stay unwrapped). It is a
	// test seam: the eval's broken-harness check swaps in a faulty tool to
	// prove its scenarios catch it. Production callers leave it nil.
	WrapTool func(agent.Tool) agent.Tool
}

// ErrUsage marks configuration errors (exit code 2).
var ErrUsage = errors.New("usage")

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

func (o *Options) check() error {
	if o.Mode != agent.ModeFix && o.Mode != agent.ModeExplain {
		return usageErr("unknown mode %q", o.Mode)
	}
	if o.Workdir == "" {
		return usageErr("--workdir is required")
	}
	fi, err := os.Stat(o.Workdir)
	if err != nil || !fi.IsDir() {
		return usageErr("--workdir %s is not a directory", o.Workdir)
	}
	if o.TestCommand == "" {
		return usageErr("--test-command is required")
	}
	if err := o.checkCostCap(); err != nil {
		return err
	}
	for _, p := range o.failureLogs() {
		if _, err := os.Stat(p); err != nil {
			return usageErr("--failure-log: %v", err)
		}
	}
	// Output files are written at the end: a path that cannot be written
	// must fail now, not after a whole run.
	for flag, p := range map[string]string{"--bundle": o.BundlePath, "--summary": o.SummaryPath, "--trace": o.TracePath} {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(p)); err != nil || !fi.IsDir() {
			return usageErr("%s %s: its directory does not exist", flag, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return usageErr("%s %s is a directory", flag, p)
		}
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	return nil
}

// failureLogs lists every given failure log.
func (o *Options) failureLogs() []string {
	var out []string
	if o.FailureLog != "" {
		out = append(out, o.FailureLog)
	}
	return append(out, o.FailureLogs...)
}

// checkCostCap refuses a dollar budget that could not be enforced: a
// model with no known price and no price given would run unbounded, with
// only "cost unknown" at the end.
func (o *Options) checkCostCap() error {
	if o.Price != nil {
		overrides := map[string][2]float64{o.costModelName(): *o.Price}
		for k, v := range o.PriceOverrides {
			if _, dup := overrides[k]; !dup {
				overrides[k] = v
			}
		}
		o.PriceOverrides = overrides
	}
	for model, p := range o.PriceOverrides {
		if !(p[0] >= 0 && p[1] >= 0) || math.IsInf(p[0], 0) || math.IsInf(p[1], 0) {
			return usageErr("the price of %q must be two non-negative amounts (USD per million tokens), got %v", model, p)
		}
	}
	budget := o.Limits.MaxCostUSD
	if budget == 0 {
		return nil
	}
	if !(budget > 0) || math.IsInf(budget, 0) {
		return usageErr("--max-cost-usd %v is not a positive amount", budget)
	}
	name := o.costModelName()
	if provider.Priced(name, o.PriceOverrides) {
		return nil
	}
	return usageErr("--max-cost-usd %g: model %q has no known price, so the dollar budget could not be enforced; "+
		"give its price with --price-in and --price-out (USD per million input and output tokens; action inputs "+
		"price-in and price-out), or drop the dollar budget", budget, name)
}

// costModelName is the model name the run is priced by: as model() names it.
func (o *Options) costModelName() string {
	switch {
	case o.Model != "":
		return o.Model
	case o.ModelImpl != nil:
		return o.Provider
	case o.Provider == provider.ProviderOpenAI:
		return provider.DefaultOpenAIModel
	case o.Provider == provider.ProviderAnthropic:
		return provider.DefaultAnthropicModel
	}
	return o.Provider
}
