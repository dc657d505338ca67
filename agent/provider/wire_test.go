package provider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/org/mini-agent/agent"
)

// These tests replay answers written in the shapes real servers send
// (DeepSeek's reasoning models, Gemini's OpenAI-compatible endpoint,
// Anthropic with thinking on, refusals, content filters, replies cut at the
// token limit, servers that count no usage, pause_turn) through the real
// adapters and the real loop. The fake servers that need the reasoning
// fields back answer 400 with the real error body when they are missing,
// as the real ones do.

// fileTool is a read-only tool answering {"path"} from files, counting its
// runs. Its schema requires nothing, so a call cut down to {} would run.
type fileTool struct {
	name  string
	files map[string]string
	runs  atomic.Int32
}

func (f *fileTool) Spec() agent.ToolSpec {
	return agent.ToolSpec{Name: f.name, Description: "Read a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"patch":{"type":"string"}}}`)}
}

func (f *fileTool) Mutates() bool { return false }

func (f *fileTool) Execute(_ context.Context, args json.RawMessage) (agent.Result, error) {
	f.runs.Add(1)
	var a struct{ Path string }
	_ = json.Unmarshal(args, &a)
	if s, ok := f.files[a.Path]; ok {
		return agent.Result{Text: s}, nil
	}
	return agent.ErrorResult(agent.CodeNotFound, "no such file: "+a.Path, false), nil
}

// calcFiles is the workspace the fake models read.
var calcFiles = map[string]string{
	"calc/add.go":      "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b + b\n}\n",
	"calc/add_test.go": "package calc\n\nfunc TestAdd(t *testing.T) { if Add(1, 2) != 3 { t.Fatal() } }\n",
}

type allowAll struct{}

func (allowAll) Authorize(context.Context, agent.ToolCall, agent.Tool) agent.Decision {
	return agent.Decision{Allow: true}
}

// runLoop runs the real loop on m with tools, recording its events.
func runLoop(t *testing.T, m agent.Model, lim agent.Limits, cost agent.CostFunc, tools ...agent.Tool) (*agent.RunResult, *agent.Recorder) {
	t.Helper()
	reg, err := agent.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	rec := &agent.Recorder{}
	a := &agent.Agent{Model: m, Tools: reg, Policy: allowAll{}, Events: rec, Limits: lim, Cost: cost,
		ModelName: "m", System: "You fix failing Go tests."}
	res, err := a.Run(t.Context(), "TestAdd fails: got 5, want 3")
	if err != nil {
		t.Fatal(err)
	}
	return res, rec
}

// fixtureJSON decodes a fixture.
func fixtureJSON(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

// choiceMessage is the message of a Chat Completions fixture's first choice.
func choiceMessage(t *testing.T, name string) map[string]any {
	t.Helper()
	return fixtureJSON(t, name)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
}

// requestMessages decodes the messages of a request body.
func requestMessages(body []byte) []map[string]any {
	var req struct {
		Messages []map[string]any `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	return req.Messages
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// eventsJSON is the whole trace as text.
func eventsJSON(t *testing.T, rec *agent.Recorder) string {
	t.Helper()
	b, err := json.Marshal(rec.Events())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// historyText is every text and argument of the run's history.
func historyText(res *agent.RunResult) string {
	var b strings.Builder
	for _, m := range res.History {
		b.WriteString(m.Text)
		for _, c := range m.ToolCalls {
			b.Write(c.Arguments)
		}
	}
	return b.String()
}

// TestDeepSeekReasoningContentGoesBack: DeepSeek's thinking mode sends
// reasoning_content with a tool-calling turn and answers 400 ("Missing
// `reasoning_content` field in the assistant message at message index N")
// unless every such turn comes back with it, verbatim, the empty one too.
func TestDeepSeekReasoningContentGoesBack(t *testing.T) {
	t.Parallel()
	issued := map[string]any{} // tool call id -> the reasoning_content sent with it
	for _, fx := range []string{"openai/deepseek_reasoner_tool_call.json", "openai/deepseek_reasoner_tool_call_2.json"} {
		msg := choiceMessage(t, fx)
		issued[obj(list(msg["tool_calls"])[0])["id"].(string)] = msg["reasoning_content"]
	}
	f := newFakeAPI(t, reply{fixture: "openai/deepseek_reasoner_tool_call.json"},
		reply{fixture: "openai/deepseek_reasoner_tool_call_2.json"}, reply{fixture: "openai/deepseek_reasoner_final.json"})
	f.setGate(func(body []byte) *rejection {
		for i, m := range requestMessages(body) {
			if m["role"] != "assistant" || len(list(m["tool_calls"])) == 0 {
				continue
			}
			rc, ok := m["reasoning_content"]
			if !ok || rc != issued[obj(list(m["tool_calls"])[0])["id"].(string)] {
				return &rejection{status: 400, fixture: "openai/err_deepseek_missing_reasoning.json", index: i}
			}
		}
		return nil
	})
	m := newTestOpenAI(t, f, Config{Model: "deepseek-reasoner", APIKey: canaryKey, MaxRetries: -1})
	tool := &fileTool{name: "read_file", files: calcFiles}
	res, rec := runLoop(t, m, agent.Limits{}, nil, tool)
	if res.StopReason != "final_message" {
		t.Fatalf("stop %s: %s", res.StopReason, res.Detail)
	}
	if n := len(f.requests()); n != 3 || tool.runs.Load() != 2 {
		t.Errorf("%d requests, %d tool runs; want 3 and 2", n, tool.runs.Load())
	}
	// The reasoning never becomes text the model (or the trace) reads.
	reasoning := choiceMessage(t, "openai/deepseek_reasoner_tool_call.json")["reasoning_content"].(string)
	for _, r := range f.requests() {
		for _, m := range requestMessages(r.body) {
			if c, _ := m["content"].(string); strings.Contains(c, reasoning[:40]) {
				t.Errorf("reasoning sent as content: %v", m)
			}
		}
	}
	if strings.Contains(historyText(res), reasoning[:40]) || strings.Contains(eventsJSON(t, rec), reasoning[:40]) {
		t.Error("the reasoning reached the history's text or the trace")
	}
}

// TestGeminiThoughtSignatureGoesBack: Gemini 3 through the OpenAI-compatible
// endpoint signs a tool call (extra_content.google.thought_signature, on
// the first call of a parallel set) and answers 400 unless it comes back.
func TestGeminiThoughtSignatureGoesBack(t *testing.T) {
	t.Parallel()
	signed := map[string]any{} // tool call id -> its extra_content
	for _, c := range list(choiceMessage(t, "openai/gemini_thought_signature_tool_calls.json")["tool_calls"]) {
		if ec, ok := obj(c)["extra_content"]; ok {
			signed[obj(c)["id"].(string)] = ec
		}
	}
	if len(signed) != 1 {
		t.Fatalf("fixture signs %d calls, want 1", len(signed))
	}
	f := newFakeAPI(t, reply{fixture: "openai/gemini_thought_signature_tool_calls.json"}, reply{fixture: "openai/gemini_final.json"})
	f.setGate(func(body []byte) *rejection {
		for i, m := range requestMessages(body) {
			for _, c := range list(m["tool_calls"]) {
				want, ok := signed[obj(c)["id"].(string)]
				if ok && !reflect.DeepEqual(obj(c)["extra_content"], want) {
					return &rejection{status: 400, fixture: "openai/err_gemini_missing_signature.json", index: i}
				}
			}
		}
		return nil
	})
	m := newTestOpenAI(t, f, Config{Model: "gemini-3-pro-preview", APIKey: canaryKey, MaxRetries: -1})
	tool := &fileTool{name: "read_file", files: calcFiles}
	res, rec := runLoop(t, m, agent.Limits{}, nil, tool)
	if res.StopReason != "final_message" {
		t.Fatalf("stop %s: %s", res.StopReason, res.Detail)
	}
	if n := len(f.requests()); n != 2 || tool.runs.Load() != 2 {
		t.Errorf("%d requests, %d tool runs; want 2 and 2", n, tool.runs.Load())
	}
	// Only the signed call carries a signature back.
	for _, m := range requestMessages(f.requests()[1].body) {
		for _, c := range list(m["tool_calls"]) {
			if _, ok := signed[obj(c)["id"].(string)]; !ok && obj(c)["extra_content"] != nil {
				t.Errorf("an unsigned call went back with %v", obj(c)["extra_content"])
			}
		}
	}
	for _, sig := range signed {
		s := obj(obj(sig)["google"])["thought_signature"].(string)
		if strings.Contains(historyText(res), s) || strings.Contains(eventsJSON(t, rec), s) {
			t.Error("the thought signature reached the history's text or the trace")
		}
	}
}

// TestGeminiErrorArrayIsRead: the compatible endpoint wraps its error in
// a JSON array; the message still reaches the report.
func TestGeminiErrorArrayIsRead(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{status: 400, fixture: "openai/err_gemini_missing_signature.json"})
	m := newTestOpenAI(t, f, Config{Model: "gemini-3-pro-preview", APIKey: canaryKey})
	_, err := m.Sample(t.Context(), sampleRequest())
	if err == nil || !strings.Contains(err.Error(), "status 400 INVALID_ARGUMENT 400: Function call is missing a thought_signature") {
		t.Fatalf("error %v does not carry the server's message", err)
	}
}

// anthropicThinking returns, per tool_use id, the thinking and
// redacted_thinking blocks of the fixture's turn.
func anthropicThinking(t *testing.T, fixtures ...string) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	for _, fx := range fixtures {
		var thinking []any
		for _, b := range list(fixtureJSON(t, fx)["content"]) {
			switch obj(b)["type"] {
			case "thinking", "redacted_thinking":
				thinking = append(thinking, b)
			case "tool_use":
				out[obj(b)["id"].(string)] = thinking
			}
		}
	}
	return out
}

// subset reports whether every non-null value of want is in got.
func subset(got, want map[string]any) bool {
	for k, v := range want {
		if v != nil && !reflect.DeepEqual(got[k], v) {
			return false
		}
	}
	return true
}

// TestAnthropicThinkingBlocksGoBack: with thinking on, Anthropic answers 400
// unless a turn's thinking and redacted_thinking blocks come back before
// its tool_use, signatures and data untouched.
func TestAnthropicThinkingBlocksGoBack(t *testing.T) {
	t.Parallel()
	issued := anthropicThinking(t, "anthropic/thinking_tool_use.json", "anthropic/redacted_thinking_tool_use.json")
	f := newFakeAPI(t, reply{fixture: "anthropic/thinking_tool_use.json"},
		reply{fixture: "anthropic/redacted_thinking_tool_use.json"}, reply{fixture: "anthropic/thinking_final.json"})
	f.setGate(func(body []byte) *rejection {
		for i, m := range requestMessages(body) {
			if m["role"] != "assistant" {
				continue
			}
			content := list(m["content"])
			for _, b := range content {
				if obj(b)["type"] != "tool_use" {
					continue
				}
				want := issued[obj(b)["id"].(string)]
				ok := len(content) > len(want)
				for k := 0; ok && k < len(want); k++ {
					ok = subset(obj(content[k]), obj(want[k]))
				}
				if !ok {
					return &rejection{status: 400, fixture: "anthropic/err_thinking_required.json", index: i}
				}
			}
		}
		return nil
	})
	m := newTestAnthropic(t, f, Config{MaxRetries: -1})
	tool := &fileTool{name: "read_file", files: calcFiles}
	res, rec := runLoop(t, m, agent.Limits{}, nil, tool)
	if res.StopReason != "final_message" || !strings.HasPrefix(res.FinalMessage, "Summary\nAdd adds b twice.") {
		t.Fatalf("stop %s (%q): %s", res.StopReason, res.FinalMessage, res.Detail)
	}
	if n := len(f.requests()); n != 3 || tool.runs.Load() != 2 {
		t.Errorf("%d requests, %d tool runs; want 3 and 2", n, tool.runs.Load())
	}
	for _, blocks := range issued {
		for _, b := range blocks {
			for _, k := range []string{"thinking", "signature", "data"} {
				s, _ := obj(b)[k].(string)
				if s == "" {
					continue
				}
				if strings.Contains(historyText(res), s) || strings.Contains(eventsJSON(t, rec), s) {
					t.Errorf("a thinking block's %s reached the history's text or the trace", k)
				}
			}
		}
	}
}

// TestRefusalEndsTheRun: a refusal (Anthropic stop_reason "refusal",
// OpenAI's refusal field, Azure/OpenAI finish_reason "content_filter") ends
// the run with stop reason refused and the model's words, never as a final
// message; no further request is made.
func TestRefusalEndsTheRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fixture string
		status  int
		want    []string // in the detail
	}{
		{"anthropic/refusal.json", 200, []string{"I can't help with writing this", "cyber"}},
		{"anthropic/refusal_empty.json", 200, []string{"stop_reason refusal"}},
		{"openai/refusal.json", 200, []string{"I'm sorry, I can't help with that request"}},
		{"openai/content_filter.json", 200, []string{"content filter", "violence"}},
		// Azure refuses a prompt its filter trips with a 400, not a choice.
		{"openai/err_content_filter_prompt.json", 400, []string{"content_filter", "content management policy"}},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, reply{status: c.status, fixture: c.fixture})
			var m agent.Model = newTestOpenAI(t, f, Config{Model: "gpt-4.1", APIKey: canaryKey})
			if strings.HasPrefix(c.fixture, "anthropic/") {
				m = newTestAnthropic(t, f, Config{})
			}
			tool := &fileTool{name: "read_file", files: calcFiles}
			res, _ := runLoop(t, m, agent.Limits{}, nil, tool)
			if res.StopReason != "refused" || res.FinalMessage != "" {
				t.Fatalf("stop %s, final message %q: %s", res.StopReason, res.FinalMessage, res.Detail)
			}
			for _, w := range c.want {
				if !strings.Contains(res.Detail, w) {
					t.Errorf("detail %q lacks %q", res.Detail, w)
				}
			}
			if len(f.requests()) != 1 || tool.runs.Load() != 0 {
				t.Errorf("%d requests, %d tool runs after a refusal", len(f.requests()), tool.runs.Load())
			}
		})
	}
}

// TestTruncatedToolCallIsNeverRun: a reply cut at the output token limit in
// the middle of a tool call (Anthropic max_tokens with the tool_use's input
// still {}, Chat Completions finish_reason "length" with the arguments cut)
// runs nothing; the model is told its output was cut and to split the work.
func TestTruncatedToolCallIsNeverRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ fixture, final, id string }{
		{"anthropic/max_tokens_tool_use.json", "anthropic/final_text.json", "toolu_01Ct5vB8nM2qW6xZ9aS3dF7g"},
		{"openai/length_tool_call.json", "openai/final_text.json", "call_Zk3Wq8LmT1vR5nB0xY7cH2sD"},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, reply{fixture: c.fixture}, reply{fixture: c.final})
			var m agent.Model = newTestOpenAI(t, f, Config{Model: "gpt-4.1-mini", APIKey: canaryKey})
			anthropicWire := strings.HasPrefix(c.fixture, "anthropic/")
			if anthropicWire {
				m = newTestAnthropic(t, f, Config{})
			}
			patch := &fileTool{name: "apply_patch", files: calcFiles}
			res, _ := runLoop(t, m, agent.Limits{}, nil, patch)
			if patch.runs.Load() != 0 {
				t.Fatalf("the cut call ran %d times", patch.runs.Load())
			}
			if res.StopReason != "final_message" || len(f.requests()) != 2 {
				t.Fatalf("stop %s after %d requests: %s", res.StopReason, len(f.requests()), res.Detail)
			}
			// The second request answers the cut call with an error that
			// says why and what to do.
			var answer string
			for _, m := range requestMessages(f.requests()[1].body) {
				if !anthropicWire && m["role"] == "tool" && m["tool_call_id"] == c.id {
					answer, _ = m["content"].(string)
				}
				for _, b := range list(m["content"]) {
					if obj(b)["type"] == "tool_result" && obj(b)["tool_use_id"] == c.id && obj(b)["is_error"] == true {
						answer = obj(list(obj(b)["content"])[0])["text"].(string)
					}
				}
			}
			for _, w := range []string{"cut off at the output token limit", "not run", "smaller patches"} {
				if !strings.Contains(answer, w) {
					t.Errorf("the answer to the cut call %q lacks %q", answer, w)
				}
			}
		})
	}
}

// TestMissingUsageIsEstimated: a server that reports no usage (Ollama and
// vLLM often send none, some servers send zeros) is not a free model: the
// run estimates tokens from the bytes sent and received, says so, and the
// token and dollar budgets still trip.
func TestMissingUsageIsEstimated(t *testing.T) {
	t.Parallel()
	priced := func(_ string, u agent.Usage) (float64, bool) { return float64(u.Total()) * 1e-5, true }
	for _, c := range []struct {
		name, fixture string
		lim           agent.Limits
		cost          agent.CostFunc
		want          agent.StopReason
	}{
		{"no usage/token budget", "openai/no_usage_tool_call.json", agent.Limits{MaxTokens: 100}, nil, "token_budget"},
		{"no usage/cost budget", "openai/no_usage_tool_call.json", agent.Limits{MaxCostUSD: 0.001}, priced, "cost_budget"},
		{"zero usage/token budget", "openai/zero_usage_tool_call.json", agent.Limits{MaxTokens: 100}, nil, "token_budget"},
		{"anthropic zero usage/token budget", "anthropic/no_usage_tool_use.json", agent.Limits{MaxTokens: 100}, nil, "token_budget"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, reply{fixture: c.fixture}, reply{fixture: c.fixture}, reply{fixture: c.fixture})
			var m agent.Model = newTestOpenAI(t, f, Config{Model: "qwen2.5-coder:7b"})
			if strings.HasPrefix(c.fixture, "anthropic/") {
				m = newTestAnthropic(t, f, Config{})
			}
			tool := &fileTool{name: "read_file", files: calcFiles}
			res, rec := runLoop(t, m, c.lim, c.cost, tool)
			if res.StopReason != c.want || res.Steps != 1 {
				t.Fatalf("stop %s after %d steps (usage %+v): %s", res.StopReason, res.Steps, res.Usage, res.Detail)
			}
			// About the request's size in tokens: more than the tool specs
			// alone, never a zero.
			if res.Usage.InputTokens < 50 || res.Usage.OutputTokens < 10 {
				t.Errorf("estimated usage %+v", res.Usage)
			}
			if !strings.Contains(res.Detail, "usage not reported by the server") {
				t.Errorf("detail %q does not say the usage is an estimate", res.Detail)
			}
			if !strings.Contains(eventsJSON(t, rec), `"estimated":true`) {
				t.Error("the trace does not mark the usage as estimated")
			}
		})
	}
}

// TestPauseTurnContinues: Anthropic's pause_turn is no final answer: the
// paused content goes back as the last assistant message, verbatim, and
// the model is sampled again.
func TestPauseTurnContinues(t *testing.T) {
	t.Parallel()
	paused := list(fixtureJSON(t, "anthropic/pause_turn.json")["content"])
	f := newFakeAPI(t, reply{fixture: "anthropic/pause_turn.json"}, reply{fixture: "anthropic/final_text.json"})
	m := newTestAnthropic(t, f, Config{})
	res, _ := runLoop(t, m, agent.Limits{}, nil, &fileTool{name: "read_file", files: calcFiles})
	if res.StopReason != "final_message" || res.FinalMessage != "Summary\nFixed Add.\nAssumptions\nnone" {
		t.Fatalf("stop %s, final %q: %s", res.StopReason, res.FinalMessage, res.Detail)
	}
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs := requestMessages(reqs[1].body)
	last := msgs[len(msgs)-1]
	sent := list(last["content"])
	if last["role"] != "assistant" || len(sent) != len(paused) {
		t.Fatalf("last message %v, want the paused turn's %d blocks", last, len(paused))
	}
	for i := range paused {
		if !subset(obj(sent[i]), obj(paused[i])) {
			t.Errorf("block %d went back as %v, want %v", i, sent[i], paused[i])
		}
	}
}
