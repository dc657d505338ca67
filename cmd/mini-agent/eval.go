package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/org/mini-agent/eval"
	"github.com/org/mini-agent/internal/pipeline"
)

const evalUsage = `Usage:
  mini-agent eval [flags]                 run the eval tasks, print a markdown report
  mini-agent eval merge [--json OUT] REPORT.json...
                                          merge shard reports (JSON) into one table

Exit codes: 0 every task that ran was resolved, 1 some task was not,
2 usage or configuration error, 130 interrupted.

Flags:
`

// runEval is `mini-agent eval`: the same pipeline as fix/explain, over the
// bundled (or given) tasks.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return runEvalMerge(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, evalUsage)
		fs.PrintDefaults()
	}
	var o eval.Options
	var tasksDir, shard, jsonPath string
	var checkTasks bool
	fs.StringVar(&o.Filter, "tasks", "", "comma-separated task names, or a regexp over names (default: all)")
	fs.StringVar(&tasksDir, "tasks-dir", "", "directory of tasks (default: the tasks bundled in the binary)")
	fs.StringVar(&shard, "shard", "", "run shard i of n (i/n, 1-based): tasks sorted by name, dealt round robin")
	fs.IntVar(&o.Jobs, "j", eval.DefaultJobs, "tasks run in parallel")
	fs.DurationVar(&o.Timeout, "timeout", eval.DefaultTaskTimeout, "limit for one task (run and checks)")
	fs.StringVar(&o.Provider, "provider", "script", "script (each task's trajectory), openai or anthropic")
	fs.StringVar(&o.Model, "model", "", "model name for a real provider")
	fs.StringVar(&o.BaseURL, "base-url", "", "API base URL for a real provider")
	fs.Float64Var(&o.MaxCostUSD, "max-cost-usd", 0, "cost budget per task with a priced model (0: none)")
	fs.BoolVar(&o.ReplayOpenAI, "replay-openai", false, "replay the scripts through the OpenAI adapter against a local fake server")
	fs.StringVar(&jsonPath, "json", "", "write the JSON report here")
	fs.StringVar(&o.Artifacts, "artifacts", "", "keep each task's bundle, trace and PR body under DIR/<task>/")
	fs.BoolVar(&checkTasks, "check-tasks", false, "check the tasks instead: hidden fail_to_pass checks must fail and pass_to_pass checks pass on the unfixed projects")
	if err := fs.Parse(args); err != nil {
		return pipeline.ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mini-agent eval: unexpected arguments %q\n", fs.Args())
		return pipeline.ExitUsage
	}
	if shard != "" {
		s, err := eval.ParseShard(shard)
		if err != nil {
			fmt.Fprintf(stderr, "mini-agent eval: %v\n", err)
			return pipeline.ExitUsage
		}
		o.Shard = s
	}
	if tasksDir != "" {
		if fi, err := os.Stat(tasksDir); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "mini-agent eval: --tasks-dir %s is not a directory\n", tasksDir)
			return pipeline.ExitUsage
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
		fmt.Fprintf(stderr, "mini-agent eval: %v\n", err)
		return pipeline.ExitUsage
	}
	rep.Markdown(stdout)
	fmt.Fprintf(stderr, "eval: %d tasks in %s\n", len(rep.Tasks), time.Since(start).Round(100*time.Millisecond))
	if jsonPath != "" {
		if werr := rep.WriteJSON(jsonPath); werr != nil {
			fmt.Fprintf(stderr, "mini-agent eval: %v\n", werr)
			return pipeline.ExitUsage
		}
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return pipeline.ExitCancelled
	case !rep.OK():
		return pipeline.ExitNotFixed
	}
	return pipeline.ExitOK
}

func runCheckTasks(ctx context.Context, o eval.Options, stdout, stderr io.Writer) int {
	results, err := eval.CheckTasks(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent eval: %v\n", err)
		return pipeline.ExitUsage
	}
	code := pipeline.ExitOK
	for _, r := range results {
		switch {
		case r.Skipped != "":
			fmt.Fprintf(stdout, "SKIP %s: %s\n", r.Name, r.Skipped)
		case len(r.Problems) == 0:
			fmt.Fprintf(stdout, "ok   %s\n", r.Name)
		default:
			code = pipeline.ExitNotFixed
			for _, p := range r.Problems {
				fmt.Fprintf(stdout, "BAD  %s: %s\n", r.Name, p)
			}
		}
	}
	return code
}

func runEvalMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("json", "", "write the merged JSON report here")
	if err := fs.Parse(args); err != nil {
		return pipeline.ExitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "mini-agent eval merge: give the shard reports (JSON files)")
		return pipeline.ExitUsage
	}
	var reports []*eval.Report
	for _, p := range fs.Args() {
		r, err := eval.ReadReport(p)
		if err != nil {
			fmt.Fprintf(stderr, "mini-agent eval merge: %v\n", err)
			return pipeline.ExitUsage
		}
		reports = append(reports, r)
	}
	merged, err := eval.Merge(reports...)
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent eval merge: %v\n", err)
		return pipeline.ExitUsage
	}
	merged.Markdown(stdout)
	if *out != "" {
		if err := merged.WriteJSON(*out); err != nil {
			fmt.Fprintf(stderr, "mini-agent eval merge: %v\n", err)
			return pipeline.ExitUsage
		}
	}
	if !merged.OK() {
		return pipeline.ExitNotFixed
	}
	return pipeline.ExitOK
}
