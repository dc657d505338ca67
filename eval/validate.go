package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
)

// TaskCheck is the verdict on one task's own soundness.
type TaskCheck struct {
	Name string
	// Skipped is the reason the task could not be checked here.
	Skipped string
	// Problems: checks that cannot fail, or that fail for the wrong reason.
	Problems []string
}

// CheckTasks proves the hidden checks can fail: on each selected task's
// unfixed project (with the hidden files copied in) every fail_to_pass
// command must fail and every pass_to_pass command must pass. A
// fail_to_pass check that already passes would count any run as a fix.
func CheckTasks(ctx context.Context, o Options) ([]TaskCheck, error) {
	tasks, err := o.selectTasks()
	if err != nil {
		return nil, err
	}
	r := newRunner(o)
	out := make([]TaskCheck, len(tasks))
	sem := make(chan struct{}, o.Jobs)
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = r.checkTask(ctx, t)
		}()
	}
	wg.Wait()
	return out, ctx.Err()
}

func (r *runner) checkTask(ctx context.Context, t *Task) TaskCheck {
	tc := TaskCheck{Name: t.Name}
	if t.Kind == KindFlaky {
		tc.Skipped = "flaky task: no hidden checks; each run checks it (the detection must find the test flaky, the forbidden fix be rejected)"
		return tc
	}
	if reason := r.skipReason(ctx, t); reason != "" {
		tc.Skipped = reason
		return tc
	}
	tmp, err := os.MkdirTemp("", "mini-agent-evalcheck-")
	if err != nil {
		tc.Problems = append(tc.Problems, err.Error())
		return tc
	}
	defer os.RemoveAll(tmp)
	tr := &taskRun{task: t, tmp: tmp, ws: filepath.Join(tmp, "ws"), scratch: filepath.Join(tmp, "scratch")}
	tr.env = append(os.Environ(), "EVAL_SCRATCH="+tr.scratch)
	for _, k := range sortedKeys(t.Env) {
		tr.env = append(tr.env, k+"="+t.Env[k])
	}
	if err := os.MkdirAll(tr.scratch, 0o755); err != nil {
		tc.Problems = append(tc.Problems, err.Error())
		return tc
	}
	if err := materialize(ctx, t, tr.ws); err != nil {
		tc.Problems = append(tc.Problems, err.Error())
		return tc
	}
	if dir := t.hiddenDir(); dir != "" {
		if err := copyTree(t.fsys, dir, tr.ws); err != nil {
			tc.Problems = append(tc.Problems, err.Error())
			return tc
		}
	}
	for _, c := range t.Hidden.FailToPass {
		if err := runCheck(ctx, tr, c); err == nil {
			tc.Problems = append(tc.Problems, fmt.Sprintf("fail_to_pass `%s` already passes on the unfixed project", c))
		}
	}
	for _, c := range t.Hidden.PassToPass {
		if err := runCheck(ctx, tr, c); err != nil {
			tc.Problems = append(tc.Problems, fmt.Sprintf("pass_to_pass `%s` fails on the unfixed project: %v", c, err))
		}
	}
	if t.Mode == agent.ModeFix && len(t.Hidden.FailToPass) == 0 && t.Expect.Status == bundle.StatusFixed {
		tc.Problems = append(tc.Problems, "a fix task expected to be fixed has no fail_to_pass check")
	}
	return tc
}
