package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/internal/demo"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/report"
)

// runDemo copies the bundled example to a temp dir and runs the whole fix
// pipeline on it with the script provider, then prints the rendered PR body.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var keep *bool
	c := &command{
		name:  "demo",
		usage: "demo [--keep]",
		about: "Runs the whole fix pipeline on a small Go module with a real bug, copied to a temporary " +
			"directory: the harness runs go test to see what fails, the agent searches, reads, patches and " +
			"reruns the narrowed test, then the harness validates the change and renders the pull-request body. " +
			"The model is scripted (a recorded trajectory is replayed, no model service is called and no key is " +
			"needed); everything else is real.",
		groups:   []flagGroup{{"Options", []string{"keep"}}},
		examples: []string{"mini-agent demo", "mini-agent demo --keep   # then look at the fixed module"},
		define: func(fs *flag.FlagSet) {
			keep = fs.Bool("keep", false, "keep the example's temp dir and print its path")
		},
	}
	fs := c.flagSet()
	if code, done := c.parse(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		return c.usageError(stderr, fmt.Sprintf("takes no arguments, got %q", fs.Args()))
	}
	dir, err := os.MkdirTemp("", "mini-agent-demo-")
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent demo: %v\n", err)
		return exitcode.Usage
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	if err := demo.Materialize(ctx, dir); err != nil {
		fmt.Fprintf(stderr, "mini-agent demo: %v\n", err)
		return exitcode.Usage
	}
	fmt.Fprintf(stdout, "mini-agent demo: fixing a bundled Go example (copied to %s).\n", dir)
	fmt.Fprintln(stdout, "The model is SCRIPTED: a recorded trajectory is replayed, no model service is called.")
	fmt.Fprintln(stdout, "Everything else is real: the tools, the sandbox, the policy, go test, and the harness's validation.")
	fmt.Fprintln(stdout)
	model, err := provider.Select(provider.Choice{Config: provider.Config{Provider: provider.ProviderScript, Script: demo.Trajectory}})
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent demo: %v\n", err)
		return exitcode.For(ctx, err)
	}
	job := pipeline.Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: demo.TestCommand, Version: versionString()}
	out, err := pipeline.Run(ctx, job, pipeline.Deps{Model: model, Progress: stdout})
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent demo: %v\n", err)
		return exitcode.For(ctx, err)
	}
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, report.Text(out.Bundle))
	fmt.Fprintln(stdout, "\n---- The pull-request body mini-agent would open ----")
	fmt.Fprintln(stdout, out.Summary)
	return exitcode.ForStatus(out.Bundle.Status)
}
