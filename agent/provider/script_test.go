package provider

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/org/mini-agent/agent"
)

func TestScriptReplaysTurns(t *testing.T) {
	t.Parallel()
	s, err := LoadScript(filepath.Join("testdata", "script", "fix.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 5 || s.Remaining() != 5 {
		t.Fatalf("Len %d Remaining %d, want 5 5", s.Len(), s.Remaining())
	}
	ctx := t.Context()
	req := sampleRequest()

	out, err := s.Sample(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	checkCalls(t, out.ToolCalls, []agent.ToolCall{
		{ID: "call_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"calc/add.go"}`)},
		{ID: "call_2", Name: "search", Arguments: json.RawMessage(`{"query":"Add\\(","path":"calc"}`)},
	})
	if out.Usage != (agent.Usage{InputTokens: 1200, OutputTokens: 40}) || out.Model != ScriptModelName {
		t.Errorf("usage %+v model %q", out.Usage, out.Model)
	}

	out, err = s.Sample(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if out.Message != "The loop stops one short." || len(out.ToolCalls) != 1 || out.ToolCalls[0].ID != "patch-1" {
		t.Errorf("turn 2 = %+v", out)
	}
	var args struct{ Patch string }
	if err := json.Unmarshal(out.ToolCalls[0].Arguments, &args); err != nil || !strings.Contains(args.Patch, "+\treturn a + b\n") {
		t.Errorf("patch arguments = %s (%v)", out.ToolCalls[0].Arguments, err)
	}
	// No usage in the script: estimated from the request, so it grows
	// with it.
	if out.Usage.InputTokens != estimateTokens(requestSize(req)) || out.Usage.OutputTokens < 10 {
		t.Errorf("estimated usage = %+v", out.Usage)
	}

	out, err = s.Sample(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// IDs count every call of the script, named or not: this is the 4th.
	checkCalls(t, out.ToolCalls, []agent.ToolCall{{ID: "call_4", Name: "run_test", Arguments: json.RawMessage(`{"tests": ["TestAdd"`)}})

	_, err = s.Sample(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "line 6") || !strings.Contains(err.Error(), "upstream overloaded") {
		t.Errorf("simulated error = %v", err)
	}

	out, err = s.Sample(ctx, req)
	if err != nil || !strings.HasPrefix(out.Message, "Summary\n") || out.ToolCalls != nil {
		t.Errorf("final turn = %+v, %v", out, err)
	}

	_, err = s.Sample(ctx, req)
	if !errors.Is(err, ErrScriptExhausted) || !strings.Contains(err.Error(), "script exhausted after 5 turns") {
		t.Errorf("past the end: %v", err)
	}
	if s.Remaining() != 0 {
		t.Errorf("Remaining = %d", s.Remaining())
	}
}

func TestScriptOutputsAreCopies(t *testing.T) {
	t.Parallel()
	data := `{"tool_calls":[{"name":"read_file","arguments":{"path":"a"}}]}` + "\n" + `{"message":"done"}`
	s1, err := ParseScript(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := s1.Sample(t.Context(), agent.Request{})
	out.ToolCalls[0].Arguments[2] = 'X'
	out.ToolCalls[0].Name = "evil"
	if got := s1.turns[0].out.ToolCalls[0]; got.Name != "read_file" || string(got.Arguments) != `{"path":"a"}` {
		t.Errorf("caller's edit reached the script: %+v", got)
	}
}

func TestScriptConcurrentSamplesHandOutEachTurnOnce(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	const n = 50
	for range n {
		b.WriteString(`{"tool_calls":[{"name":"search","arguments":{"query":"x"}}]}` + "\n")
	}
	s, err := ParseScript(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range n + 10 {
		wg.Go(func() {
			out, err := s.Sample(t.Context(), agent.Request{})
			if err != nil {
				if !errors.Is(err, ErrScriptExhausted) {
					t.Errorf("Sample: %v", err)
				}
				return
			}
			mu.Lock()
			defer mu.Unlock()
			id := out.ToolCalls[0].ID
			if seen[id] {
				t.Errorf("turn with %s handed out twice", id)
			}
			seen[id] = true
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d distinct turns handed out, want %d", len(seen), n)
	}
}

func TestScriptHonoursCancelledContext(t *testing.T) {
	t.Parallel()
	s, err := ParseScript(strings.NewReader(`{"message":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Sample(ctx, agent.Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if s.Remaining() != 1 {
		t.Error("a cancelled Sample consumed a turn")
	}
}

func TestScriptMalformed(t *testing.T) {
	t.Parallel()
	ok := `{"message":"fine"}`
	cases := []struct {
		name, script, want string
	}{
		{"not JSON", ok + "\n{message: x}", "line 2"},
		{"unknown field", "\n\n" + `{"mesage":"typo"}`, "line 3"},
		{"empty object", `{}`, "line 1"},
		{"error with message", `{"error":"x","message":"y"}`, "line 1"},
		{"tool call without name", ok + "\n" + `{"tool_calls":[{"arguments":{}}]}`, "line 2: tool call 1: no name"},
		{"both argument forms", `{"tool_calls":[{"name":"a","arguments":{},"arguments_raw":"{"}]}`, "both arguments"},
		{"two values on a line", `{"message":"a"} {"message":"b"}`, "more than one JSON value"},
		{"negative usage", `{"message":"a","usage":{"input_tokens":-1}}`, "negative"},
		{"no turns", "# only a comment\n\n", "no turns"},
		{"line too long", `{"message":"` + strings.Repeat("x", maxScriptLineBytes) + `"}`, "too long"},
		{"refusal with message", `{"refusal":"no","message":"y"}`, `"refusal" cannot be combined`},
		{"truncated and paused", `{"message":"a","truncated":true,"paused":true}`, "not both"},
		{"usage and unreported", `{"message":"a","usage":{"input_tokens":1},"usage_unreported":true}`, "contradict"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseScript(strings.NewReader(c.script))
			if err == nil {
				t.Fatal("ParseScript accepted a malformed script")
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrConfig mentioning %q", err, c.want)
			}
		})
	}
}

func TestLoadScriptErrorsNameTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"message":"a"}`+"\n"+`{"tool_calls":"nope"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadScript(bad)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v, want the path and line 2", err)
	}
	_, err = LoadScript(filepath.Join(dir, "missing.jsonl"))
	if !errors.Is(err, ErrConfig) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestScriptStopReasons: a script speaks the stop reasons real servers
// send — a refusal, a reply cut at the token limit, a paused turn, a
// server that reports no usage — and the loop treats them as it treats the
// real ones.
func TestScriptStopReasons(t *testing.T) {
	t.Parallel()
	s, err := ParseScript(strings.NewReader(`{"tool_calls":[{"name":"read_file","arguments":{}}],"truncated":true,"usage_unreported":true}
{"message":"searching","paused":true}
{"refusal":"I can't help with that."}
`))
	if err != nil {
		t.Fatal(err)
	}
	req := sampleRequest()
	cut, _ := s.Sample(t.Context(), req)
	paused, _ := s.Sample(t.Context(), req)
	refused, _ := s.Sample(t.Context(), req)
	if !cut.Truncated || len(cut.ToolCalls) != 1 || !cut.Usage.Estimated || cut.Usage.InputTokens < 10 {
		t.Errorf("cut turn %+v", cut)
	}
	if !paused.Paused || paused.Truncated || paused.Usage.Estimated {
		t.Errorf("paused turn %+v", paused)
	}
	if !refused.Refused || refused.Message != "I can't help with that." {
		t.Errorf("refused turn %+v", refused)
	}
}
