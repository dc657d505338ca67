package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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

// A model (or a hostile endpoint speaking for it) sending a huge argument
// gets an error result naming the size and the limit; the tool does not
// run, and the argument is kept only as size and digest in the trace and in
// the history re-sent each turn (issue 9, finding 6). A mutating tool's
// content may be larger (MaxMutatingArgumentBytes). Not parallel: it
// measures the process's allocations.
func TestOversizedArgumentsAreRefusedAndClipped(t *testing.T) {
	var echoed, wrote atomic.Int64
	echo := &funcTool{name: "echo", fn: func(context.Context, json.RawMessage) (Result, error) {
		echoed.Add(1)
		return Result{Text: "ok"}, nil
	}}
	dir := t.TempDir()
	write := &writeTool{dir: dir}
	huge := `{"q":"` + strings.Repeat("a", 20<<20) + `"}`
	patchOK := `{"path":"ok.txt","content":"` + strings.Repeat("b", 300<<10) + `"}`
	patchBig := `{"path":"big.txt","content":"` + strings.Repeat("c", 2<<20) + `"}`
	sum := sha256.Sum256([]byte(huge))
	m := &fakeModel{outs: []Output{
		calls(call("echo", huge)),
		calls(call("write", patchOK), call("write", patchBig), call("nope", huge)),
		final("done"),
	}}
	counting := &funcTool{name: "write", mutates: true, schema: string(write.Spec().InputSchema),
		fn: func(ctx context.Context, args json.RawMessage) (Result, error) {
			wrote.Add(1)
			return write.Execute(ctx, args)
		}}
	a, rec := newAgent(m, allowAll{}, echo, counting)
	hugeLen, bigLen := len(huge), len(patchBig)
	huge, patchOK, patchBig = "", "", "" // only the model's copy remains
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := a.Run(context.Background(), "goal")
	runtime.ReadMemStats(&after)
	if err != nil || res.StopReason != StopFinalMessage {
		t.Fatalf("stop %v, err %v", res.StopReason, err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a run with a 20 MiB argument allocated %d KiB", alloc>>10)
	if alloc > uint64(hugeLen/2) {
		t.Errorf("the run allocated %d bytes for a %d-byte argument, want under half of it", alloc, hugeLen)
	}
	if echoed.Load() != 0 || wrote.Load() != 1 {
		t.Errorf("echo ran %d times, write %d times; want 0 and 1", echoed.Load(), wrote.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "big.txt")); err == nil {
		t.Error("the oversized write was carried out")
	}
	var results []Message
	for _, msg := range res.History {
		if msg.Role == RoleTool {
			results = append(results, msg)
		}
	}
	wants := []string{
		fmt.Sprintf("arguments for echo too large: %d bytes, limit %d; send only", hugeLen, MaxArgumentBytes),
		"wrote ok.txt",
		fmt.Sprintf("arguments for write too large: %d bytes, limit %d; send a smaller patch", bigLen, MaxMutatingArgumentBytes),
		fmt.Sprintf("arguments for nope too large: %d bytes, limit %d", hugeLen, MaxArgumentBytes),
	}
	if len(results) != len(wants) {
		t.Fatalf("got %d tool results, want %d", len(results), len(wants))
	}
	for i, want := range wants {
		if !strings.Contains(results[i].Text, want) {
			t.Errorf("result %d = %.300q, want it to say %q", i, results[i].Text, want)
		}
	}
	events, _ := json.Marshal(rec.Events())
	reqs, _ := json.Marshal(m.reqs)
	history, _ := json.Marshal(res.History)
	for name, text := range map[string][]byte{"events": events, "requests": reqs, "history": history} {
		// The 300 KiB write is legitimately kept (in the history, once per
		// later request); nothing near the 20 MiB argument is.
		if len(text) > 2<<20 {
			t.Errorf("the %s hold %d bytes", name, len(text))
		}
		if !strings.Contains(string(text), hex.EncodeToString(sum[:])) {
			t.Errorf("the %s do not carry the clipped argument's digest", name)
		}
	}
}

// Check refuses an oversized call on its own too (the `mini-agent tool`
// path goes through Invoke, not the loop).
func TestCheckRefusesOversizedArguments(t *testing.T) {
	t.Parallel()
	reg, err := NewRegistry(&funcTool{name: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, bad := reg.Check(call("echo", `{"q":"`+strings.Repeat("a", MaxArgumentBytes)+`"}`))
	if bad == nil || !bad.IsError || bad.Code != CodeInvalidArgument || !strings.Contains(bad.Text, "too large") {
		t.Fatalf("Check = %+v, want a too-large error", bad)
	}
	if _, _, bad := reg.Check(call("echo", `{"q":"`+strings.Repeat("a", MaxArgumentBytes-8)+`"}`)); bad != nil {
		t.Fatalf("an argument at the limit was refused: %+v", bad)
	}
}
