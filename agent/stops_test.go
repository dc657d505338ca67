package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// countingTool counts its runs; its schema accepts {} so a call cut down
// to nothing would run.
func countingTool(name string, mutates bool, runs *atomic.Int32) *funcTool {
	return &funcTool{name: name, mutates: mutates, schema: `{"type":"object","properties":{"patch":{"type":"string"}}}`,
		fn: func(context.Context, json.RawMessage) (Result, error) {
			runs.Add(1)
			return Result{Text: "ran"}, nil
		}}
}

// pathTool is countingTool naming no path, so the write policy lets it run.
type pathTool struct{ *funcTool }

func (pathTool) TouchedPaths(json.RawMessage) ([]string, error) { return nil, nil }

// TestTruncatedToolCallIsNotRun: a reply cut at the output token limit
// runs none of its calls, the whole one before the cut included; each is
// answered with an error that says the output was cut and to split the work.
func TestTruncatedToolCallIsNotRun(t *testing.T) {
	t.Parallel()
	var reads, patches atomic.Int32
	cut := calls(call("read", `{}`), call("apply_patch", `{"patch":"--- a/x.go\n+++ b/x.go\n@@ -1,9 +1,9 @@\n-func`))
	cut.Truncated = true
	m := &fakeModel{outs: []Output{cut, final("## Summary\ndone")}}
	a, rec := newAgent(m, WorkspaceWrite{}, countingTool("read", false, &reads), pathTool{countingTool("apply_patch", true, &patches)})
	res, err := a.Run(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	if reads.Load() != 0 || patches.Load() != 0 {
		t.Fatalf("a truncated reply's calls ran: read %d, apply_patch %d", reads.Load(), patches.Load())
	}
	if res.StopReason != StopFinalMessage || res.Steps != 2 {
		t.Fatalf("stop %s after %d steps: %s", res.StopReason, res.Steps, res.Detail)
	}
	h := m.reqs[1].Messages
	results := h[len(h)-2:]
	for i, r := range results {
		if r.Role != RoleTool || !r.IsError || !strings.Contains(r.Text, CodeOutputTruncated) ||
			!strings.Contains(r.Text, "cut off at the output token limit") || !strings.Contains(r.Text, "smaller patches") {
			t.Errorf("answer %d: %+v", i, r)
		}
	}
	if !strings.Contains(results[1].Text, "its last, may be incomplete") || !strings.Contains(results[0].Text, "send it again") {
		t.Errorf("the cut call and the whole one get the same answer: %q / %q", results[1].Text, results[0].Text)
	}
	// The trace shows the calls as errors that did not run.
	var ends int
	for _, e := range rec.Events() {
		if e.Type == EventToolEnd {
			ends++
			if e.Data["outcome"] != "error" || e.Data["code"] != CodeOutputTruncated {
				t.Errorf("tool.end %v", e.Data)
			}
		}
		if e.Type == EventModelResponse && e.Data["step"] == 1 && e.Data["truncated"] != true {
			t.Errorf("model.response does not say the reply was cut: %v", e.Data)
		}
	}
	if ends != 2 {
		t.Errorf("%d tool.end events, want 2", ends)
	}
}

// TestRefusalStopsTheRun: a refusal ends the run with StopRefused and the
// model's words (redacted) in the detail; calls that came with it do not run.
func TestRefusalStopsTheRun(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	refusal := calls(call("read", `{}`))
	refusal.Refused, refusal.Message = true, "I can't help with that: it touches sk-canary-123."
	m := &fakeModel{outs: []Output{calls(call("read", `{"patch":"1"}`)), refusal, final("never")}}
	a, rec := newAgent(m, WorkspaceWrite{}, countingTool("read", false, &runs))
	a.Redact = func(s string) string { return strings.ReplaceAll(s, "sk-canary-123", "***") }
	res, err := a.Run(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopRefused || res.Finished() || res.FinalMessage != "" {
		t.Fatalf("stop %s, final %q", res.StopReason, res.FinalMessage)
	}
	if runs.Load() != 1 || len(m.reqs) != 2 {
		t.Errorf("%d tool runs, %d model calls; want 1 and 2", runs.Load(), len(m.reqs))
	}
	if res.Refusal != "I can't help with that: it touches ***." ||
		!strings.HasPrefix(res.Detail, "stopped: the model refused: I can't help with that: it touches ***. Done: 2 model turns") ||
		!strings.Contains(res.Detail, "calls not run: read") {
		t.Errorf("refusal %q, detail %q", res.Refusal, res.Detail)
	}
	b, _ := json.Marshal(rec.Events())
	if strings.Contains(string(b), "sk-canary-123") {
		t.Error("the refusal's secret reached the trace")
	}
	last := rec.Events()[len(rec.Events())-1]
	if last.Data["stop_reason"] != StopRefused {
		t.Errorf("turn.end %v", last.Data)
	}
}

// TestEstimatedUsageTripsTheBudget: usage a server did not report comes
// estimated, and counts toward the token budget like any other; the run
// says it is an estimate.
func TestEstimatedUsageTripsTheBudget(t *testing.T) {
	t.Parallel()
	turn := calls(call("read", `{}`))
	turn.Usage = Usage{InputTokens: 900, OutputTokens: 40, Estimated: true}
	m := &fakeModel{outs: []Output{turn, turn, final("x")}}
	var runs atomic.Int32
	a, rec := newAgent(m, WorkspaceWrite{}, countingTool("read", false, &runs))
	a.Limits = Limits{MaxTokens: 1000}
	res, err := a.Run(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopTokenBudget || res.Steps != 2 || !res.Usage.Estimated || res.Usage.Total() != 1880 {
		t.Fatalf("stop %s after %d steps, usage %+v", res.StopReason, res.Steps, res.Usage)
	}
	for _, w := range []string{"1880 used (estimated)", UsageNotReported} {
		if !strings.Contains(res.Detail, w) {
			t.Errorf("detail %q lacks %q", res.Detail, w)
		}
	}
	var progress strings.Builder
	p := NewProgressSink(&progress)
	for _, e := range rec.Events() {
		p.Emit(e)
	}
	if !strings.Contains(progress.String(), "1880 tokens (estimated: usage not reported by the server)") {
		t.Errorf("progress:\n%s", progress.String())
	}
}

// TestTruncatedTextStillHonoursTheBudget: a reply cut without a call
// continues the run only within the budget.
func TestTruncatedTextStillHonoursTheBudget(t *testing.T) {
	t.Parallel()
	cut := final("## Summary\nThe lo")
	cut.Truncated = true
	m := &fakeModel{outs: []Output{cut, cut, cut, final("x")}}
	a, _ := newAgent(m, WorkspaceWrite{}, &funcTool{name: "read"})
	a.Limits = Limits{MaxTokens: 200}
	res, err := a.Run(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopTokenBudget || res.Steps != 2 {
		t.Fatalf("stop %s after %d steps", res.StopReason, res.Steps)
	}
}

// TestPausedTurnContinues: a paused turn goes back as an assistant message
// with the adapter's record, and the model is sampled again.
func TestPausedTurnContinues(t *testing.T) {
	t.Parallel()
	paused := final("Searching first.")
	paused.Paused = true
	paused.Provider = &ProviderState{Adapter: "x", Data: json.RawMessage(`{"blocks":[1]}`)}
	m := &fakeModel{outs: []Output{paused, final("## Summary\ndone")}}
	a, _ := newAgent(m, WorkspaceWrite{}, &funcTool{name: "read"})
	res, err := a.Run(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopFinalMessage || res.FinalMessage != "## Summary\ndone" || len(m.reqs) != 2 {
		t.Fatalf("stop %s, final %q, %d requests", res.StopReason, res.FinalMessage, len(m.reqs))
	}
	h := m.reqs[1].Messages
	last := h[len(h)-1]
	if last.Role != RoleAssistant || last.Text != "Searching first." || last.Provider != paused.Provider {
		t.Fatalf("the paused turn did not go back as it was: %+v", last)
	}
	// The record is the adapter's: never serialised with the history.
	b, _ := json.Marshal(last)
	if strings.Contains(string(b), "blocks") {
		t.Errorf("provider state serialised: %s", b)
	}
}

// TestRefusedRequestStopsTheRun: a provider that refuses the request for
// its content (an error wrapping ErrRefused) ends the run refused, not
// with a model error.
func TestRefusedRequestStopsTheRun(t *testing.T) {
	t.Parallel()
	m := &fakeModel{errs: []error{fmt.Errorf("openai chat completion: %w: status 400 content_filter: filtered", ErrRefused)}}
	a, _ := newAgent(m, WorkspaceWrite{}, &funcTool{name: "read"})
	res, err := a.Run(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopRefused || !strings.Contains(res.Refusal, "content_filter: filtered") || res.Err != "" {
		t.Fatalf("stop %s, refusal %q, err %q", res.StopReason, res.Refusal, res.Err)
	}
}
