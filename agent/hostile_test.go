package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A model that got hold of a secret (decoded from test output, say) must
// not write it into the trace or have it echoed back in later requests;
// the tool still runs with the arguments the model sent.
func TestModelTextIsRedactedInEventsAndHistory(t *testing.T) {
	t.Parallel()
	const canary = "SECRETcanary0123456789"
	var got string
	echo := &funcTool{name: "echo", fn: func(_ context.Context, args json.RawMessage) (Result, error) {
		got = string(args)
		return Result{Text: "ok"}, nil
	}}
	m := &fakeModel{outs: []Output{
		{Message: "thinking " + canary, ToolCalls: []ToolCall{call("echo", `{"q":"`+canary+`"}`)}},
		final("done: " + canary),
	}}
	a, rec := newAgent(m, ReadOnly{}, echo)
	a.Redact = func(s string) string { return strings.ReplaceAll(s, canary, "***") }
	res, err := a.Run(context.Background(), "goal")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopFinalMessage || !strings.Contains(got, canary) {
		t.Fatalf("stop %s, tool got %q", res.StopReason, got)
	}
	events, _ := json.Marshal(rec.Events())
	reqs, _ := json.Marshal(m.reqs)
	history, _ := json.Marshal(res.History)
	for name, text := range map[string]string{"events": string(events), "requests": string(reqs), "history": string(history)} {
		if strings.Contains(text, canary) {
			t.Errorf("the canary reached the %s", name)
		}
	}
	if !strings.Contains(string(events), `\"q\":\"***\"`) && !strings.Contains(string(events), `"q":"***"`) {
		t.Errorf("redacted arguments missing from the events: %s", events)
	}
}

// The argument digest is clipped: computed before redaction, it kept the
// first part of a long secret, which the redactor then no longer matched.
func TestArgDigestDoesNotKeepPartOfASecret(t *testing.T) {
	t.Parallel()
	const canary = "ghs_0123456789abcdefghijABCDEFGHIJ012345"
	echo := &funcTool{name: "echo", fn: func(context.Context, json.RawMessage) (Result, error) { return Result{Text: "ok"}, nil }}
	m := &fakeModel{outs: []Output{
		calls(call("echo", `{"q":"the token is `+canary+`"}`)),
		calls(call("echo", `{"q":"again `+canary+`"}`)),
	}}
	a, rec := newAgent(m, ReadOnly{}, echo)
	a.Limits.MaxTokens = 150 // the second turn stops on the budget, its call pending
	a.Redact = func(s string) string { return strings.ReplaceAll(s, canary, "***") }
	res, err := a.Run(context.Background(), "goal")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopTokenBudget {
		t.Fatalf("stop %s, want %s", res.StopReason, StopTokenBudget)
	}
	events, _ := json.Marshal(rec.Events())
	for name, text := range map[string]string{"events": string(events), "detail": res.Detail} {
		if strings.Contains(text, canary[:16]) {
			t.Errorf("part of the secret reached the %s", name)
		}
	}
}

// A model turn with hundreds of read-only calls must not start them all at
// once (each search walks the whole tree in parallel already).
func TestConcurrentCallsAreBounded(t *testing.T) {
	t.Parallel()
	var running, peak atomic.Int32
	slow := &funcTool{name: "read", fn: func(context.Context, json.RawMessage) (Result, error) {
		cur := running.Add(1)
		for {
			old := peak.Load()
			if cur <= old || peak.CompareAndSwap(old, cur) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		running.Add(-1)
		return Result{Text: "ok"}, nil
	}}
	var many []ToolCall
	for i := range 100 {
		many = append(many, call("read", fmt.Sprintf(`{"q":"%d"}`, i)))
	}
	m := &fakeModel{outs: []Output{calls(many...), final("done")}}
	a, _ := newAgent(m, ReadOnly{}, slow)
	res, err := a.Run(context.Background(), "goal")
	if err != nil {
		t.Fatal(err)
	}
	if res.ToolCalls != 100 {
		t.Fatalf("%d calls ran", res.ToolCalls)
	}
	if p := peak.Load(); p > maxConcurrentCalls || p < 2 {
		t.Fatalf("peak concurrency %d, want 2..%d", p, maxConcurrentCalls)
	}
}
