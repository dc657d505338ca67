package agent

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Running one turn's tool calls: read-only ones side by side, the others alone;
// each checked, authorized and executed, with its tool.start and tool.end events.

// exclusive is implemented by non-mutating tools that still must not run
// beside others (run_test: it executes code and holds the CPU).
type exclusive interface{ Exclusive() bool }

// execute runs one turn's calls: consecutive read-only calls concurrently,
// mutating or exclusive calls alone and in order. Results come back in call
// order. A Go error means infrastructure failure or cancellation; the
// calls not yet run are returned as pending.
func (r *run) execute(ctx context.Context, calls []ToolCall) ([]Message, []ToolCall, error) {
	results := make([]Message, 0, len(calls))
	for i := 0; i < len(calls); {
		j := i + 1
		if r.parallelOK(calls[i]) {
			for j < len(calls) && r.parallelOK(calls[j]) {
				j++
			}
		}
		batch := calls[i:j]
		out := make([]Message, len(batch))
		errs := make([]error, len(batch))
		var wg sync.WaitGroup
		sem := make(chan struct{}, maxConcurrentCalls)
		for k, c := range batch {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				out[k], errs[k] = r.call(ctx, c)
			}()
			if len(batch) == 1 {
				wg.Wait()
			}
		}
		wg.Wait()
		for k := range batch {
			if errs[k] != nil {
				// Every call the model made gets an answer in the history.
				for _, c := range calls[i+k:] {
					results = append(results, Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name,
						Text: "not run: the run stopped (" + errs[k].Error() + ")", IsError: true})
				}
				return results, calls[i+k:], errs[k]
			}
			results = append(results, out[k])
		}
		i = j
	}
	return results, nil, nil
}

// maxConcurrentCalls bounds the read-only calls of one turn running at
// once: a model may ask for hundreds in one reply.
const maxConcurrentCalls = 8

func (r *run) parallelOK(c ToolCall) bool {
	t, ok := r.a.Tools.Lookup(c.Name)
	if !ok {
		return true // answered with an error, touches nothing
	}
	if ex, ok := t.(exclusive); ok && ex.Exclusive() {
		return false
	}
	return !t.Mutates()
}

// call validates, authorizes and executes one call, emitting tool.start and
// tool.end. It returns the tool message for the history.
func (r *run) call(ctx context.Context, c ToolCall) (Message, error) {
	step := r.res.Steps
	digest := ArgDigest(r.a.redactArgs(c.Arguments)) // clipped: redact first
	msg := Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name}
	tool, args, bad := r.a.Tools.Check(c)
	if tl, ok := r.answered[c.ID]; ok {
		tool, args, bad = nil, nil, &tl
	}
	decision := Decision{Allow: bad == nil}
	if bad == nil {
		c.Arguments = args
		decision = r.a.Policy.Authorize(ctx, c, tool)
	}
	r.emit(EventToolStart, map[string]any{"step": step, "id": c.ID, "tool": c.Name, "args": digest,
		"arguments": c.Arguments, "decision": decisionLabel(bad, decision), "reason": decision.Reason})
	t0 := time.Now()
	res, err := execute(ctx, tool, args, bad, decision)
	dur := time.Since(t0)
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "aborted"
	case res.IsError:
		outcome = "error"
		if res.Code == CodeDenied && !decision.Allow {
			outcome = "denied"
		}
	}
	r.mu.Lock()
	r.res.ToolCalls++
	r.res.perTool[c.Name]++
	if res.IsError || err != nil {
		r.res.ToolErrors++
	}
	if !decision.Allow {
		r.res.Denials++
	}
	if res.Code == CodePatchRejected {
		r.res.Refusals++
	}
	r.mu.Unlock()
	msg.Text, msg.IsError = r.a.redact(res.Text), res.IsError
	end := map[string]any{"step": step, "id": c.ID, "tool": c.Name, "args": digest, "outcome": outcome,
		"code": res.Code, "duration": durationString(dur), "duration_ms": dur.Milliseconds(), "output_bytes": len(msg.Text)}
	if err != nil {
		end["error"] = err.Error()
	}
	r.emit(EventToolEnd, end)
	return msg, err
}

// Invoke runs one call the way the loop does, without a loop: argument
// checks, the policy, then the tool. It is how `mini-agent tool` shows a
// maintainer exactly what the model would see.
func (r *Registry) Invoke(ctx context.Context, p Policy, c ToolCall) (Result, error) {
	tool, args, bad := r.Check(c)
	decision := Decision{Allow: bad == nil}
	if bad == nil {
		c.Arguments = args
		decision = p.Authorize(ctx, c, tool)
	}
	return execute(ctx, tool, args, bad, decision)
}

func execute(ctx context.Context, tool Tool, args json.RawMessage, bad *Result, d Decision) (Result, error) {
	switch {
	case bad != nil:
		return *bad, nil
	case !d.Allow:
		return Result{Text: "Denied by policy: " + d.Reason, IsError: true, Code: CodeDenied}, nil
	}
	return tool.Execute(ctx, args)
}

func decisionLabel(bad *Result, d Decision) string {
	switch {
	case bad != nil:
		return "invalid"
	case d.Allow:
		return "allow"
	default:
		return "deny"
	}
}
