package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/report"
)

const usageText = `mini-agent: turn a failing test run into a validated fix.

Usage:
  mini-agent fix     --workdir DIR --test-command CMD [flags]   fix the failure, validate, write bundle/summary
  mini-agent explain --workdir DIR --test-command CMD [flags]   read-only diagnosis with file:line evidence
  mini-agent demo                                              the whole pipeline on a bundled example (scripted model)
  mini-agent tool NAME --workdir DIR [--test-command CMD] 'JSON-ARGS'
                                                               run one tool call, print what the model would see
  mini-agent action                                            the GitHub Action entry point (inputs from INPUT_*, event from GITHUB_*)
  mini-agent publish [--config PATH] BUNDLE                    publish a bundle under the repository's policy (two-job recipe)
  mini-agent eval [--tasks LIST] [--shard i/n] [--json FILE]  run the eval tasks (scripted, or a real --provider)

Run 'mini-agent fix -h' for the flags. Exit codes: 0 fixed and validated (or explained),
1 not fixed, 2 usage or configuration error, 3 validation failed, 130 cancelled.
`

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return pipeline.ExitUsage
	}
	switch args[0] {
	case "fix":
		return runJob(ctx, agent.ModeFix, args[1:], stdout, stderr)
	case "explain":
		return runJob(ctx, agent.ModeExplain, args[1:], stdout, stderr)
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
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usageText)
		return 0
	}
	fmt.Fprintf(stderr, "mini-agent: unknown command %q\n\n%s", args[0], usageText)
	return pipeline.ExitUsage
}

// jobFlags binds the fix/explain flags (ARCHITECTURE.md §6) to Options.
type jobFlags struct {
	opts       pipeline.Options
	maxTokens  int64
	maxCost    float64
	maxSteps   int
	timeout    time.Duration
	protected  string
	secretEnvs string
}

func newJobFlagSet(name string, stderr io.Writer) (*flag.FlagSet, *jobFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	j := &jobFlags{}
	o := &j.opts
	fs.StringVar(&o.Workdir, "workdir", ".", "the workspace (a checkout of the repository)")
	fs.StringVar(&o.TestCommand, "test-command", "", "the test command (trusted; e.g. \"go test ./...\")")
	fs.StringVar(&o.FailureLog, "failure-log", "", "CI log, test output or JUnit XML; default: run the test command first")
	fs.StringVar(&o.Instructions, "instructions", "", "extra instructions for the model")
	fs.StringVar(&o.Provider, "provider", envOr("MINI_AGENT_PROVIDER", "openai"), "openai, anthropic or script")
	fs.StringVar(&o.Model, "model", os.Getenv("MINI_AGENT_MODEL"), "model name (default per provider)")
	fs.StringVar(&o.BaseURL, "base-url", "", "API base URL (OpenAI-compatible servers: vLLM, Ollama, llama.cpp, OpenRouter...)")
	fs.StringVar(&o.ScriptPath, "script", "", "JSONL trajectory for --provider script")
	fs.IntVar(&j.maxSteps, "max-steps", agent.DefaultMaxSteps, "stop after this many model turns")
	fs.DurationVar(&j.timeout, "timeout", agent.DefaultTimeout, "wall-clock limit for the agent run")
	fs.Int64Var(&j.maxTokens, "max-tokens", agent.DefaultMaxTokens, "token budget (input + output)")
	fs.Float64Var(&j.maxCost, "max-cost-usd", 0, "cost budget in USD (0: none)")
	fs.DurationVar(&o.TestTimeout, "test-timeout", 10*time.Minute, "limit for one test command run")
	fs.StringVar(&j.protected, "protected", "", "comma-separated globs never written (default .github/**,**/.env,**/.env.*)")
	fs.StringVar(&j.secretEnvs, "secret-env", "", "comma-separated extra environment variable names to treat as secrets")
	fs.StringVar(&o.TracePath, "trace", "", "write the event trace (JSONL) here")
	fs.StringVar(&o.BundlePath, "bundle", "", "write the bundle (JSON) here")
	fs.StringVar(&o.SummaryPath, "summary", "", "write the PR-body markdown here")
	return fs, j
}

func (j *jobFlags) finish() {
	o := &j.opts
	o.Limits = agent.Limits{MaxSteps: j.maxSteps, MaxTokens: j.maxTokens, MaxCostUSD: j.maxCost, Timeout: j.timeout}
	if j.protected != "" {
		o.Protected = splitList(j.protected)
	}
	o.SecretNames = splitList(j.secretEnvs)
}

func runJob(ctx context.Context, mode agent.Mode, args []string, stdout, stderr io.Writer) int {
	fs, j := newJobFlagSet(string(mode), stderr)
	if err := fs.Parse(args); err != nil {
		return pipeline.ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mini-agent %s: unexpected arguments %q\n", mode, fs.Args())
		return pipeline.ExitUsage
	}
	j.finish()
	j.opts.Mode = mode
	j.opts.Progress = stderr
	return execute(ctx, j.opts, stdout, stderr)
}

// execute runs the pipeline and prints the report.
func execute(ctx context.Context, o pipeline.Options, stdout, stderr io.Writer) int {
	out, err := pipeline.Run(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent: %v\n", err)
		if errors.Is(err, pipeline.ErrUsage) {
			return pipeline.ExitUsage
		}
		if ctx.Err() != nil {
			return pipeline.ExitCancelled
		}
		if out == nil {
			return pipeline.ExitNotFixed
		}
	}
	fmt.Fprint(stdout, report.Text(out.Bundle))
	return out.ExitCode
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
