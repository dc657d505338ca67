package provider

import (
	"encoding/json"
	"testing"

	"github.com/org/mini-agent/agent"
)

func newTestAnthropic(t *testing.T, f *fakeAPI, cfg Config) *Anthropic {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = f.srv.URL
	}
	if cfg.APIKey == "" {
		cfg.APIKey = canaryKey
	}
	if cfg.Getenv == nil {
		cfg.Getenv = noEnv
	}
	m, err := NewAnthropic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnthropicRequestWireFormat(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{fixture: "anthropic/tool_use.json"})
	m := newTestAnthropic(t, f, Config{Model: "claude-opus-4-1"})
	if _, err := m.Sample(t.Context(), sampleRequest()); err != nil {
		t.Fatalf("Sample: %v", err)
	}
	r := f.requests()[0]
	if r.path != "/v1/messages" {
		t.Errorf("path = %s", r.path)
	}
	if got := r.header.Get("X-Api-Key"); got != canaryKey {
		t.Errorf("x-api-key = %q", got)
	}
	if r.header.Get("Anthropic-Version") == "" {
		t.Error("no anthropic-version header")
	}
	body := f.lastBody(t)
	if body["model"] != "claude-opus-4-1" || body["max_tokens"] != float64(DefaultAnthropicMaxTokens) {
		t.Errorf("model = %v, max_tokens = %v", body["model"], body["max_tokens"])
	}
	wantSystem := `[{"type":"text","text":"You fix failing Go tests. Work only inside the workspace.","cache_control":{"type":"ephemeral"}}]`
	if !jsonEqual(t, body["system"], wantSystem) {
		t.Errorf("system = %v", body["system"])
	}
	// Breakpoints: last tool (prefix), system, last block of the history.
	wantTools := `[
	 {"name":"read_file","description":"Read a file of the workspace.","input_schema":` + readFileSchema + `},
	 {"name":"search","description":"Search the workspace with an RE2 regex.","input_schema":` + searchSchema + `,"cache_control":{"type":"ephemeral"}}]`
	if !jsonEqual(t, body["tools"], wantTools) {
		got, _ := json.MarshalIndent(body["tools"], "", " ")
		t.Errorf("tools:\n%s", got)
	}
	// The malformed arguments go out wrapped in {"_raw": ...}; both tool
	// results and the nudge share one user message, is_error set.
	wantMessages := `[
	 {"role":"user","content":[{"type":"text","text":"TestAdd fails: got 3, want 4"}]},
	 {"role":"assistant","content":[
	   {"type":"text","text":"Reading the code."},
	   {"type":"tool_use","id":"call_1","name":"read_file","input":{"path":"calc/add.go"}},
	   {"type":"tool_use","id":"call_2","name":"search","input":{"_raw":"{\"query\": \"Add("}}]},
	 {"role":"user","content":[
	   {"type":"tool_result","tool_use_id":"call_1","content":[{"type":"text","text":"1\tpackage calc"}]},
	   {"type":"tool_result","tool_use_id":"call_2","is_error":true,"content":[{"type":"text","text":"{\"status\":\"error\",\"code\":\"INVALID_ARGUMENT\",\"message\":\"arguments are not valid JSON\",\"retryable\":true}"}]},
	   {"type":"text","text":"Keep going.","cache_control":{"type":"ephemeral"}}]}]`
	if !jsonEqual(t, body["messages"], wantMessages) {
		got, _ := json.MarshalIndent(body["messages"], "", " ")
		t.Errorf("messages:\n%s", got)
	}
	if n := countCacheControl(body); n > 4 {
		t.Errorf("%d cache_control breakpoints, the API allows 4", n)
	}
}

func TestAnthropicToolResultPairing(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{fixture: "anthropic/final_text.json"})
	m := newTestAnthropic(t, f, Config{})
	req := agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleUser, Text: "go"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "a", Name: "run_test", Arguments: json.RawMessage(`[1,2]`)},
				{ID: "b", Name: "run_test", Arguments: nil},
			}},
			{Role: agent.RoleTool, ToolCallID: "a", Text: ""},
			{Role: agent.RoleTool, ToolCallID: "b", Text: "ok"},
		},
		MaxOutputTokens: 300,
	}
	if _, err := m.Sample(t.Context(), req); err != nil {
		t.Fatalf("Sample: %v", err)
	}
	body := f.lastBody(t)
	if body["max_tokens"] != 300.0 {
		t.Errorf("max_tokens = %v, want 300", body["max_tokens"])
	}
	if _, ok := body["system"]; ok {
		t.Errorf("system sent though empty: %v", body["system"])
	}
	wantMessages := `[
	 {"role":"user","content":[{"type":"text","text":"go"}]},
	 {"role":"assistant","content":[
	   {"type":"tool_use","id":"a","name":"run_test","input":{"_raw":"[1,2]"}},
	   {"type":"tool_use","id":"b","name":"run_test","input":{}}]},
	 {"role":"user","content":[
	   {"type":"tool_result","tool_use_id":"a"},
	   {"type":"tool_result","tool_use_id":"b","content":[{"type":"text","text":"ok"}],"cache_control":{"type":"ephemeral"}}]}]`
	if !jsonEqual(t, body["messages"], wantMessages) {
		got, _ := json.MarshalIndent(body["messages"], "", " ")
		t.Errorf("messages:\n%s", got)
	}
}

func TestAnthropicResponses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fixture   string
		wantMsg   string
		wantCalls []agent.ToolCall
		wantUsage agent.Usage
		wantModel string
	}{
		{
			fixture: "anthropic/tool_use.json",
			wantMsg: "I'll read the file and search for the caller.",
			wantCalls: []agent.ToolCall{
				{ID: "toolu_01A09q90qw90lq917835lq9", Name: "read_file", Arguments: json.RawMessage(`{"path": "calc/add.go", "start_line": 1, "end_line": 40}`)},
				{ID: "toolu_01B77r81rx81mr028946mr0", Name: "search", Arguments: json.RawMessage(`{"query": "Add\\(", "path": "calc"}`)},
			},
			// input_tokens excludes the cache: 210 + 1500 + 3000.
			wantUsage: agent.Usage{InputTokens: 4710, OutputTokens: 95, CacheReadTokens: 3000, CacheWriteTokens: 1500},
			wantModel: "claude-sonnet-4-5-20250929",
		},
		{
			fixture:   "anthropic/final_text.json",
			wantMsg:   "Summary\nFixed Add.\nAssumptions\nnone",
			wantUsage: agent.Usage{InputTokens: 4750, OutputTokens: 20, CacheReadTokens: 4700},
			wantModel: "claude-haiku-4-5-20251001",
		},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, reply{fixture: c.fixture})
			m := newTestAnthropic(t, f, Config{})
			out, err := m.Sample(t.Context(), sampleRequest())
			if err != nil {
				t.Fatalf("Sample: %v", err)
			}
			if out.Message != c.wantMsg {
				t.Errorf("message = %q, want %q", out.Message, c.wantMsg)
			}
			checkCallsJSON(t, out.ToolCalls, c.wantCalls)
			if out.Usage != c.wantUsage {
				t.Errorf("usage = %+v, want %+v", out.Usage, c.wantUsage)
			}
			if out.Model != c.wantModel {
				t.Errorf("model = %q, want %q", out.Model, c.wantModel)
			}
		})
	}
}

// checkCallsJSON compares tool calls, arguments as JSON values (the SDK
// may re-space the input object).
func checkCallsJSON(t *testing.T, got, want []agent.ToolCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tool calls %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		var g any
		if err := json.Unmarshal(got[i].Arguments, &g); err != nil {
			t.Errorf("call %d: arguments %s are not JSON", i, got[i].Arguments)
			continue
		}
		if got[i].ID != want[i].ID || got[i].Name != want[i].Name || !jsonEqual(t, g, string(want[i].Arguments)) {
			t.Errorf("call %d = {%s %s %s}, want {%s %s %s}", i,
				got[i].ID, got[i].Name, got[i].Arguments, want[i].ID, want[i].Name, want[i].Arguments)
		}
	}
}

func countCacheControl(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "cache_control" {
				n++
			}
			n += countCacheControl(e)
		}
	case []any:
		for _, e := range x {
			n += countCacheControl(e)
		}
	}
	return n
}
