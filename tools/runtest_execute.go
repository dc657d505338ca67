package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/testcmd"
)

// run_test as the model calls it: its spec, its arguments and Execute.

// Spec describes the tool to the model.
func (r *RunTest) Spec() agent.ToolSpec {
	cmd, help := "the configured test command", "This test command cannot be narrowed: call run_test with no arguments."
	if c := r.cfg.Command; c != nil {
		cmd, help = "`"+truncate(c.Line(), 200)+"`", c.NarrowingHelp()
	}
	desc := "Run the project's tests with " + cmd + " and report status, exit code, duration, " +
		"failing tests and the head and tail of the output; the full output is saved as @runs/N.log " +
		"for read_file. With no arguments the whole suite runs. " + help
	if r.cfg.Command != nil && r.cfg.Command.Narrowable() {
		desc += " Give names and workspace-relative paths only: no flags, quotes or shell syntax."
	}
	schema := fmt.Sprintf(`{"type":"object","properties":{`+
		`"tests":{"type":"array","items":{"type":"string"},"maxItems":%d,"description":"test names or name patterns to run instead of the whole suite"},`+
		`"packages":{"type":"array","items":{"type":"string"},"maxItems":%d,"description":"packages, test files or directories (workspace-relative) to run instead of the whole suite"}},`+
		`"additionalProperties":false}`, testcmd.MaxNarrowItems, testcmd.MaxNarrowItems)
	return agent.ToolSpec{Name: "run_test", Description: desc, InputSchema: json.RawMessage(schema)}
}

// Mutates is false: run_test runs code but writes nothing through the
// sandbox (what tests write is the test suite's business).
func (r *RunTest) Mutates() bool { return false }

// Exclusive reports that calls must not run concurrently with any other
// tool call: tests read the files other calls would be changing, and two
// suites at once would fight over ports, caches and CPU.
func (r *RunTest) Exclusive() bool { return true }

type runTestArgs struct {
	Tests    stringList `json:"tests"`
	Packages stringList `json:"packages"`
}

// stringList accepts a JSON array of strings, or a single string (a sloppy
// but unambiguous call).
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = nil
		if one != "" {
			*l = []string{one}
		}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("must be an array of strings")
	}
	*l = many
	return nil
}

// Execute runs the command once. A failing or timed-out run is an error
// Result (FAILED, TIMEOUT); only cancellation and I/O failures are errors.
func (r *RunTest) Execute(ctx context.Context, raw json.RawMessage) (agent.Result, error) {
	var args runTestArgs
	if s := strings.TrimSpace(string(raw)); s != "" && s != "null" {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&args); err != nil {
			return agent.ErrorResult(agent.CodeInvalidArgument,
				fmt.Sprintf("run_test arguments: %v; expected {\"tests\": [names...], \"packages\": [paths...]}, both optional", err), false), nil
		}
	}
	// The model's runs keep the runner's defaults, caches included.
	out, err := r.runSelected(ctx, testcmd.Selection{Tests: args.Tests, Packages: args.Packages}, testcmd.Plain, false)
	switch {
	case errors.Is(err, testcmd.ErrNarrowing):
		return agent.ErrorResult(agent.CodeInvalidArgument, err.Error(), false), nil
	case errors.Is(err, proc.ErrNotStarted), errors.Is(err, errNotConfigured):
		return agent.ErrorResult(agent.CodeFailed, err.Error()+
			"; this is a configuration problem that no code change fixes", false), nil
	case err != nil:
		return agent.Result{}, err
	}
	text := out.Text()
	switch {
	case out.TimedOut:
		return agent.Result{Text: text, IsError: true, Code: agent.CodeTimeout}, nil
	case out.ExitCode != 0:
		return agent.Result{Text: text, IsError: true, Code: agent.CodeFailed}, nil
	}
	return agent.Result{Text: text}, nil
}
