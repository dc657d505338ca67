package eval

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/internal/fakellm"
	"github.com/org/mini-agent/internal/pipeline"
)

// An agent task's run: its workspace, the model that answers it (recorded), the
// pipeline, and the cancellation its task may ask for.

// taskRun is one task's state while it runs and is checked.
type taskRun struct {
	task                     *Task
	tmp, ws, scratch, outDir string
	env                      []string
	events                   *agent.Recorder
	model                    *recordingModel
	server                   *fakellm.Server
	outcome                  *pipeline.Outcome
	runErr                   error
	scripted                 bool
	fails                    []string
}

func (tr *taskRun) fail(format string, args ...any) {
	tr.fails = append(tr.fails, fmt.Sprintf(format, args...))
}

// prepare materializes the workspace and builds the model.
func (r *runner) prepare(ctx context.Context, t *Task) (*taskRun, func(), error) {
	cleanup := func() {}
	tmp, err := os.MkdirTemp("", "mini-agent-eval-")
	if err != nil {
		return nil, cleanup, err
	}
	tr := &taskRun{task: t, tmp: tmp, ws: filepath.Join(tmp, "ws"), scratch: filepath.Join(tmp, "scratch"),
		outDir: filepath.Join(tmp, "out"), events: &agent.Recorder{}, scripted: !r.o.real()}
	cleanup = func() {
		if tr.server != nil {
			tr.server.Close()
		}
		os.RemoveAll(tmp)
	}
	if r.o.Artifacts != "" {
		tr.outDir = filepath.Join(r.o.Artifacts, t.Name)
	}
	for _, d := range []string{tr.scratch, tr.outDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, cleanup, err
		}
	}
	if err := materialize(ctx, t, tr.ws); err != nil {
		return nil, cleanup, err
	}
	tr.env = append(os.Environ(), "EVAL_SCRATCH="+tr.scratch)
	for _, k := range sortedKeys(t.Env) {
		tr.env = append(tr.env, k+"="+t.Env[k])
	}
	inner, err := r.o.newModel(tr)
	if err != nil {
		return nil, cleanup, err
	}
	tr.model = &recordingModel{inner: inner}
	return tr, cleanup, nil
}

// newModel builds what answers the task: the script, the script behind a
// fake Chat Completions server and the OpenAI adapter, or a real model.
// tr is nil for the up-front configuration check.
func (o *Options) newModel(tr *taskRun) (agent.Model, error) {
	if o.real() {
		return provider.New(provider.Config{Provider: o.Provider, Model: o.Model, BaseURL: o.BaseURL, Getenv: o.Getenv})
	}
	script, err := tr.task.ScriptBytes()
	if err != nil {
		return nil, err
	}
	m, srv, err := o.scriptModel(script, tr.task.Env["OPENAI_API_KEY"])
	tr.server = srv
	return m, err
}

// scriptModel replays a script: through the script provider, or served
// by a fake Chat Completions server (returned: the caller closes it) to
// the OpenAI adapter, which sends key.
func (o *Options) scriptModel(script []byte, key string) (agent.Model, *fakellm.Server, error) {
	if !o.ReplayOpenAI {
		m, err := provider.New(provider.Config{Provider: provider.ProviderScript, Script: script})
		return m, nil, err
	}
	srv, err := fakellm.New(script)
	if err != nil {
		return nil, nil, err
	}
	if key == "" {
		key = replayAPIKey
	}
	m, err := provider.New(provider.Config{Provider: provider.ProviderOpenAI, Model: replayModel,
		BaseURL: srv.BaseURL(), APIKey: key, MaxRetries: -1})
	return m, srv, err
}

// modelName is what the pipeline reports and prices.
func (o *Options) modelName() (prov, model string) {
	switch {
	case o.real():
		model = o.Model
		if model == "" && o.Provider == provider.ProviderOpenAI {
			model = provider.DefaultOpenAIModel
		} else if model == "" && o.Provider == provider.ProviderAnthropic {
			model = provider.DefaultAnthropicModel
		}
		return o.Provider, model
	}
	return o.scriptedName()
}

// scriptedName is what a scripted run reports.
func (o *Options) scriptedName() (prov, model string) {
	if o.ReplayOpenAI {
		return provider.ProviderOpenAI, replayModel
	}
	return provider.ProviderScript, ""
}

// execute runs the pipeline, exactly as `mini-agent fix/explain` does.
func (r *runner) execute(ctx context.Context, tr *taskRun) {
	t := tr.task
	rctx, cancel := context.WithTimeout(ctx, r.o.taskTimeout(t))
	defer cancel()
	var sinks agent.FanOut = agent.FanOut{tr.events}
	if t.Cancel != nil {
		pctx, pcancel := context.WithCancel(rctx)
		defer pcancel()
		sinks = append(sinks, &cancelSink{spec: t.Cancel, scratch: tr.scratch, ctx: pctx, cancel: pcancel})
		rctx = pctx
	}
	var failureLog string
	if t.FailureLog != "" {
		data, err := fs.ReadFile(t.fsys, t.FailureLog)
		if err != nil {
			tr.runErr = err
			return
		}
		failureLog = filepath.Join(tr.tmp, "failure.log")
		if err := os.WriteFile(failureLog, data, 0o644); err != nil {
			tr.runErr = err
			return
		}
	}
	agentTimeout := time.Duration(t.Limits.Timeout)
	if agentTimeout == 0 {
		agentTimeout = r.o.taskTimeout(t)
	}
	testTimeout := time.Duration(t.Limits.TestTimeout)
	if testTimeout == 0 {
		testTimeout = defaultTestTimeout
	}
	prov, model := r.o.modelName()
	sel, err := provider.Choice{Config: provider.Config{Provider: prov, Model: model}, MaxCostUSD: r.o.MaxCostUSD}.Use(tr.model)
	if err != nil {
		tr.runErr = err
		return
	}
	job := pipeline.Job{
		Mode: t.Mode, Workdir: tr.ws, TestCommand: t.TestCommand, FailureLog: failureLog,
		Instructions: t.Instructions,
		Limits: agent.Limits{MaxSteps: t.Limits.MaxSteps, MaxTokens: t.Limits.MaxTokens, Timeout: agentTimeout,
			MaxCostUSD: r.o.MaxCostUSD},
		TestTimeout: testTimeout, Protected: t.Policy.Protected, SecretNames: t.SecretEnv,
		TracePath: filepath.Join(tr.outDir, "trace.jsonl"), BundlePath: filepath.Join(tr.outDir, "bundle.json"),
		SummaryPath: filepath.Join(tr.outDir, "summary.md"),
		TestEnv:     []string{"EVAL_SCRATCH"}, // the task's tests report pids here (the test environment is an allow-list)
	}
	deps := pipeline.Deps{Model: sel, Events: sinks, Environ: tr.env}
	if w := r.o.WrapTool; w != nil {
		tc := ToolContext{Task: t, Workdir: tr.ws, Env: tr.env}
		deps.WrapTool = func(tool agent.Tool) agent.Tool { return w(tc, tool) }
	}
	tr.outcome, tr.runErr = pipeline.Run(rctx, job, deps)
	if tr.outcome == nil && tr.runErr == nil {
		tr.runErr = errors.New("the pipeline returned no outcome")
	}
}

// recordingModel keeps every request, so the checks see exactly what the
// model was sent (tool results included).
type recordingModel struct {
	inner agent.Model
	mu    sync.Mutex
	reqs  []agent.Request
}

// Sample implements agent.Model.
func (m *recordingModel) Sample(ctx context.Context, req agent.Request) (agent.Output, error) {
	cp := req
	// The loop may elide old entries in place later; keep this turn's view.
	cp.Messages = append([]agent.Message(nil), req.Messages...)
	m.mu.Lock()
	m.reqs = append(m.reqs, cp)
	m.mu.Unlock()
	return m.inner.Sample(ctx, req)
}

func (m *recordingModel) requests() []agent.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agent.Request(nil), m.reqs...)
}

// cancelSink cancels the run when the task's cancel event is seen.
type cancelSink struct {
	spec    *Cancel
	scratch string
	ctx     context.Context
	cancel  context.CancelFunc
	once    sync.Once
}

// defaultCancelWait bounds the wait for Cancel.WhenFile.
const defaultCancelWait = time.Minute

// Emit implements agent.EventSink.
func (s *cancelSink) Emit(e agent.Event) {
	if e.Type != s.spec.AfterEvent {
		return
	}
	if s.spec.Tool != "" && fmt.Sprint(e.Data["tool"]) != s.spec.Tool {
		return
	}
	s.once.Do(func() { go s.fire() })
}

func (s *cancelSink) fire() {
	if s.spec.WhenFile != "" {
		wait := time.Duration(s.spec.Wait)
		if wait == 0 {
			wait = defaultCancelWait
		}
		deadline := time.Now().Add(wait)
		p := filepath.Join(s.scratch, filepath.FromSlash(s.spec.WhenFile))
		for time.Now().Before(deadline) {
			if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
				break
			}
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	select {
	case <-s.ctx.Done():
	case <-time.After(time.Duration(s.spec.Delay)):
		s.cancel()
	}
}
