package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/protect"
	"github.com/org/mini-agent/internal/testcmd"
	"github.com/org/mini-agent/tools"
)

// toolFlags are the flags of `mini-agent tool`.
type toolFlags struct {
	workdir, testCmd string
	timeout          time.Duration
}

func toolCommand() (*command, *toolFlags) {
	t := &toolFlags{}
	return &command{
		name:  "tool",
		usage: "tool NAME --workdir DIR [--test-command CMD] 'JSON-ARGS'",
		about: "Runs one tool call (read_file, search, apply_patch or run_test) the way the agent loop does: " +
			"the JSON arguments are checked against the tool's schema, the call passes the default write policy " +
			"(paths matching " + protect.Default().String() + " are never written), and what the model would read is printed on " +
			"stdout. Use it to see what the model sees, or to try a patch. The flags go between the tool name " +
			"and the JSON arguments; without JSON the call gets {}.",
		groups: []flagGroup{
			{"Workspace", []string{"workdir"}},
			{"run_test", []string{"test-command", "test-timeout"}},
		},
		meta: map[string]string{"workdir": "DIR", "test-command": "CMD"},
		examples: []string{
			`mini-agent tool search --workdir . '{"query":"func Total"}'`,
			`mini-agent tool run_test --workdir . --test-command "go test ./..." '{"tests":["TestTotal"]}'`,
		},
		footer: "Exit codes: 0 the tool answered, 1 the tool answered with an error result, 2 usage error.",
		define: func(fs *flag.FlagSet) {
			fs.StringVar(&t.workdir, "workdir", ".", "the workspace")
			fs.StringVar(&t.testCmd, "test-command", "", "the test command (needed for run_test)")
			fs.DurationVar(&t.timeout, "test-timeout", 10*time.Minute, "limit for run_test")
		},
	}, t
}

// runTool runs one tool call under the default workspace-write policy and
// prints exactly what the model would read. Exit 0 for a normal result, 1
// for an error result, 2 for a usage error.
func runTool(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, t := toolCommand()
	fs := c.flagSet()
	if len(args) == 0 {
		return c.usageError(stderr, "give a tool name: mini-agent tool NAME --workdir DIR 'JSON-ARGS'")
	}
	name := args[0]
	if strings.HasPrefix(name, "-") {
		if code, done := c.parse(fs, args, stdout, stderr); done {
			return code
		}
		return c.usageError(stderr, fmt.Sprintf("the tool name comes first, before the flags: mini-agent tool NAME %s ...", name))
	}
	if code, done := c.parse(fs, args[1:], stdout, stderr); done {
		return code
	}
	if fs.NArg() > 1 {
		for _, a := range fs.Args()[1:] {
			if strings.HasPrefix(a, "-") {
				return c.usageError(stderr, fmt.Sprintf("the flags go before the JSON arguments (%s came after them): mini-agent tool %s --workdir DIR 'JSON-ARGS'", a, name))
			}
		}
		return c.usageError(stderr, "give the JSON arguments as one argument (quote them)")
	}
	raw := "{}"
	if fs.NArg() == 1 {
		raw = fs.Arg(0)
	}
	workdir, testCmd, timeout := &t.workdir, &t.testCmd, &t.timeout
	ws, err := tools.OpenWorkspace(*workdir, tools.WorkspaceOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent tool: %v\n", err)
		return exitcode.Usage
	}
	defer ws.Close()
	var cmd *testcmd.Command // nil: run_test answers that it is not configured
	if *testCmd != "" {
		if cmd, err = testcmd.Parse(*testCmd); err != nil {
			return c.usageError(stderr, err.Error())
		}
	}
	reg, err := agent.NewRegistry(tools.NewReadFile(ws), tools.NewSearch(ws), tools.NewApplyPatch(ws),
		// One call, before which no test code ran: the harness may fetch
		// the module's dependencies for the run without network.
		tools.NewRunTest(ws, tools.RunTestConfig{Command: cmd, Timeout: *timeout, PrefetchModules: true}))
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent tool: %v\n", err)
		return exitcode.Usage
	}
	if _, ok := reg.Lookup(name); !ok {
		return c.usageError(stderr, fmt.Sprintf("unknown tool %q (have %v)", name, reg.Names()))
	}
	if name == "run_test" && *testCmd == "" {
		return c.usageError(stderr, "run_test needs --test-command")
	}
	res, err := reg.Invoke(ctx, agent.WorkspaceWrite{Protected: ws.Protected()},
		agent.ToolCall{ID: "cli", Name: name, Arguments: json.RawMessage(raw)})
	if err != nil {
		fmt.Fprintf(stderr, "mini-agent tool: %v\n", err)
		return exitcode.For(ctx, err)
	}
	fmt.Fprintln(stdout, res.Text)
	if res.IsError {
		return exitcode.NotFixed
	}
	return exitcode.OK
}
