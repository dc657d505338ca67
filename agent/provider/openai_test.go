package provider

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/org/mini-agent/agent"
)

func newTestOpenAI(t *testing.T, f *fakeAPI, cfg Config) *OpenAI {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = f.srv.URL + "/v1"
	}
	if cfg.Getenv == nil {
		cfg.Getenv = noEnv
	}
	m, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOpenAIRequestWireFormat(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{fixture: "openai/parallel_tool_calls.json"})
	m := newTestOpenAI(t, f, Config{Model: "qwen2.5-coder", APIKey: canaryKey})
	req := sampleRequest()
	req.MaxOutputTokens = 2048
	if _, err := m.Sample(t.Context(), req); err != nil {
		t.Fatalf("Sample: %v", err)
	}
	r := f.requests()[0]
	if r.path != "/v1/chat/completions" {
		t.Errorf("path = %s", r.path)
	}
	if got := r.header.Get("Authorization"); got != "Bearer "+canaryKey {
		t.Errorf("Authorization = %q", got)
	}
	body := f.lastBody(t)
	if body["model"] != "qwen2.5-coder" {
		t.Errorf("model = %v", body["model"])
	}
	// A custom server gets max_tokens, which every compatible server knows.
	if body["max_tokens"] != 2048.0 || body["max_completion_tokens"] != nil {
		t.Errorf("max_tokens = %v, max_completion_tokens = %v", body["max_tokens"], body["max_completion_tokens"])
	}
	wantMessages := `[
	 {"role":"system","content":"You fix failing Go tests. Work only inside the workspace."},
	 {"role":"user","content":"TestAdd fails: got 3, want 4"},
	 {"role":"assistant","content":"Reading the code.","tool_calls":[
	   {"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"calc/add.go\"}"}},
	   {"id":"call_2","type":"function","function":{"name":"search","arguments":"{\"query\": \"Add("}}]},
	 {"role":"tool","tool_call_id":"call_1","content":"1\tpackage calc"},
	 {"role":"tool","tool_call_id":"call_2","content":"{\"status\":\"error\",\"code\":\"INVALID_ARGUMENT\",\"message\":\"arguments are not valid JSON\",\"retryable\":true}"},
	 {"role":"user","content":"Keep going."}]`
	if !jsonEqual(t, body["messages"], wantMessages) {
		got, _ := json.MarshalIndent(body["messages"], "", " ")
		t.Errorf("messages:\n%s", got)
	}
	wantTools := `[
	 {"type":"function","function":{"name":"read_file","description":"Read a file of the workspace.","parameters":` + readFileSchema + `}},
	 {"type":"function","function":{"name":"search","description":"Search the workspace with an RE2 regex.","parameters":` + searchSchema + `}}]`
	if !jsonEqual(t, body["tools"], wantTools) {
		got, _ := json.MarshalIndent(body["tools"], "", " ")
		t.Errorf("tools:\n%s", got)
	}
}

func TestOpenAIResponses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fixture   string
		wantMsg   string
		wantCalls []agent.ToolCall
		wantUsage agent.Usage
		wantModel string
	}{
		{
			fixture: "openai/parallel_tool_calls.json",
			wantCalls: []agent.ToolCall{
				{ID: "call_read_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"calc/add.go","start_line":1,"end_line":40}`)},
				{ID: "call_search_2", Name: "search", Arguments: json.RawMessage(`{"query":"func Add\\(","path":"calc"}`)},
			},
			wantUsage: agent.Usage{InputTokens: 1520, OutputTokens: 61, CacheReadTokens: 1280},
			wantModel: "gpt-4.1-2025-04-14",
		},
		{
			// Malformed JSON passes through byte for byte; a missing id is
			// generated; empty arguments become {}.
			fixture: "openai/malformed_arguments.json",
			wantMsg: "Let me look at the file.",
			wantCalls: []agent.ToolCall{
				{ID: "call_bad", Name: "read_file", Arguments: json.RawMessage(`{"path": "calc/add.go", "start_line": 1,`)},
				{ID: "call_1", Name: "run_test", Arguments: json.RawMessage(`{}`)},
			},
			wantUsage: agent.Usage{InputTokens: 900, OutputTokens: 30},
			wantModel: "qwen2.5-coder-7b-instruct",
		},
		{
			// DeepSeek reports cache hits as prompt_cache_hit_tokens.
			fixture:   "openai/final_text.json",
			wantMsg:   "Summary\nFixed the off-by-one in Add.\n\nRoot cause\nThe loop bound.\n\nAssumptions\nnone",
			wantUsage: agent.Usage{InputTokens: 2100, OutputTokens: 40, CacheReadTokens: 2048},
			wantModel: "deepseek-chat",
		},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, reply{fixture: c.fixture})
			m := newTestOpenAI(t, f, Config{Model: "m"})
			out, err := m.Sample(t.Context(), sampleRequest())
			if err != nil {
				t.Fatalf("Sample: %v", err)
			}
			if out.Message != c.wantMsg {
				t.Errorf("message = %q, want %q", out.Message, c.wantMsg)
			}
			checkCalls(t, out.ToolCalls, c.wantCalls)
			if out.Usage != c.wantUsage {
				t.Errorf("usage = %+v, want %+v", out.Usage, c.wantUsage)
			}
			if out.Model != c.wantModel {
				t.Errorf("model = %q, want %q", out.Model, c.wantModel)
			}
		})
	}
}

// redirectTransport sends every request to target, whatever its URL says,
// so the official endpoint's behaviour can be tested offline.
type redirectTransport struct{ target *url.URL }

func (rt redirectTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = rt.target.Scheme, rt.target.Host
	return http.DefaultTransport.RoundTrip(r)
}

func TestOpenAIOfficialEndpointDefaults(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{fixture: "openai/final_text.json"})
	target, _ := url.Parse(f.srv.URL)
	m, err := NewOpenAI(Config{
		HTTPClient: &http.Client{Transport: redirectTransport{target}},
		Getenv:     envMap(map[string]string{"OPENAI_API_KEY": canaryKey}),
	})
	if err != nil {
		t.Fatal(err)
	}
	req := sampleRequest()
	req.MaxOutputTokens = 1000
	if _, err := m.Sample(t.Context(), req); err != nil {
		t.Fatalf("Sample: %v", err)
	}
	body := f.lastBody(t)
	if body["model"] != DefaultOpenAIModel {
		t.Errorf("model = %v, want the default %s", body["model"], DefaultOpenAIModel)
	}
	if body["max_completion_tokens"] != 1000.0 || body["max_tokens"] != nil {
		t.Errorf("official API: max_completion_tokens = %v, max_tokens = %v", body["max_completion_tokens"], body["max_tokens"])
	}
	if got := f.requests()[0].header.Get("Authorization"); got != "Bearer "+canaryKey {
		t.Errorf("key from OPENAI_API_KEY not sent: Authorization = %q", got)
	}
}

func TestOpenAIGeneratedIDsStayUnique(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{fixture: "openai/malformed_arguments.json"}, reply{fixture: "openai/malformed_arguments.json"})
	m := newTestOpenAI(t, f, Config{Model: "m"})
	var ids []string
	for range 2 {
		out, err := m.Sample(t.Context(), sampleRequest())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.ToolCalls[1].ID)
	}
	if ids[0] != "call_1" || ids[1] != "call_2" {
		t.Errorf("generated ids = %v, want [call_1 call_2]", ids)
	}
}

func TestOpenAILocalServerWithoutKey(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{fixture: "openai/final_text.json"})
	m := newTestOpenAI(t, f, Config{Model: "llama3"})
	if _, err := m.Sample(t.Context(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "hi"}}}); err != nil {
		t.Fatalf("Sample: %v", err)
	}
	r := f.requests()[0]
	if got := r.header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none without a key", got)
	}
	body := f.lastBody(t)
	if body["tools"] != nil || body["max_tokens"] != nil {
		t.Errorf("unexpected fields in %v", body)
	}
	if !jsonEqual(t, body["messages"], `[{"role":"user","content":"hi"}]`) {
		t.Errorf("messages = %v (no system message expected)", body["messages"])
	}
}

func TestOpenAIRejectsBadRequestsLocally(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	m := newTestOpenAI(t, f, Config{Model: "m"})
	for name, req := range map[string]agent.Request{
		"unknown role": {Messages: []agent.Message{{Role: "narrator", Text: "x"}}},
		"bad schema":   {Tools: []agent.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`[1]`)}}},
	} {
		if _, err := m.Sample(t.Context(), req); err == nil {
			t.Errorf("%s: Sample succeeded", name)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}

// checkCalls compares tool calls, arguments byte for byte.
func checkCalls(t *testing.T, got, want []agent.ToolCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tool calls %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Name != want[i].Name || string(got[i].Arguments) != string(want[i].Arguments) {
			t.Errorf("call %d = {%s %s %s}, want {%s %s %s}", i,
				got[i].ID, got[i].Name, got[i].Arguments, want[i].ID, want[i].Name, want[i].Arguments)
		}
	}
}

func TestTruncatedReplies(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fixture string
		sample  func(*fakeAPI) (agent.Output, error)
	}{
		{"openai/truncated.json", func(f *fakeAPI) (agent.Output, error) {
			return newTestOpenAI(t, f, Config{Model: "m"}).Sample(t.Context(), sampleRequest())
		}},
		{"anthropic/truncated.json", func(f *fakeAPI) (agent.Output, error) {
			m, err := NewAnthropic(Config{Model: "m", APIKey: canaryKey, BaseURL: f.srv.URL, Getenv: noEnv})
			if err != nil {
				return agent.Output{}, err
			}
			return m.Sample(t.Context(), sampleRequest())
		}},
		{"openai/final_text.json", nil},
	} {
		f := newFakeAPI(t, reply{fixture: c.fixture})
		var out agent.Output
		var err error
		if c.sample == nil {
			out, err = newTestOpenAI(t, f, Config{Model: "m"}).Sample(t.Context(), sampleRequest())
		} else {
			out, err = c.sample(f)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		if want := c.sample != nil; out.Truncated != want {
			t.Errorf("%s: truncated = %v, want %v", c.fixture, out.Truncated, want)
		}
	}
}
