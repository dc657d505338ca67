package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
)

// Defaults of a run.
const (
	DefaultJobs        = 2
	DefaultTaskTimeout = 5 * time.Minute
	// defaultTestTimeout bounds one test command run inside a task.
	defaultTestTimeout = 2 * time.Minute
	// replayAPIKey is the key sent to the fake Chat Completions server.
	replayAPIKey = "sk-eval-replay-not-a-secret"
	// replayModel is the model name the replay path reports (no price).
	replayModel = "fakellm-replay"
)

// ToolWrapper replaces a tool the model drives (a test seam: the broken-
// harness check injects faulty tools through it).
type ToolWrapper func(tc ToolContext, tool agent.Tool) agent.Tool

// ToolContext is what a ToolWrapper knows about the task it wraps for.
type ToolContext struct {
	Task *Task
	// Workdir is the task's workspace; Env the environment the pipeline got.
	Workdir string
	Env     []string
}

// Options configure an eval run.
type Options struct {
	// Tasks is the directory of tasks; nil means the bundled tasks.
	Tasks fs.FS
	// Set picks the tasks by kind: SetAgent (empty means it), SetFlaky
	// or SetAll. The filter and the shard apply within the set.
	Set string
	// Source is mini-agent's source tree, which flaky tasks' fixtures are
	// relative to; empty means FindSource from the working directory (not
	// found: flaky tasks are skipped with the reason).
	Source string
	// Filter is --tasks: a comma list of names or a regexp.
	Filter string
	Shard  Shard
	// Jobs is how many tasks run at once; 0 means DefaultJobs.
	Jobs int
	// Timeout bounds one task (run and checks); 0 means DefaultTaskTimeout,
	// or DefaultFlakyTaskTimeout for a flaky task.
	Timeout time.Duration
	// Provider, Model and BaseURL select a real model; empty or "script"
	// replays each task's scripted trajectory.
	Provider, Model, BaseURL string
	// ReplayOpenAI sends the scripted trajectories through the OpenAI
	// adapter against a local fake Chat Completions server.
	ReplayOpenAI bool
	// MaxCostUSD is each task's cost budget with a priced model (0: none).
	MaxCostUSD float64
	// Getenv reads API keys for a real model; nil means os.Getenv.
	Getenv func(string) string
	// Artifacts, when set, keeps each task's bundle, trace and PR body in
	// Artifacts/<task>/.
	Artifacts string
	// Progress receives one line per finished task; nil discards.
	Progress io.Writer
	// WrapTool is the test seam described at ToolWrapper.
	WrapTool ToolWrapper
}

// real reports whether a real model answers (the scripts are ignored).
func (o *Options) real() bool {
	return o.Provider != "" && o.Provider != provider.ProviderScript
}

// label names what answered the tasks, for the report.
func (o *Options) label() string {
	switch {
	case o.real() && o.Model != "":
		return o.Provider + "/" + o.Model
	case o.real():
		return o.Provider
	case o.ReplayOpenAI:
		return "script via the OpenAI adapter (fakellm)"
	}
	return "script"
}

// selectTasks fills the task and job defaults, then loads and selects the
// tasks the options name.
func (o *Options) selectTasks() ([]*Task, error) {
	if o.Tasks == nil {
		o.Tasks = Bundled()
	}
	if o.Jobs <= 0 {
		o.Jobs = DefaultJobs
	}
	all, err := LoadTasks(o.Tasks)
	if err != nil {
		return nil, err
	}
	inSet, err := InSet(all, o.Set)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	if len(inSet) == 0 { // an empty set must not pass as an empty success
		return nil, fmt.Errorf("eval: none of the %d tasks is in the %s set (--set all selects from every task)", len(all), setName(o.Set))
	}
	tasks, err := Select(inSet, o.Filter, o.Shard)
	if err != nil && o.Set != SetAll {
		return nil, fmt.Errorf("eval: %w (in the %s set; --set all selects from every task)", err, setName(o.Set))
	}
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	return tasks, nil
}

// taskTimeout bounds one task.
func (o *Options) taskTimeout(t *Task) time.Duration {
	switch {
	case o.Timeout > 0:
		return o.Timeout
	case t.Kind == KindFlaky:
		return DefaultFlakyTaskTimeout
	}
	return DefaultTaskTimeout
}

// Run loads, selects and runs the tasks and returns the report. An error
// means the eval could not start (bad tasks, bad options); failed tasks
// are in the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.real() && o.ReplayOpenAI {
		return nil, errors.New("eval: --replay-openai replays the scripts; it cannot be combined with a real --provider")
	}
	tasks, err := o.selectTasks()
	if err != nil {
		return nil, err
	}
	if o.real() {
		// Fail fast on a missing key or model instead of once per task.
		if _, err := o.newModel(nil); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
	}
	r := newRunner(o)
	rep := &Report{Model: o.label(), Tasks: make([]TaskResult, len(tasks))}
	if o.Shard.Of > 1 {
		rep.Shard = fmt.Sprintf("%d/%d", o.Shard.Index, o.Shard.Of)
	}
	sem := make(chan struct{}, o.Jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res := r.runTask(ctx, t)
			rep.Tasks[i] = res
			mu.Lock()
			progressLine(o.Progress, res)
			mu.Unlock()
		}()
	}
	wg.Wait()
	rep.Sum()
	return rep, ctx.Err()
}

func progressLine(w io.Writer, r TaskResult) {
	switch {
	case r.Skipped:
		fmt.Fprintf(w, "SKIP %-24s %s\n", r.Name, r.Reason)
	case r.Resolved && r.Flaky != nil:
		f := r.Flaky
		fmt.Fprintf(w, "PASS %-24s %s: %d/%d failed before, bar %d, %d clean after, forbidden fix rejected by %s, %.1fs\n",
			r.Name, f.Test, f.DetectFailures, f.DetectRuns, f.Bar, f.CleanRuns, strings.Join(f.RejectedBy, ", "), r.WallS)
	case r.Resolved:
		fmt.Fprintf(w, "PASS %-24s %s, %s, %d steps, %.1fs\n", r.Name, r.Status, r.StopReason, r.Steps, r.WallS)
	case r.Flaky != nil:
		fmt.Fprintf(w, "FAIL %-24s %s, %.1fs\n", r.Name, r.Flaky.Test, r.WallS)
		for _, f := range r.Failures {
			fmt.Fprintf(w, "       - %s\n", f)
		}
	default:
		fmt.Fprintf(w, "FAIL %-24s %s, %s, %d steps, %.1fs\n", r.Name, r.Status, r.StopReason, r.Steps, r.WallS)
		for _, f := range r.Failures {
			fmt.Fprintf(w, "       - %s\n", f)
		}
	}
}

type runner struct {
	o      Options
	mu     sync.Mutex
	probes map[string]*probe
	// srcErr is why mini-agent's source tree was not found (Source empty).
	srcErr error
}

// newRunner finds the source tree when the options do not name it.
func newRunner(o Options) *runner {
	r := &runner{o: o, probes: map[string]*probe{}}
	if r.o.Source == "" {
		r.o.Source, r.srcErr = FindSource(".")
	} else if abs, err := filepath.Abs(r.o.Source); err == nil {
		r.o.Source = abs
	}
	return r
}

func (r *runner) runTask(ctx context.Context, t *Task) (res TaskResult) {
	start := time.Now()
	res.Name = t.Name
	defer func() { res.WallS = math.Round(time.Since(start).Seconds()*100) / 100 }()
	if reason := r.skipReason(ctx, t); reason != "" {
		res.Skipped, res.Reason = true, reason
		return res
	}
	if t.Kind == KindFlaky {
		r.runFlaky(ctx, t, &res)
		return res
	}
	tr, cleanup, err := r.prepare(ctx, t)
	defer cleanup()
	if err != nil {
		res.Reason = "setup: " + err.Error()
		res.Failures = []string{res.Reason}
		return res
	}
	r.execute(ctx, tr)
	// The checks get their own time: a task that hit its deadline is
	// still judged (and its leftovers cleaned up).
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.o.taskTimeout(t))
	defer cancel()
	stop := context.AfterFunc(ctx, cancel) // but an interrupted eval stops checking too
	defer stop()
	r.check(cctx, tr)
	if out := tr.outcome; out != nil {
		b := out.Bundle
		res.Status, res.StopReason, res.Steps = b.Status, b.Run.StopReason, b.Run.Steps
		res.Tokens, res.CostUSD, res.CostKnown = b.Usage.Total(), b.CostUSD, b.CostKnown
		res.ToolErrors, res.PolicyDenials, res.PatchRefusals = b.Run.ToolErrors, b.Run.Denials, b.Run.Refusals
	}
	res.Failures = tr.fails
	res.Resolved = len(tr.fails) == 0
	if !res.Resolved {
		res.Reason = tr.fails[0]
	}
	return res
}
