package provider

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/org/mini-agent/agent"
)

// openAIAdapter names the OpenAI adapter's agent.ProviderState.
const openAIAdapter = "openai"

// Fields that OpenAI-compatible servers add to an assistant message, beyond
// the Chat Completions schema, and require back verbatim with the turn.
// Only these go back: a server may reject a field it does not know (Groq
// does), so nothing else a server sends is echoed.
var (
	// openAIMessageReplay, on the message:
	//   - reasoning_content: DeepSeek's thinking mode answers 400 ("Missing
	//     `reasoning_content` field in the assistant message at message
	//     index N") when a tool-calling turn comes back without it, even
	//     when it was ""; vLLM's and Qwen's reasoning parsers send it too;
	//   - reasoning_details: OpenRouter's reasoning blocks, with the
	//     signatures the upstream model checks;
	//   - extra_content: Gemini's compatible endpoint, {"google":
	//     {"thought_signature": ...}} on a text turn.
	openAIMessageReplay = []string{"reasoning_content", "reasoning_details", "extra_content"}
	// openAICallReplay, on each tool call: Gemini 3 signs a tool call with
	// extra_content.google.thought_signature (the first call of a
	// parallel set) and answers 400 unless the signature comes back.
	openAICallReplay = []string{"extra_content"}
)

// openAIState is the OpenAI adapter's ProviderState data: the replayed
// fields of the message, and of each tool call by its position among the
// turn's calls (the loop keeps their order; it may renumber their ids).
type openAIState struct {
	Message map[string]json.RawMessage   `json:"message,omitempty"`
	Calls   []map[string]json.RawMessage `json:"calls,omitempty"`
}

// extraRaw is the raw JSON of an extra field (the SDK marks a field it
// has no type for as not Valid, so presence is read from its raw text),
// or "" when it is absent or null.
func extraRaw(extra map[string]respjson.Field, name string) string {
	f, ok := extra[name]
	if !ok || f.Raw() == "" || f.Raw() == respjson.Null {
		return ""
	}
	return f.Raw()
}

// pickFields returns the named fields that are present and not null, as
// the raw JSON the server sent.
func pickFields(extra map[string]respjson.Field, names []string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for _, n := range names {
		raw := extraRaw(extra, n)
		if raw == "" {
			continue
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[n] = json.RawMessage(raw)
	}
	return out
}

// openAIReplayState records what a turn must send back, or nil when
// nothing (calls are the function calls kept, in order).
func openAIReplayState(msg openai.ChatCompletionMessage, calls []openai.ChatCompletionMessageFunctionToolCall) *agent.ProviderState {
	st := openAIState{Message: pickFields(msg.JSON.ExtraFields, openAIMessageReplay)}
	kept := st.Message != nil
	for _, c := range calls {
		f := pickFields(c.JSON.ExtraFields, openAICallReplay)
		kept = kept || f != nil
		st.Calls = append(st.Calls, f)
	}
	if !kept {
		return nil
	}
	data, err := json.Marshal(st)
	if err != nil {
		return nil
	}
	return &agent.ProviderState{Adapter: openAIAdapter, Data: data}
}

// applyOpenAIState puts a turn's recorded fields back on its message and
// calls, as the server sent them.
func applyOpenAIState(ps *agent.ProviderState, a *openai.ChatCompletionAssistantMessageParam) error {
	if ps == nil || ps.Adapter != openAIAdapter {
		return nil
	}
	var st openAIState
	if err := json.Unmarshal(ps.Data, &st); err != nil {
		return fmt.Errorf("recorded assistant fields: %w", err)
	}
	if len(st.Message) > 0 {
		a.SetExtraFields(rawFields(st.Message))
	}
	for i, f := range st.Calls {
		if len(f) > 0 && i < len(a.ToolCalls) && a.ToolCalls[i].OfFunction != nil {
			a.ToolCalls[i].OfFunction.SetExtraFields(rawFields(f))
		}
	}
	return nil
}

func rawFields(m map[string]json.RawMessage) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// contentFilterRefusal says what a content-filtered choice was blocked
// for: Azure names the categories (content_filter_results.*.filtered).
func contentFilterRefusal(choice openai.ChatCompletionChoice) string {
	var cats []string
	if raw := extraRaw(choice.JSON.ExtraFields, "content_filter_results"); raw != "" {
		var results map[string]struct {
			Filtered bool `json:"filtered"`
		}
		if json.Unmarshal([]byte(raw), &results) == nil {
			for name, r := range results {
				if r.Filtered {
					cats = append(cats, name)
				}
			}
		}
	}
	sort.Strings(cats)
	why := "the reply was blocked by the provider's content filter (finish_reason content_filter"
	if len(cats) > 0 {
		why += ": " + strings.Join(cats, ", ")
	}
	why += ")"
	if text := strings.TrimSpace(choice.Message.Content); text != "" {
		why = text + " — " + why
	}
	return why
}
