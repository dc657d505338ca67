package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/tools"
)

// runTool runs one tool call under the default workspace-write policy and
// prints exactly what the model would read. Exit 0 for a normal result, 1
// for an error result, 2 for a usage error.
func runTool(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: mini-agent tool NAME --workdir DIR [--test-command CMD] 'JSON-ARGS'")
		return pipeline.ExitUsage
	}
	name := args[0]
	fs := flag.NewFlagSet("tool", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workdir := fs.String("workdir", ".", "the workspace")
	testCmd := fs.String("test-command", "", "the test command (for run_test)")
	timeout := fs.Duration("test-timeout", 10*time.Minute, "limit for run_test")
	if err := fs.Parse(args[1:]); err != nil {
		return pipeline.ExitUsage
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(stderr, "mini-agent tool: give the JSON arguments as one argument")
		return pipeline.ExitUsage
	}
	raw := "{}"
	if fs.NArg() == 1 {
		raw = fs.Arg(0)
	}
	ws, err := tools.OpenWorkspace(*workdir, tools.WorkspaceOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent tool: %v\n", err)
		return pipeline.ExitUsage
	}
	defer ws.Close()
	reg, err := agent.NewRegistry(tools.NewReadFile(ws), tools.NewSearch(ws), tools.NewApplyPatch(ws),
		tools.NewRunTest(ws, tools.RunTestConfig{Command: *testCmd, Timeout: *timeout}))
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent tool: %v\n", err)
		return pipeline.ExitUsage
	}
	if _, ok := reg.Lookup(name); !ok {
		fmt.Fprintf(stderr, "mini-agent tool: unknown tool %q (have %v)\n", name, reg.Names())
		return pipeline.ExitUsage
	}
	if name == "run_test" && *testCmd == "" {
		fmt.Fprintln(stderr, "mini-agent tool: run_test needs --test-command")
		return pipeline.ExitUsage
	}
	res, err := reg.Invoke(ctx, agent.WorkspaceWrite{Protected: ws.Protected()},
		agent.ToolCall{ID: "cli", Name: name, Arguments: json.RawMessage(raw)})
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent tool: %v\n", err)
		if ctx.Err() != nil {
			return pipeline.ExitCancelled
		}
		return pipeline.ExitNotFixed
	}
	fmt.Fprintln(stdout, res.Text)
	if res.IsError {
		return 1
	}
	return 0
}
