package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestEventOrderOneSearch(t *testing.T) {
	t.Parallel()
	m := &fakeModel{outs: []Output{calls(call("search", `{"q":"x"}`)), final("done")}}
	a, rec := newAgent(m, WorkspaceWrite{}, &funcTool{name: "search"})
	res, err := a.Run(context.Background(), "fix it")
	if err != nil {
		t.Fatal(err)
	}
	want := []EventType{EventTurnStart, EventModelRequest, EventModelResponse, EventToolStart, EventToolEnd,
		EventModelRequest, EventModelResponse, EventMessage, EventTurnEnd}
	if got := rec.Types(); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v\nwant %v", got, want)
	}
	if res.StopReason != StopFinalMessage || res.FinalMessage != "done" || res.Steps != 2 || res.ToolCalls != 1 {
		t.Fatalf("result = %+v", res)
	}
	ev := rec.Events()
	if ev[3].Data["tool"] != "search" || ev[3].Data["decision"] != "allow" {
		t.Errorf("tool.start data = %v", ev[3].Data)
	}
	if ev[4].Data["outcome"] != "ok" {
		t.Errorf("tool.end data = %v", ev[4].Data)
	}
	if ev[len(ev)-1].Data["stop_reason"] != StopFinalMessage {
		t.Errorf("turn.end = %v", ev[len(ev)-1].Data)
	}
	// The second request carries the tool result paired with the call id.
	h := m.reqs[1].Messages
	if len(h) != 3 || h[2].Role != RoleTool || h[2].ToolCallID != h[1].ToolCalls[0].ID || !strings.Contains(h[2].Text, "search ok") {
		t.Fatalf("history = %+v", h)
	}
}

func TestHistoryIsAppendOnly(t *testing.T) {
	t.Parallel()
	m := &fakeModel{outs: []Output{
		calls(call("search", `{"q":"a"}`)), calls(call("search", `{"q":"b"}`)), final("ok")}}
	a, _ := newAgent(m, WorkspaceWrite{}, &funcTool{name: "search"})
	if _, err := a.Run(context.Background(), "goal"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(m.reqs); i++ {
		prev, cur := m.reqs[i-1].Messages, m.reqs[i].Messages
		if !reflect.DeepEqual(prev, cur[:len(prev)]) {
			t.Fatalf("request %d does not extend request %d", i, i-1)
		}
	}
}

func TestBadCallsAreErrorResults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, call, args, want string
	}{
		{"unknown tool", "delete_everything", `{}`, `unknown tool \"delete_everything\"`},
		{"invalid JSON", "search", `{"q": "x"`, "not valid JSON"},
		{"schema: wrong type", "search", `{"q": 3}`, "want a string"},
		{"schema: unknown field", "search", `{"q":"x","r":1}`, `unknown field \"r\"`},
		{"schema: not an object", "search", `[1]`, "want an object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var ran atomic.Bool
			tool := &funcTool{name: "search", fn: func(context.Context, json.RawMessage) (Result, error) {
				ran.Store(true)
				return Result{Text: "ran"}, nil
			}}
			m := &fakeModel{outs: []Output{calls(call(c.call, c.args)), final("ok")}}
			a, rec := newAgent(m, WorkspaceWrite{}, tool)
			res, err := a.Run(context.Background(), "g")
			if err != nil {
				t.Fatal(err)
			}
			if ran.Load() {
				t.Fatal("tool ran on a bad call")
			}
			if res.StopReason != StopFinalMessage || res.ToolErrors != 1 {
				t.Fatalf("result = %+v", res)
			}
			msg := m.reqs[1].Messages[2]
			if !msg.IsError || !strings.Contains(msg.Text, `"code":"INVALID_ARGUMENT"`) || !strings.Contains(msg.Text, c.want) ||
				!strings.Contains(msg.Text, `"retryable":true`) {
				t.Fatalf("tool message = %+v", msg)
			}
			if rec.Events()[3].Data["decision"] != "invalid" {
				t.Errorf("decision = %v", rec.Events()[3].Data["decision"])
			}
		})
	}
}

func TestDeniedWriteChangesNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		policy Policy
		path   string
		reason string
	}{
		{"read-only", ReadOnly{}, "main.go", "read-only"},
		{"protected glob", WorkspaceWrite{Protected: protectSet(".github/**")}, ".github/workflows/ci.yml", ".github/**"},
		{"git dir", WorkspaceWrite{}, ".git/config", ".git/**"},
		{"git dir unclean", WorkspaceWrite{}, "./x/../.git/hooks/pre-commit", ".git/**"},
		{"nested git dir", WorkspaceWrite{Protected: protectSet()}, "vendor/x/.git/config", "**/.git/**"},
		// A case-insensitive file system writes the workflows folder here.
		{"protected glob, other case", WorkspaceWrite{Protected: protectSet(".github/**")}, ".GITHUB/workflows/ci.yml", ".github/**"},
		{"git dir, other case", WorkspaceWrite{}, ".Git/config", ".git/**"},
		// The default set (a nil Protected) ignores case too.
		{"default set, upper case", WorkspaceWrite{}, ".GITHUB/workflows/x.yml", ".github/**"},
		{"default set, mixed case", WorkspaceWrite{}, ".Github/Workflows/ci.yml", ".github/**"},
		{"default set, env file", WorkspaceWrite{}, "app/.ENV", "**/.env"},
		{"git dir, upper case", WorkspaceWrite{Protected: protectSet("docs/**")}, ".GIT/hooks/x", ".git/**"},
		{"user glob, other case", WorkspaceWrite{Protected: protectSet("migrations/**")}, "Migrations/001.sql", "migrations/**"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			target := filepath.Join(dir, filepath.FromSlash(c.path))
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(target, []byte("original"), 0o644); err != nil {
				t.Fatal(err)
			}
			args, _ := json.Marshal(map[string]string{"path": c.path, "content": "evil"})
			m := &fakeModel{outs: []Output{calls(call("write", string(args))), final("ok")}}
			a, rec := newAgent(m, c.policy, &writeTool{dir: dir})
			res, err := a.Run(context.Background(), "g")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(target)
			if string(b) != "original" {
				t.Fatalf("file changed to %q", b)
			}
			msg := m.reqs[1].Messages[2]
			if !msg.IsError || !strings.HasPrefix(msg.Text, "Denied by policy: ") || !strings.Contains(msg.Text, c.reason) {
				t.Fatalf("tool message = %q", msg.Text)
			}
			start := rec.Events()[3]
			if start.Type != EventToolStart || start.Data["decision"] != "deny" {
				t.Fatalf("tool.start = %+v", start)
			}
			if res.Denials != 1 {
				t.Fatalf("denials = %d", res.Denials)
			}
		})
	}
}

func TestAllowedWriteHappens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := &fakeModel{outs: []Output{calls(call("write", `{"path":"a/b.txt","content":"hi"}`)), final("ok")}}
	a, _ := newAgent(m, WorkspaceWrite{Protected: protectSet(".github/**")}, &writeTool{dir: dir})
	if _, err := a.Run(context.Background(), "g"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a/b.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("read %q %v", b, err)
	}
}

func TestReadOnlyCallsRunConcurrently(t *testing.T) {
	t.Parallel()
	// Each call waits until the other has started: run one at a time, they
	// would both time out.
	started := make(chan string, 2)
	both := make(chan struct{})
	var n atomic.Int32
	rendezvous := func(ctx context.Context, args json.RawMessage) (Result, error) {
		started <- string(args)
		if n.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both:
			return Result{Text: "met"}, nil
		case <-time.After(5 * time.Second):
			return Result{Text: "alone", IsError: true}, nil
		}
	}
	m := &fakeModel{outs: []Output{calls(call("read", `{"q":"1"}`), call("read", `{"q":"2"}`)), final("ok")}}
	a, _ := newAgent(m, WorkspaceWrite{}, &funcTool{name: "read", fn: rendezvous})
	if _, err := a.Run(context.Background(), "g"); err != nil {
		t.Fatal(err)
	}
	h := m.reqs[1].Messages
	for _, msg := range h[2:] {
		if msg.Text != "met" {
			t.Fatalf("read-only calls did not overlap: %+v", h[2:])
		}
	}
	// Results stay in call order.
	if h[2].ToolCallID != h[1].ToolCalls[0].ID || h[3].ToolCallID != h[1].ToolCalls[1].ID {
		t.Fatalf("results out of order")
	}
}

func TestMutatingCallsRunInOrderAlone(t *testing.T) {
	t.Parallel()
	var running, maxRunning atomic.Int32
	var order []string
	fn := func(name string) func(context.Context, json.RawMessage) (Result, error) {
		return func(_ context.Context, args json.RawMessage) (Result, error) {
			cur := running.Add(1)
			for {
				old := maxRunning.Load()
				if cur <= old || maxRunning.CompareAndSwap(old, cur) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
			order = append(order, name+string(args))
			running.Add(-1)
			return Result{Text: "ok"}, nil
		}
	}
	mut := &funcTool{name: "mut", mutates: true, fn: fn("mut")}
	ro := &funcTool{name: "ro", fn: fn("ro")}
	excl := &funcTool{name: "test", excl: true, fn: fn("test")}
	out := calls(call("mut", `{"q":"1"}`), call("test", `{"q":"2"}`), call("mut", `{"q":"3"}`))
	m := &fakeModel{outs: []Output{out, final("ok")}}
	a, _ := newAgent(m, allowAll{}, mut, ro, excl)
	if _, err := a.Run(context.Background(), "g"); err != nil {
		t.Fatal(err)
	}
	if maxRunning.Load() != 1 {
		t.Fatalf("mutating/exclusive calls overlapped: %d at once", maxRunning.Load())
	}
	want := []string{`mut{"q":"1"}`, `test{"q":"2"}`, `mut{"q":"3"}`}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("order = %v", order)
	}
}

type allowAll struct{}

func (allowAll) Authorize(context.Context, ToolCall, Tool) Decision { return Decision{Allow: true} }

func TestStopReasons(t *testing.T) {
	t.Parallel()
	loopOut := calls(call("search", `{"q":"same"}`))
	cases := []struct {
		name   string
		model  *fakeModel
		limits Limits
		cost   CostFunc
		tool   *funcTool
		cancel time.Duration
		want   StopReason
		detail string
	}{
		{name: "final", model: &fakeModel{outs: []Output{final("bye")}}, want: StopFinalMessage, detail: "final message"},
		{name: "max steps", model: &fakeModel{outs: []Output{calls(call("search", `{"q":"1"}`)), calls(call("search", `{"q":"2"}`)), final("x")}},
			limits: Limits{MaxSteps: 2}, want: StopMaxSteps, detail: "step limit (2 model turns)"},
		{name: "token budget", model: &fakeModel{outs: []Output{calls(call("search", `{"q":"1"}`)), calls(call("search", `{"q":"2"}`)), final("x")}},
			limits: Limits{MaxTokens: 150}, want: StopTokenBudget, detail: "calls not run: search q=2"},
		{name: "cost budget", model: &fakeModel{outs: []Output{calls(call("search", `{"q":"1"}`)), calls(call("search", `{"q":"2"}`)), final("x")}},
			limits: Limits{MaxCostUSD: 0.015}, cost: func(_ string, u Usage) (float64, bool) { return float64(u.Total()) / 10000, true },
			want: StopCostBudget, detail: "cost budget ($0.0150)"},
		{name: "deadline", model: &fakeModel{outs: []Output{calls(call("slow", `{}`))}},
			limits: Limits{Timeout: 100 * time.Millisecond}, want: StopDeadline, detail: "time limit (100ms)"},
		{name: "cancelled", model: &fakeModel{outs: []Output{calls(call("slow", `{}`))}},
			cancel: 50 * time.Millisecond, want: StopCancelled, detail: "cancelled"},
		{name: "cancelled while sampling", model: &fakeModel{block: true},
			cancel: 50 * time.Millisecond, want: StopCancelled, detail: "cancelled"},
		{name: "loop", model: &fakeModel{outs: []Output{loopOut, loopOut, loopOut, loopOut, final("x")}},
			want: StopLoopDetected, detail: "same call with the same result 3 times"},
		{name: "model error", model: &fakeModel{errs: []error{errors.New("HTTP 500 after 4 attempts")}},
			want: StopModelError, detail: "HTTP 500 after 4 attempts"},
		{name: "context length without anything to elide", model: &fakeModel{errs: []error{ErrContextLength}},
			want: StopModelError, detail: "context length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			slow := &funcTool{name: "slow", fn: func(ctx context.Context, _ json.RawMessage) (Result, error) {
				select {
				case <-ctx.Done():
					return Result{}, ctx.Err()
				case <-time.After(10 * time.Second):
					return Result{Text: "slept"}, nil
				}
			}}
			a, rec := newAgent(c.model, WorkspaceWrite{}, &funcTool{name: "search"}, slow)
			a.Limits, a.Cost = c.limits, c.cost
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel > 0 {
				time.AfterFunc(c.cancel, cancel)
			}
			t0 := time.Now()
			res, err := a.Run(ctx, "g")
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(t0) > 5*time.Second {
				t.Fatalf("run did not stop promptly")
			}
			if res.StopReason != c.want {
				t.Fatalf("stop = %s (%s), want %s", res.StopReason, res.Detail, c.want)
			}
			if !strings.Contains(res.Detail, c.detail) {
				t.Fatalf("detail %q lacks %q", res.Detail, c.detail)
			}
			ev := rec.Events()
			last := ev[len(ev)-1]
			if last.Type != EventTurnEnd || last.Data["stop_reason"] != c.want {
				t.Fatalf("last event = %+v", last)
			}
		})
	}
}

func TestContextLengthErrorElidesAndRetries(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 4000)
	tool := &funcTool{name: "read", fn: func(context.Context, json.RawMessage) (Result, error) { return Result{Text: big}, nil }}
	m := &fakeModel{
		outs: []Output{calls(call("read", `{"q":"1"}`)), calls(call("read", `{"q":"2"}`)), calls(call("read", `{"q":"3"}`)),
			{}, final("ok")},
		errs: []error{nil, nil, nil, ErrContextLength},
	}
	a, _ := newAgent(m, WorkspaceWrite{}, tool)
	a.Limits.ContextTokens = 100000 // the provider's real window is smaller than configured
	res, err := a.Run(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopFinalMessage {
		t.Fatalf("stop = %s %s", res.StopReason, res.Detail)
	}
	last := m.reqs[len(m.reqs)-1].Messages
	if !isElided(last[2].Text) || !strings.Contains(last[2].Text, "4000 bytes of read output") {
		t.Fatalf("oldest output not elided: %q", last[2].Text)
	}
	if last[len(last)-1].Text != big {
		t.Fatalf("newest output was elided")
	}
}

func TestElideIsDeterministicAndOldestFirst(t *testing.T) {
	t.Parallel()
	mk := func() []Message {
		h := []Message{{Role: RoleUser, Text: "goal"}}
		for i := 0; i < 6; i++ {
			h = append(h, Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: string(rune('a' + i)), Name: "read"}}},
				Message{Role: RoleTool, ToolCallID: string(rune('a' + i)), ToolName: "read", Text: strings.Repeat("y", 2000)})
		}
		return h
	}
	h1, h2 := mk(), mk()
	n1 := elide(h1, "", nil, 1600, keepRecentTools)
	n2 := elide(h2, "", nil, 1600, keepRecentTools)
	if n1 == 0 || n1 != n2 || !reflect.DeepEqual(h1, h2) {
		t.Fatalf("elision not deterministic: %d vs %d", n1, n2)
	}
	// Oldest elided first; the two newest kept.
	if !isElided(h1[2].Text) || isElided(h1[len(h1)-1].Text) || isElided(h1[len(h1)-3].Text) {
		t.Fatalf("wrong messages elided")
	}
	if got := approxTokens(Request{Messages: h1}); got > 1600 && n1 < 4 {
		t.Fatalf("still %d tokens after eliding %d", got, n1)
	}
	if elide(h1, "", nil, 1<<20, keepRecentTools) != 0 {
		t.Fatal("elided under the limit")
	}
}

func TestCancellationMidToolKillsWork(t *testing.T) {
	t.Parallel()
	var sawCancel atomic.Bool
	entered := make(chan struct{})
	tool := &funcTool{name: "run", excl: true, fn: func(ctx context.Context, _ json.RawMessage) (Result, error) {
		close(entered)
		<-ctx.Done()
		sawCancel.Store(true)
		return Result{}, ctx.Err()
	}}
	m := &fakeModel{outs: []Output{calls(call("run", `{}`), call("search", `{"q":"after"}`)), final("never")}}
	a, rec := newAgent(m, WorkspaceWrite{}, tool, &funcTool{name: "search"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	res, err := a.Run(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if !sawCancel.Load() || res.StopReason != StopCancelled {
		t.Fatalf("stop = %s, tool saw cancel = %v", res.StopReason, sawCancel.Load())
	}
	if !strings.Contains(res.Detail, "calls not run: run") {
		t.Fatalf("detail = %q", res.Detail)
	}
	for _, e := range rec.Events() {
		if e.Type == EventToolStart && e.Data["tool"] == "search" {
			t.Fatal("a call after the cancelled one still ran")
		}
	}
}

func TestRedactionKeepsSecretsOutOfHistoryAndTrace(t *testing.T) {
	t.Parallel()
	const canary = "ghp_CANARYcanary1234567890"
	leak := &funcTool{name: "read", fn: func(context.Context, json.RawMessage) (Result, error) {
		return Result{Text: "token=" + canary}, nil
	}}
	m := &fakeModel{outs: []Output{calls(call("read", `{"q":"x"}`)), final("ok")}}
	a, rec := newAgent(m, WorkspaceWrite{}, leak)
	a.Redact = func(s string) string { return strings.ReplaceAll(s, canary, "***") }
	a.System = "repository says " + canary
	if _, err := a.Run(context.Background(), "goal mentions "+canary); err != nil {
		t.Fatal(err)
	}
	for _, r := range m.reqs {
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), canary) {
			t.Fatalf("canary reached a model request: %s", b)
		}
	}
	b, _ := json.Marshal(rec.Events())
	if strings.Contains(string(b), canary) {
		t.Fatalf("canary reached the trace")
	}
}

func TestRegistryRejectsDuplicates(t *testing.T) {
	t.Parallel()
	if _, err := NewRegistry(&funcTool{name: "a"}, &funcTool{name: "a"}); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewRegistry(&funcTool{name: "b", schema: `{"type":"array"}`}); err == nil {
		t.Fatal("non-object schema accepted")
	}
}

func TestMalformedArgumentsStillSerialize(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(ToolCall{ID: "1", Name: "x", Arguments: json.RawMessage(`{"broken`)})
	if err != nil || !strings.Contains(string(b), `"arguments":"{\"broken"`) {
		t.Fatalf("%s %v", b, err)
	}
}

func TestTruncatedReplyIsNotAFinalMessage(t *testing.T) {
	t.Parallel()
	cut := final("## Summary\nI changed the lo")
	cut.Truncated = true
	m := &fakeModel{outs: []Output{cut, final("## Summary\nfull answer")}}
	a, _ := newAgent(m, WorkspaceWrite{}, &funcTool{name: "search"})
	res, err := a.Run(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalMessage != "## Summary\nfull answer" || res.Steps != 2 {
		t.Fatalf("result %+v", res)
	}
	h := m.reqs[1].Messages
	if h[len(h)-1].Role != RoleUser || !strings.Contains(h[len(h)-1].Text, "cut off") {
		t.Fatalf("no continuation note: %+v", h)
	}
}

// volatileTool answers with a changing duration, and fingerprints it away.
type volatileTool struct{ funcTool }

func (v *volatileTool) Fingerprint(s string) string { return strings.Split(s, " took ")[0] }

func TestLoopDetectionUsesToolFingerprints(t *testing.T) {
	t.Parallel()
	n := 0
	tool := &volatileTool{funcTool{name: "run", fn: func(context.Context, json.RawMessage) (Result, error) {
		n++
		return Result{Text: "FAIL TestX took " + strings.Repeat("1", n) + "ms", IsError: true}, nil
	}}}
	same := calls(call("run", `{}`))
	m := &fakeModel{outs: []Output{same, same, same, same, final("x")}}
	a, _ := newAgent(m, WorkspaceWrite{}, tool)
	res, err := a.Run(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopLoopDetected || res.Steps != 3 {
		t.Fatalf("stop %s after %d steps", res.StopReason, res.Steps)
	}
}
