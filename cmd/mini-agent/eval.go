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

	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/eval"
	"github.com/org/mini-agent/internal/exitcode"
)

// evalFlags are the flags of `mini-agent eval`.
type evalFlags struct {
	o                         eval.Options
	tasksDir, shard, jsonPath string
	checkTasks                bool
}

func evalCommand() (*command, *evalFlags) {
	e := &evalFlags{}
	return &command{
		name:  "eval",
		usage: "eval [--tasks LIST] [--shard i/n] [--json FILE] [flags]\n       mini-agent eval merge [--json OUT] REPORT.json...",
		about: "Runs the eval: broken projects with a failing test command, each run through the same pipeline " +
			"as fix and explain (same tools, sandbox, policy, loop and harness validation), then judged by hidden " +
			"checks the model never sees. By default the bundled agent tasks run with their scripted trajectories; " +
			"--set flaky runs the flaky tasks instead (a flaky fixture of the source tree per task: the detection " +
			"must find the test flaky, the proper fix be proven by the rerun bar and the forbidden fix be rejected " +
			"by its named check; minutes each), --set all both; " +
			"--provider runs a real model on the same tasks. A markdown table goes to stdout, progress to stderr; " +
			"'mini-agent eval merge' joins the JSON reports of shards.",
		groups: []flagGroup{
			{"Tasks", []string{"set", "tasks", "tasks-dir", "source", "shard", "check-tasks"}},
			{"Model", []string{"provider", "model", "base-url", "replay-openai", "max-cost-usd"}},
			{"Running", []string{"j", "timeout"}},
			{"Output", []string{"json", "artifacts"}},
		},
		meta: map[string]string{"set": "NAME", "source": "DIR", "tasks": "LIST", "tasks-dir": "DIR", "shard": "i/n", "provider": "NAME", "model": "NAME",
			"base-url": "URL", "json": "FILE", "artifacts": "DIR", "max-cost-usd": "USD"},
		examples: []string{
			"mini-agent eval --set all --tasks 03-patch-conflict,14-flaky-order",
			"mini-agent eval --provider openai --model gpt-4.1-mini --shard 1/4 --json report-1.json",
		},
		footer: "Exit codes: 0 every task that ran was resolved, 1 some task was not, 2 usage or configuration " +
			"error, 130 interrupted. A task whose toolchain is missing is skipped with the reason.",
		define: func(fs *flag.FlagSet) {
			o := &e.o
			fs.StringVar(&o.Set, "set", eval.SetAgent, "the tasks to choose from: "+strings.Join(eval.Sets, ", "))
			fs.StringVar(&o.Filter, "tasks", "", "comma-separated task names, or a regexp over names (default: all of the set)")
			fs.StringVar(&o.Source, "source", "", "mini-agent's source tree, for the flaky tasks' fixtures (default: found from the working directory up)")
			fs.StringVar(&e.tasksDir, "tasks-dir", "", "directory of tasks (default: the tasks bundled in the binary)")
			fs.StringVar(&e.shard, "shard", "", "run shard i of n (1-based): tasks sorted by name, dealt round robin")
			fs.IntVar(&o.Jobs, "j", eval.DefaultJobs, "tasks run in parallel")
			fs.DurationVar(&o.Timeout, "timeout", 0, fmt.Sprintf("limit for one task (run and checks); 0: %v for an agent task, %v for a flaky task",
				eval.DefaultTaskTimeout, eval.DefaultFlakyTaskTimeout))
			fs.StringVar(&o.Provider, "provider", "script", "script (each task's trajectory), openai or anthropic")
			fs.StringVar(&o.Model, "model", "", "model name for a real provider")
			fs.StringVar(&o.BaseURL, "base-url", "", "API base URL for a real provider (needs --model)")
			fs.Float64Var(&o.MaxCostUSD, "max-cost-usd", 0, "cost budget per task, for a model with a known price (0: none)")
			fs.BoolVar(&o.ReplayOpenAI, "replay-openai", false, "replay the scripts through the OpenAI adapter against a local fake server")
			fs.StringVar(&e.jsonPath, "json", "", "write the JSON report here")
			fs.StringVar(&o.Artifacts, "artifacts", "", "keep each task's bundle, trace and PR body under DIR/<task>/")
			fs.BoolVar(&e.checkTasks, "check-tasks", false, "check the tasks instead: hidden fail_to_pass checks must fail and pass_to_pass checks pass on the unfixed projects")
		},
	}, e
}

// evalMsg is an eval error without the package's own "eval: " (and
// "merge: ") prefixes, which the command's prefix already says.
func evalMsg(err error) string {
	msg := err.Error()
	for _, p := range []string{"eval: ", "merge: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

// runEval is `mini-agent eval`: the same pipeline as fix/explain, over the
// bundled (or given) tasks.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return runEvalMerge(args[1:], stdout, stderr)
	}
	c, e := evalCommand()
	fs := c.flagSet()
	if code, done := c.parse(fs, args, stdout, stderr); done {
		return code
	}
	o, shard, tasksDir, jsonPath, checkTasks := e.o, e.shard, e.tasksDir, e.jsonPath, e.checkTasks
	if fs.NArg() > 0 {
		return c.usageError(stderr, fmt.Sprintf("unexpected arguments %q", fs.Args()))
	}
	if o.MaxCostUSD != 0 {
		if o.Provider == provider.ProviderScript || o.ReplayOpenAI {
			return c.usageError(stderr, "--max-cost-usd needs a real, priced model: scripted runs have no price")
		}
		// The same naming and budget check as the runs' (the model is built later, per task).
		_, err := provider.Choice{Config: provider.Config{Provider: o.Provider, Model: o.Model}, MaxCostUSD: o.MaxCostUSD}.Use(nil)
		var be *provider.BudgetError
		switch {
		case errors.As(err, &be):
			return c.usageError(stderr, fmt.Sprintf("--max-cost-usd %g: model %q has no known price, so the budget could not be enforced; drop --max-cost-usd", be.Budget, be.Model))
		case err != nil:
			return c.usageError(stderr, fmt.Sprintf("--max-cost-usd %v is not a positive amount", o.MaxCostUSD))
		}
	}
	if shard != "" {
		s, err := eval.ParseShard(shard)
		if err != nil {
			return c.usageError(stderr, evalMsg(err))
		}
		o.Shard = s
	}
	if o.Timeout < 0 {
		return c.usageError(stderr, fmt.Sprintf("--timeout %v is negative", o.Timeout))
	}
	if _, err := eval.InSet(nil, o.Set); err != nil {
		return c.usageError(stderr, err.Error())
	}
	if o.Source != "" {
		if fi, err := os.Stat(o.Source); err != nil || !fi.IsDir() {
			return c.usageError(stderr, fmt.Sprintf("--source %s is not a directory", o.Source))
		}
	}
	if tasksDir != "" {
		if fi, err := os.Stat(tasksDir); err != nil || !fi.IsDir() {
			return c.usageError(stderr, fmt.Sprintf("--tasks-dir %s is not a directory", tasksDir))
		}
		o.Tasks = os.DirFS(tasksDir)
	}
	o.Progress = stderr
	if checkTasks {
		return runCheckTasks(ctx, o, stdout, stderr)
	}
	start := time.Now()
	rep, err := eval.Run(ctx, o)
	if rep == nil {
		return c.usageError(stderr, evalMsg(err))
	}
	rep.Markdown(stdout)
	fmt.Fprintf(stderr, "eval: %d tasks in %s\n", len(rep.Tasks), time.Since(start).Round(100*time.Millisecond))
	if jsonPath != "" {
		if werr := rep.WriteJSON(jsonPath); werr != nil {
			fmt.Fprintf(stderr, "mini-agent eval: %s\n", evalMsg(werr))
			return exitcode.Usage
		}
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return exitcode.Cancelled
	case !rep.OK():
		return exitcode.NotFixed
	}
	return exitcode.OK
}

func runCheckTasks(ctx context.Context, o eval.Options, stdout, stderr io.Writer) int {
	results, err := eval.CheckTasks(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent eval: %s\n", evalMsg(err))
		return exitcode.Usage
	}
	code := exitcode.OK
	for _, r := range results {
		switch {
		case r.Skipped != "":
			fmt.Fprintf(stdout, "SKIP %s: %s\n", r.Name, r.Skipped)
		case len(r.Problems) == 0:
			fmt.Fprintf(stdout, "ok   %s\n", r.Name)
		default:
			code = exitcode.NotFixed
			for _, p := range r.Problems {
				fmt.Fprintf(stdout, "BAD  %s: %s\n", r.Name, p)
			}
		}
	}
	return code
}

func runEvalMerge(args []string, stdout, stderr io.Writer) int {
	var out *string
	c := &command{
		name:  "eval merge",
		usage: "eval merge [--json OUT] REPORT.json...",
		about: "Joins the JSON reports of eval shards (mini-agent eval --shard i/n --json FILE) into one " +
			"table on stdout; a task that appears in two reports is an error.",
		groups:   []flagGroup{{"Output", []string{"json"}}},
		meta:     map[string]string{"json": "FILE"},
		examples: []string{"mini-agent eval merge report-1.json report-2.json", "mini-agent eval merge --json report.json report-*.json"},
		define: func(fs *flag.FlagSet) {
			out = fs.String("json", "", "write the merged JSON report here")
		},
	}
	fs := c.flagSet()
	if code, done := c.parse(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() == 0 {
		return c.usageError(stderr, "give the shard reports (JSON files)")
	}
	var reports []*eval.Report
	for _, p := range fs.Args() {
		r, err := eval.ReadReport(p)
		if err != nil {
			return c.usageError(stderr, evalMsg(err))
		}
		reports = append(reports, r)
	}
	merged, err := eval.Merge(reports...)
	if err != nil {
		return c.usageError(stderr, evalMsg(err))
	}
	merged.Markdown(stdout)
	if *out != "" {
		if err := merged.WriteJSON(*out); err != nil {
			fmt.Fprintf(stderr, "mini-agent eval merge: %s\n", evalMsg(err))
			return exitcode.Usage
		}
	}
	if !merged.OK() {
		return exitcode.NotFixed
	}
	return exitcode.OK
}
