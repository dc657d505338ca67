package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/flakyfix"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/protect"
	"github.com/org/mini-agent/internal/report"
	"github.com/org/mini-agent/internal/sandbox"
)

const usageText = `mini-agent: turn a failing test run into a validated fix.

Usage:
  mini-agent fix     --workdir DIR --test-command CMD [flags]   fix the failure, validate, write bundle/summary
  mini-agent explain --workdir DIR --test-command CMD [flags]   read-only diagnosis with file:line evidence
  mini-agent flaky   --workdir DIR --test-command CMD [flags]   find and prove flaky tests: stress reruns, verdicts, rates
  mini-agent demo                                              the whole pipeline on a bundled example (scripted model)
  mini-agent tool NAME --workdir DIR [--test-command CMD] 'JSON-ARGS'
                                                               run one tool call, print what the model would see
  mini-agent action                                            the GitHub Action entry point (inputs from INPUT_*, event from GITHUB_*)
  mini-agent publish [--config PATH] BUNDLE                    publish a bundle under the repository's policy (two-job recipe)
  mini-agent eval [--tasks LIST] [--shard i/n] [--json FILE]  run the eval tasks (scripted, or a real --provider)
  mini-agent version                                           print the version (also --version)

Run 'mini-agent COMMAND --help' for a command's flags and examples. Exit codes: 0 fixed and
validated (or explained), 1 not fixed, 2 usage or configuration error, 3 validation failed,
5 the model refused (or its reply was content-filtered), 130 cancelled.
`

// commandNames are the subcommands, for the unknown-command suggestion.
var commandNames = []string{"fix", "explain", "flaky", "demo", "tool", "action", "publish", "eval", "version", "help"}

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitcode.Usage
	}
	switch args[0] {
	case "fix":
		return runJob(ctx, agent.ModeFix, args[1:], stdout, stderr)
	case "explain":
		return runJob(ctx, agent.ModeExplain, args[1:], stdout, stderr)
	case "flaky":
		return runFlaky(ctx, args[1:], stdout, stderr)
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "tool":
		return runTool(ctx, args[1:], stdout, stderr)
	case "action":
		return runAction(ctx, args[1:], stdout, stderr)
	case "publish":
		return runPublish(ctx, args[1:], stdout, stderr)
	case "eval":
		return runEval(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version", "-v":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[1] != "help" && slices.Contains(commandNames, args[1]) {
			return Main(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usageText)
		return 0
	}
	msg := fmt.Sprintf("mini-agent: unknown command %q", args[0])
	if near := nearestCommand(args[0]); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	fmt.Fprintf(stderr, "%s (see 'mini-agent --help')\n", msg)
	return exitcode.Usage
}

func nearestCommand(name string) string {
	fs := flag.NewFlagSet("commands", flag.ContinueOnError)
	for _, c := range commandNames {
		fs.Bool(c, false, "")
	}
	return nearestFlag(strings.TrimLeft(name, "-"), fs)
}

// jobFlags binds the fix/explain flags (docs/cli.md "Flags of fix and explain")
// to the job and the model choice.
type jobFlags struct {
	job        pipeline.Job
	choice     provider.Choice
	maxTokens  int64
	maxCost    float64
	maxSteps   int
	timeout    time.Duration
	protected  string
	secretEnvs string
	testEnv    string
	writable   string
	network    string
	sockets    []string
	priceIn    float64
	priceOut   float64
}

// jobCommand is the help and flags of fix and explain.
func jobCommand(mode agent.Mode) (*command, *jobFlags) {
	j := &jobFlags{}
	c := &command{
		name:  string(mode),
		usage: string(mode) + " --workdir DIR --test-command CMD [flags]",
		groups: []flagGroup{
			{"Workspace and tests", []string{"workdir", "test-command", "failure-log", "test-timeout", "instructions"}},
			{"Model", []string{"provider", "model", "base-url", "script"}},
			{"Budgets (the run stops at the first one reached)", []string{"max-steps", "max-tokens", "max-cost-usd", "price-in", "price-out", "timeout"}},
			{"Safety", []string{"protected", "secret-env", "test-env", "test-writable", "test-network", "test-socket", "no-sandbox"}},
			{"Output", []string{"trace", "bundle", "summary"}},
		},
		required: []string{"test-command"},
		meta: map[string]string{"workdir": "DIR", "test-command": "CMD", "failure-log": "FILE", "instructions": "TEXT",
			"provider": "NAME", "model": "NAME", "base-url": "URL", "script": "FILE", "protected": "GLOBS",
			"secret-env": "NAMES", "test-env": "NAMES", "test-writable": "DIRS", "test-network": "MODE", "test-socket": "PATH", "trace": "FILE", "bundle": "FILE", "summary": "FILE", "price-in": "USD", "price-out": "USD",
			"max-cost-usd": "USD"},
		footer: "API keys come from OPENAI_API_KEY or ANTHROPIC_API_KEY; MINI_AGENT_PROVIDER and MINI_AGENT_MODEL " +
			"set the --provider and --model defaults. Progress goes to stderr, the report to stdout. Exit codes: 0 " +
			"fixed and validated (or explained, or nothing to fix), 1 not fixed, 2 usage or configuration error, " +
			"3 validation failed, 5 the model refused (or its reply was content-filtered), 130 cancelled.",
		define: func(fs *flag.FlagSet) { j.define(fs) },
	}
	if mode == agent.ModeExplain {
		c.about = "Diagnoses why the test command fails, read-only: the agent may read and search the " +
			"workspace and run the tests, every write is denied by the policy, and the report gives the root " +
			"cause with file:line evidence. The failure comes from --failure-log (a CI log, test output, go test " +
			"-json or JUnit XML) or, without it, from a first run of the test command. Nothing in the workspace changes."
		c.examples = []string{
			`mini-agent explain --workdir . --test-command "go test ./..." --model gpt-4.1`,
			`mini-agent explain --workdir ~/src/app --test-command "npm test" --failure-log ci.log --provider anthropic`,
		}
	} else {
		c.about = "Fixes the failing tests of a workspace: the harness runs the test command (or reads " +
			"--failure-log) to see what fails, the agent reads, searches, patches and reruns the narrowed tests " +
			"through four tools under a write policy, then the harness itself reruns the failing tests and the " +
			"full command to validate the change. The report (stdout), the bundle and the PR-body summary say " +
			"what changed, how it was validated, and why a run stopped when it did not fix."
		c.examples = []string{
			`mini-agent fix --workdir . --test-command "go test ./..." --model gpt-4.1 --max-cost-usd 2`,
			`mini-agent fix --workdir ~/src/app --test-command "pytest -q" --base-url http://localhost:11434/v1 --model qwen2.5-coder --bundle bundle.json --summary pr.md`,
		}
	}
	return c, j
}

func (j *jobFlags) define(fs *flag.FlagSet) {
	o, m := &j.job, &j.choice
	fs.StringVar(&o.Workdir, "workdir", ".", "the workspace (a checkout of the repository)")
	fs.StringVar(&o.TestCommand, "test-command", "", "the test command (trusted; e.g. \"go test ./...\")")
	fs.StringVar(&o.FailureLog, "failure-log", "", "CI log, test output or JUnit XML; default: run the test command first")
	fs.StringVar(&o.Instructions, "instructions", "", "extra instructions for the model")
	fs.StringVar(&m.Provider, "provider", envOr("MINI_AGENT_PROVIDER", "openai"), "openai, anthropic or script ($MINI_AGENT_PROVIDER)")
	fs.StringVar(&m.Model, "model", os.Getenv("MINI_AGENT_MODEL"), "model name ($MINI_AGENT_MODEL; default per provider; required with --base-url)")
	fs.StringVar(&m.BaseURL, "base-url", "", "API base URL of an OpenAI-compatible server (vLLM, Ollama, llama.cpp, OpenRouter...)")
	fs.StringVar(&m.ScriptPath, "script", "", "JSONL trajectory for --provider script")
	fs.IntVar(&j.maxSteps, "max-steps", agent.DefaultMaxSteps, "stop after this many model turns")
	fs.DurationVar(&j.timeout, "timeout", agent.DefaultTimeout, "wall-clock limit for the agent run")
	fs.Int64Var(&j.maxTokens, "max-tokens", agent.DefaultMaxTokens, "token budget (input + output)")
	fs.Float64Var(&j.maxCost, "max-cost-usd", 0, "cost budget in USD (0: none); an unpriced model needs --price-in/--price-out")
	fs.Float64Var(&j.priceIn, "price-in", 0, "the model's price, USD per million input tokens (with --price-out)")
	fs.Float64Var(&j.priceOut, "price-out", 0, "the model's price, USD per million output tokens (with --price-in)")
	fs.DurationVar(&o.TestTimeout, "test-timeout", 10*time.Minute, "limit for one test command run")
	fs.StringVar(&j.protected, "protected", "", "comma-separated globs never written (default "+strings.Join(protect.Defaults(), ",")+")")
	fs.StringVar(&j.secretEnvs, "secret-env", "", "comma-separated extra environment variable names to treat as secrets")
	fs.StringVar(&j.testEnv, "test-env", "", "comma-separated extra environment variable names the test command keeps (its environment is an allow-list)")
	fs.StringVar(&j.writable, "test-writable", "", "comma-separated extra absolute directories the test command may write to (Linux kernel sandbox)")
	fs.StringVar(&j.network, "test-network", "loopback", "the test command's network: loopback (a network namespace of its own with only loopback) or open")
	fs.Func("test-socket", "a unix socket the test command may connect to although the isolation would hide it, e.g. /var/run/docker.sock (repeat for more; gives root where the socket does)", func(v string) error {
		j.sockets = append(j.sockets, v)
		return nil
	})
	fs.BoolVar(&o.NoSandbox, "no-sandbox", false, "run the test command without the Linux sandbox (Landlock, namespaces, dropped groups)")
	fs.StringVar(&o.TracePath, "trace", "", "write the event trace (JSONL) here")
	fs.StringVar(&o.BundlePath, "bundle", "", "write the bundle (JSON) here")
	fs.StringVar(&o.SummaryPath, "summary", "", "write the PR-body markdown here")
}

// finish turns the parsed flags into the job and the model choice; set
// names the flags given.
func (j *jobFlags) finish(set map[string]bool) error {
	o := &j.job
	if !(j.maxCost >= 0) || math.IsInf(j.maxCost, 0) {
		return fmt.Errorf("--max-cost-usd %v is not a positive amount", j.maxCost)
	}
	o.Limits = agent.Limits{MaxSteps: j.maxSteps, MaxTokens: j.maxTokens, MaxCostUSD: j.maxCost, Timeout: j.timeout}
	j.choice.MaxCostUSD = j.maxCost
	if j.protected != "" {
		o.Protected = splitList(j.protected)
		if _, err := protect.New(o.Protected); err != nil {
			return fmt.Errorf("--protected: %v", err)
		}
	}
	o.SecretNames = splitList(j.secretEnvs)
	o.TestEnv = splitList(j.testEnv)
	for _, d := range splitList(j.writable) {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("--test-writable: %q is not an absolute directory", d)
		}
		o.TestWritable = append(o.TestWritable, filepath.Clean(d))
	}
	network, err := sandbox.ParseNetwork(j.network)
	if err != nil {
		return fmt.Errorf("--test-network: %v", err)
	}
	o.TestNetwork = network
	for _, p := range j.sockets {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("--test-socket: %q is not an absolute path", p)
		}
		o.TestSockets = append(o.TestSockets, filepath.Clean(p))
	}
	if set["price-in"] != set["price-out"] {
		return errors.New("--price-in and --price-out go together (USD per million input and output tokens)")
	}
	if set["price-in"] {
		for _, p := range []float64{j.priceIn, j.priceOut} {
			if !(p >= 0 && p <= config.MaxPrice) {
				return fmt.Errorf("--price-in and --price-out must be between 0 and %g USD per million tokens", float64(config.MaxPrice))
			}
		}
		j.choice.Price = &[2]float64{j.priceIn, j.priceOut}
	}
	o.Version = versionString()
	return nil
}

func runJob(ctx context.Context, mode agent.Mode, args []string, stdout, stderr io.Writer) int {
	c, j := jobCommand(mode)
	fs := c.flagSet()
	if code, done := c.parse(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		return c.usageError(stderr, unexpectedArgs(fs.Args()))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := j.finish(set); err != nil {
		return c.usageError(stderr, err.Error())
	}
	j.job.Mode = mode
	return execute(ctx, c, j.job, j.choice, stdout, stderr)
}

// unexpectedArgs explains positional arguments given to fix/explain: the
// workspace is a flag.
func unexpectedArgs(args []string) string {
	msg := fmt.Sprintf("unexpected arguments %q", args)
	if fi, err := os.Stat(args[0]); err == nil && fi.IsDir() {
		return msg + fmt.Sprintf("; the workspace is given with --workdir (--workdir %s)", args[0])
	}
	if strings.HasPrefix(args[0], "{") || strings.Contains(args[0], " ") {
		return msg + "; give the test command with --test-command and the workspace with --workdir"
	}
	return msg + "; the workspace is given with --workdir DIR, flags go before any argument"
}

// execute builds the model, runs the job and prints the report.
func execute(ctx context.Context, c *command, job pipeline.Job, choice provider.Choice, stdout, stderr io.Writer) int {
	err := job.Check()
	var model provider.Selected
	if err == nil {
		model, err = provider.Select(choice)
	}
	var out *pipeline.Outcome
	deps := pipeline.Deps{Model: model, Progress: stderr}
	if err == nil {
		out, err = pipeline.Run(ctx, job, deps)
	}
	if err == nil && flakyfix.Intermittent(out) {
		// A flake: the flaky path's evidence and rerun bar, never a
		// one-rerun "fix".
		out, err = flakyfix.Handoff(ctx, job, deps, out)
	}
	if err != nil {
		if exitcode.IsUsage(err) {
			return c.usageError(stderr, describe(err))
		}
		if out == nil {
			fmt.Fprintf(stderr, "mini-agent %s: %v\n", c.name, err)
			return exitcode.For(ctx, err)
		}
		// The job ran; an output it was asked for could not be written
		// (the error names the path and why).
		fmt.Fprintf(stderr, "mini-agent %s: not every output was written:\n%v\n", c.name, err)
	}
	fmt.Fprint(stdout, report.Text(out.Bundle))
	return exitcode.ForRun(out.Bundle.Status, err)
}

// describe is a usage error in the CLI's words: its flags.
func describe(err error) string {
	var (
		ce *pipeline.ConfigError
		be *provider.BudgetError
	)
	switch {
	case errors.As(err, &ce):
		return ce.Describe("--" + ce.Field)
	case errors.As(err, &be):
		return be.Describe("--max-cost-usd", "--price-in", "--price-out")
	}
	return err.Error()
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
