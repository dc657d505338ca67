package agent

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Agent runs the loop: sample the model, authorize and execute its tool
// calls, feed results back, until a final message or a stop condition.
type Agent struct {
	Model  Model
	Tools  *Registry
	Policy Policy
	Events EventSink
	Limits Limits
	// System is the instruction text (see Instructions).
	System string
	// ModelName is used for pricing and reporting.
	ModelName string
	Cost      CostFunc
	// Redact scrubs secrets from every text that enters the history (the
	// goal and tool results), so no secret reaches a request or the trace.
	Redact func(string) string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// errDeadline is the cause attached to the run's own deadline, to tell it
// apart from the caller's cancellation.
var errDeadline = errors.New("run deadline reached")

type run struct {
	a       *Agent
	lim     Limits
	emit    func(EventType, map[string]any)
	res     *RunResult
	history []Message
	seen    map[[32]byte]int
	// answered holds the answers of this turn's calls that must not run
	// (by call id): arguments over the limit (clipped to a size and
	// digest), every call of a reply cut at the output token limit.
	answered map[string]Result
	mu       sync.Mutex // guards res counters during concurrent calls
	system   string     // the redacted instructions
}

// Run executes one task: goal is the user message. It always returns a
// RunResult whose StopReason says why it ended; the error is non-nil only
// for misconfiguration.
func (a *Agent) Run(ctx context.Context, goal string) (*RunResult, error) {
	if a.Model == nil || a.Tools == nil || a.Policy == nil {
		return nil, errors.New("agent: Model, Tools and Policy are required")
	}
	now := a.Now
	if now == nil {
		now = time.Now
	}
	lim := a.Limits.withDefaults()
	start := now()
	r := &run{a: a, lim: lim, res: &RunResult{Model: a.ModelName, perTool: map[string]int{}}, seen: map[[32]byte]int{},
		system: a.redact(a.System)}
	r.emit = func(typ EventType, data map[string]any) {
		if a.Events != nil {
			a.Events.Emit(Event{Type: typ, Time: now(), Data: a.redactData(data)})
		}
	}
	runCtx := ctx
	if lim.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, lim.Timeout, errDeadline)
		defer cancel()
	}
	r.emit(EventTurnStart, map[string]any{"goal": a.redact(goal), "model": a.ModelName, "tools": a.Tools.Names(),
		"limits": map[string]any{"max_steps": lim.MaxSteps, "max_tokens": lim.MaxTokens, "max_cost_usd": lim.MaxCostUSD,
			"timeout": lim.Timeout.String(), "loop_repeat": lim.LoopRepeat}})
	r.history = []Message{{Role: RoleUser, Text: a.redact(goal)}}
	pending := r.loop(runCtx, ctx)
	r.res.History = r.history
	r.res.Duration = now().Sub(start).Seconds()
	r.res.describe(lim, a.redactCalls(pending))
	r.emit(EventTurnEnd, map[string]any{"stop_reason": r.res.StopReason, "steps": r.res.Steps,
		"tool_calls": r.res.ToolCalls, "tokens": r.res.Usage.Total(), "usage": r.res.Usage,
		"cost_usd": r.res.CostUSD, "cost_known": r.res.CostKnown, "detail": r.res.Detail, "duration_s": r.res.Duration})
	return r.res, nil
}

func (a *Agent) redact(s string) string {
	if a.Redact == nil {
		return s
	}
	return a.Redact(s)
}

// redactData redacts the text values of an event: the model's messages and
// arguments, tool errors and reasons (a model that got hold of a secret
// must not write it into the trace).
func (a *Agent) redactData(data map[string]any) map[string]any {
	if a.Redact == nil {
		return data
	}
	for k, v := range data {
		switch v := v.(type) {
		case string:
			data[k] = a.Redact(v)
		case json.RawMessage:
			data[k] = a.redactJSON(v)
		}
	}
	return data
}

// redactCalls returns calls with redacted arguments, for the history; the
// calls themselves run with the arguments the model sent.
func (a *Agent) redactCalls(calls []ToolCall) []ToolCall {
	if a.Redact == nil {
		return calls
	}
	out := slices.Clone(calls)
	for i := range out {
		out[i].Arguments = a.redactJSON(out[i].Arguments)
	}
	return out
}

// redactArgs is redactJSON when a redactor is set.
func (a *Agent) redactArgs(raw json.RawMessage) json.RawMessage {
	if a.Redact == nil {
		return raw
	}
	return a.redactJSON(raw)
}

// redactJSON redacts raw JSON; when that breaks the JSON (a secret that
// spans its syntax), the whole value is replaced.
func (a *Agent) redactJSON(raw json.RawMessage) json.RawMessage {
	s := a.Redact(string(raw))
	if s == string(raw) {
		return raw
	}
	if !json.Valid([]byte(s)) {
		return json.RawMessage(`{"redacted":"***"}`)
	}
	return json.RawMessage(s)
}

// stopFor classifies a context error: the run's own deadline, or the caller's.
func stopFor(runCtx, parent context.Context) StopReason {
	if parent.Err() == nil && errors.Is(context.Cause(runCtx), errDeadline) {
		return StopDeadline
	}
	if errors.Is(parent.Err(), context.DeadlineExceeded) {
		return StopDeadline
	}
	return StopCancelled
}

// loop runs until a stop; it returns the calls the model asked for that
// were not run, for the report.
func (r *run) loop(ctx, parent context.Context) []ToolCall {
	res, lim := r.res, r.lim
	retriedContext := false
	for {
		if ctx.Err() != nil {
			res.StopReason = stopFor(ctx, parent)
			return nil
		}
		if lim.MaxSteps > 0 && res.Steps >= lim.MaxSteps {
			res.StopReason = StopMaxSteps
			return nil
		}
		elided := elide(r.history, r.system, r.a.Tools.Specs(), lim.ContextTokens*4/5, keepRecentTools)
		req := Request{System: r.system, Messages: r.history, Tools: r.a.Tools.Specs()}
		r.emit(EventModelRequest, map[string]any{"step": res.Steps + 1, "messages": len(r.history),
			"approx_tokens": approxTokens(req), "elided": elided})
		t0 := time.Now()
		out, err := r.a.Model.Sample(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				res.StopReason = stopFor(ctx, parent)
				return nil
			}
			if errors.Is(err, ErrContextLength) && !retriedContext {
				retriedContext = true
				// The provider's window is smaller than we thought: halve the history.
				if elide(r.history, r.system, r.a.Tools.Specs(), approxTokens(req)/2, 1) > 0 {
					continue
				}
			}
			if errors.Is(err, ErrRefused) {
				res.StopReason, res.Refusal = StopRefused, r.a.redact(err.Error())
				return nil
			}
			res.StopReason, res.Err = StopModelError, err.Error()
			return nil
		}
		retriedContext = false
		res.Steps++
		res.Usage = res.Usage.Add(out.Usage)
		if out.Model != "" && res.Model == "" {
			res.Model = out.Model
		}
		if r.a.Cost != nil {
			res.CostUSD, res.CostKnown = r.a.Cost(r.a.ModelName, res.Usage)
		}
		r.emit(EventModelResponse, responseData(res.Steps, out, time.Since(t0)))
		if out.Refused {
			// Stop reasons are data: a refusal or a filtered reply is no
			// final message, and nothing it asked for runs.
			res.Refusal = r.a.redact(out.Message)
			r.history = append(r.history, Message{Role: RoleAssistant, Text: res.Refusal})
			res.StopReason = StopRefused
			return out.ToolCalls
		}
		if len(out.ToolCalls) == 0 && (out.Truncated || out.Paused) {
			// Not a final message: the reply hit the output limit, or the
			// provider paused the turn. Keep it and let the model go on
			// (this costs a step, so it cannot loop forever).
			if stop := r.overBudget(); stop != "" {
				res.StopReason = stop
				return nil
			}
			r.history = append(r.history, Message{Role: RoleAssistant, Text: r.a.redact(out.Message), Provider: out.Provider})
			if out.Truncated {
				r.history = append(r.history, Message{Role: RoleUser, Text: truncatedNote})
			}
			continue
		}
		if len(out.ToolCalls) == 0 {
			res.FinalMessage = out.Message
			r.history = append(r.history, Message{Role: RoleAssistant, Text: r.a.redact(out.Message), Provider: out.Provider})
			r.emit(EventMessage, map[string]any{"step": res.Steps, "text": out.Message})
			res.StopReason = StopFinalMessage
			return nil
		}
		calls := normalizeIDs(out.ToolCalls, res.Steps)
		r.answered, calls = r.a.Tools.clipOversized(calls)
		if out.Truncated {
			// A reply cut inside a tool call: the last call's arguments
			// are cut (or still {}), and the reply is not what the model
			// meant to send. None of its calls runs.
			r.answered = truncatedAnswers(calls)
		}
		if stop := r.overBudget(); stop != "" {
			res.StopReason = stop
			return calls
		}
		r.history = append(r.history, Message{Role: RoleAssistant, Text: r.a.redact(out.Message), ToolCalls: r.a.redactCalls(calls),
			Provider: out.Provider})
		results, pending, err := r.execute(ctx, calls)
		r.history = append(r.history, results...)
		if err != nil {
			if ctx.Err() != nil {
				res.StopReason = stopFor(ctx, parent)
			} else {
				res.StopReason, res.Err = StopError, err.Error()
			}
			return pending
		}
		if r.looping(calls, results) {
			res.StopReason = StopLoopDetected
			return nil
		}
	}
}

// truncatedNote is the harness's word to the model after a reply that hit
// the output token limit.
const truncatedNote = "[mini-agent harness] Your previous reply was cut off at the output token limit. " +
	"Continue from where it stopped, more briefly; end with the final message when done."

// splitHint says how to fit the work under the output token limit.
const splitHint = "Split the work: send smaller patches (a few hunks or one file per apply_patch call), " +
	"fewer calls per reply and less text around them."

// truncatedAnswers answers every call of a reply cut at the output token
// limit: the last one may have been cut while it was written; the others
// are whole but belong to a reply the model did not finish.
func truncatedAnswers(calls []ToolCall) map[string]Result {
	out := make(map[string]Result, len(calls))
	for i, c := range calls {
		msg := "Your reply was cut off at the output token limit, so this call, its last, may be incomplete " +
			"(its arguments cut) and was not run. "
		if i < len(calls)-1 {
			msg = "Your reply was cut off at the output token limit after this call, so none of its calls was run, " +
				"this one included; send it again if you still need it. "
		}
		out[c.ID] = ErrorResult(CodeOutputTruncated, msg+splitHint, true)
	}
	return out
}

// overBudget is the stop reason of a run whose usage reached its token or
// dollar budget, or "".
func (r *run) overBudget() StopReason {
	res, lim := r.res, r.lim
	if lim.MaxTokens > 0 && res.Usage.Total() >= lim.MaxTokens {
		return StopTokenBudget
	}
	if lim.MaxCostUSD > 0 && res.CostKnown && res.CostUSD >= lim.MaxCostUSD {
		return StopCostBudget
	}
	return ""
}

// responseData is the model.response event of one turn.
func responseData(step int, out Output, d time.Duration) map[string]any {
	data := map[string]any{"step": step, "tool_calls": len(out.ToolCalls), "usage": out.Usage, "duration": durationString(d)}
	for k, set := range map[string]bool{"truncated": out.Truncated, "refused": out.Refused, "paused": out.Paused} {
		if set {
			data[k] = true
		}
	}
	return data
}

// normalizeIDs gives every call an id, unique within the run.
func normalizeIDs(calls []ToolCall, step int) []ToolCall {
	out := make([]ToolCall, len(calls))
	seen := map[string]bool{}
	for i, c := range calls {
		if c.ID == "" || seen[c.ID] {
			c.ID = fmt.Sprintf("call_%d_%d", step, i+1)
		}
		seen[c.ID] = true
		out[i] = c
	}
	return out
}

// Fingerprinter is implemented by tools whose results carry volatile parts
// (durations, run numbers) that would hide a repeated identical outcome
// from loop detection. Fingerprint returns the result without them.
type Fingerprinter interface {
	Fingerprint(resultText string) string
}

// looping counts identical (call, result) pairs over the run.
func (r *run) looping(calls []ToolCall, results []Message) bool {
	hit := false
	for i, c := range calls {
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x00", c.Name, canonicalJSON(c.Arguments))
		text := results[i].Text
		if t, ok := r.a.Tools.Lookup(c.Name); ok {
			if fp, ok := t.(Fingerprinter); ok {
				text = fp.Fingerprint(text)
			}
		}
		h.Write([]byte(text))
		var key [32]byte
		copy(key[:], h.Sum(nil))
		r.seen[key]++
		if r.lim.LoopRepeat > 0 && r.seen[key] >= r.lim.LoopRepeat {
			hit = true
		}
	}
	return hit
}

func canonicalJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v) // map keys are sorted by encoding/json
	return string(b)
}
