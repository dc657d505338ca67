package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/org/mini-agent/agent"
)

// The eval must catch a broken harness. Each case swaps one tool for a
// plausible but wrong implementation and runs the scenario written to
// catch it: the scenario must then fail, for the right reason.
func TestBrokenHarnessIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	cases := []struct {
		name string
		task string
		wrap ToolWrapper
		// want is a failure the eval must report.
		want string
	}{
		{
			name: "run_test kills only its direct child, not the process group",
			task: "07-cancel-run-test",
			wrap: func(tc ToolContext, tool agent.Tool) agent.Tool {
				if tool.Spec().Name != "run_test" {
					return tool
				}
				return &naiveRunTest{inner: tool, dir: tc.Workdir, command: tc.Task.TestCommand, env: tc.Env}
			},
			want: "survived the run",
		},
		{
			name: "apply_patch writes each file before the whole patch is validated",
			task: "03-patch-conflict",
			wrap: func(tc ToolContext, tool agent.Tool) agent.Tool {
				if tool.Spec().Name != "apply_patch" {
					return tool
				}
				return &eagerApplyPatch{inner: tool, dir: tc.Workdir}
			},
			want: `read_file result (args ~ "inventory/stock.go") #2 lacks "if qty >= s.Available() {"`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute) // a hang guard, not a timing assertion
			defer cancel()
			rep, err := Run(ctx, Options{Filter: c.task, Jobs: 1, WrapTool: c.wrap})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Tasks) != 1 {
				t.Fatalf("tasks %+v", rep.Tasks)
			}
			r := rep.Tasks[0]
			t.Logf("%s under the broken harness: resolved=%v\n  %s", c.task, r.Resolved, strings.Join(r.Failures, "\n  "))
			if r.Resolved || rep.OK() {
				t.Fatalf("%s resolved under a broken harness", c.task)
			}
			found := false
			for _, f := range r.Failures {
				found = found || strings.Contains(f, c.want)
			}
			if !found {
				t.Errorf("failures lack %q", c.want)
			}
		})
	}
}

// naiveRunTest runs the test command the way a careless harness would:
// exec.CommandContext kills the shell on cancellation, but not the
// processes it started.
type naiveRunTest struct {
	inner   agent.Tool
	dir     string
	command string
	env     []string
}

func (n *naiveRunTest) Spec() agent.ToolSpec { return n.inner.Spec() }
func (n *naiveRunTest) Mutates() bool        { return false }
func (n *naiveRunTest) Exclusive() bool      { return true }

func (n *naiveRunTest) Execute(ctx context.Context, _ json.RawMessage) (agent.Result, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", n.command)
	cmd.Dir, cmd.Env = n.dir, n.env
	cmd.WaitDelay = 500 * time.Millisecond // the orphans hold the pipes
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return agent.Result{}, ctx.Err()
	}
	if len(out) > 32<<10 {
		out = out[len(out)-32<<10:]
	}
	if err != nil {
		return agent.Result{Text: fmt.Sprintf("status: FAILED\n%s", out), IsError: true, Code: agent.CodeFailed}, nil
	}
	return agent.Result{Text: fmt.Sprintf("status: PASSED\n%s", out)}, nil
}

// eagerApplyPatch applies a unified diff file by file, writing each file
// as soon as its hunks apply: a later file's conflict leaves the earlier
// ones changed. It keeps the real tool's TouchedPaths, so the policy
// still sees every path.
type eagerApplyPatch struct {
	inner agent.Tool
	dir   string
}

func (e *eagerApplyPatch) Spec() agent.ToolSpec { return e.inner.Spec() }
func (e *eagerApplyPatch) Mutates() bool        { return true }

func (e *eagerApplyPatch) TouchedPaths(args json.RawMessage) ([]string, error) {
	pt, ok := e.inner.(agent.PathToucher)
	if !ok {
		return nil, errors.New("inner tool names no paths")
	}
	return pt.TouchedPaths(args)
}

func (e *eagerApplyPatch) Execute(_ context.Context, args json.RawMessage) (agent.Result, error) {
	var in struct {
		Patch string `json:"patch"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return agent.ErrorResult(agent.CodeInvalidArgument, err.Error(), false), nil
	}
	files, _, err := gitdiff.Parse(strings.NewReader(in.Patch))
	if err != nil {
		return agent.ErrorResult(agent.CodePatchRejected, err.Error(), true), nil
	}
	// Plain unified diffs keep their a/ and b/ prefixes in gitdiff.
	name := func(s string) string {
		if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
			s = s[2:]
		}
		return filepath.Join(e.dir, filepath.FromSlash(s))
	}
	for _, f := range files {
		p := name(f.NewName)
		src, _ := os.ReadFile(name(f.OldName))
		var out bytes.Buffer
		if err := gitdiff.Apply(&out, bytes.NewReader(src), f); err != nil {
			return agent.ErrorResult(agent.CodePatchRejected, f.NewName+": "+err.Error(), true), nil
		}
		if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
			return agent.Result{}, err
		}
	}
	return agent.Result{Text: "applied"}, nil
}
