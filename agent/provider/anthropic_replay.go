package provider

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/org/mini-agent/agent"
)

// anthropicAdapter names the Anthropic adapter's agent.ProviderState.
const anthropicAdapter = "anthropic"

// anthropicState is the Anthropic adapter's ProviderState data: the turn's
// content blocks in their order. A block the loop does not model (thinking
// and redacted_thinking with their signatures, a paused turn's server
// tool blocks) is kept as the raw JSON the API sent; text and tool_use
// blocks are only markers, filled from the history's message, so what
// goes back is what the loop redacted and recorded, never the raw text.
type anthropicState struct {
	Blocks []anthropicSlot `json:"blocks"`
}

// anthropicSlot is one block of a turn: Raw, or a marker for the turn's
// text (Text) or for its ToolUse-th tool call.
type anthropicSlot struct {
	Raw     json.RawMessage `json:"raw,omitempty"`
	Text    bool            `json:"text,omitempty"`
	ToolUse *int            `json:"tool_use,omitempty"`
}

// anthropicReplayState records a response's blocks when any is one the
// loop does not model; nil otherwise (plain text and tool_use turns need
// nothing more than the history holds).
func anthropicReplayState(content []anthropic.ContentBlockUnion) *agent.ProviderState {
	var st anthropicState
	opaque, calls := false, 0
	for _, b := range content {
		switch b.Type {
		case "text":
			st.Blocks = append(st.Blocks, anthropicSlot{Text: true})
		case "tool_use":
			k := calls
			calls++
			st.Blocks = append(st.Blocks, anthropicSlot{ToolUse: &k})
		default:
			opaque = true
			st.Blocks = append(st.Blocks, anthropicSlot{Raw: json.RawMessage(b.RawJSON())})
		}
	}
	if !opaque {
		return nil
	}
	data, err := json.Marshal(st)
	if err != nil {
		return nil
	}
	return &agent.ProviderState{Adapter: anthropicAdapter, Data: data}
}

// anthropicAssistantBlocks maps an assistant turn: its recorded blocks in
// their order (each raw one sent back through the SDK's ToParam, so a
// thinking block keeps its signature), the text and tool calls where the
// markers put them, anything left over after.
func anthropicAssistantBlocks(msg agent.Message) ([]anthropic.ContentBlockParamUnion, error) {
	var blocks []anthropic.ContentBlockParamUnion
	textDone := false
	used := make([]bool, len(msg.ToolCalls))
	text := func() {
		if !textDone && msg.Text != "" { // empty text blocks are rejected by the API
			blocks = append(blocks, anthropic.NewTextBlock(msg.Text))
		}
		textDone = true
	}
	call := func(k int) {
		c := msg.ToolCalls[k]
		blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, anthropicToolInput(c.Arguments), c.Name))
		used[k] = true
	}
	if ps := msg.Provider; ps != nil && ps.Adapter == anthropicAdapter {
		var st anthropicState
		if err := json.Unmarshal(ps.Data, &st); err != nil {
			return nil, fmt.Errorf("recorded assistant blocks: %w", err)
		}
		for _, s := range st.Blocks {
			switch {
			case len(s.Raw) > 0:
				var b anthropic.ContentBlockUnion
				if err := json.Unmarshal(s.Raw, &b); err != nil {
					return nil, fmt.Errorf("recorded assistant block: %w", err)
				}
				blocks = append(blocks, b.ToParam())
			case s.Text:
				text()
			case s.ToolUse != nil && *s.ToolUse >= 0 && *s.ToolUse < len(used) && !used[*s.ToolUse]:
				call(*s.ToolUse)
			}
		}
	}
	text()
	for k := range msg.ToolCalls {
		if !used[k] {
			call(k)
		}
	}
	return blocks, nil
}

// anthropicRefusal says what a refusal said: the turn's text, then the
// category and explanation of stop_details when the API gave them.
func anthropicRefusal(resp *anthropic.Message, text string) string {
	var parts []string
	if t := strings.TrimSpace(text); t != "" {
		parts = append(parts, t)
	}
	d := resp.StopDetails
	var detail []string
	if d.JSON.Category.Valid() && d.Category != "" {
		detail = append(detail, "category "+string(d.Category))
	}
	if d.JSON.Explanation.Valid() && strings.TrimSpace(d.Explanation) != "" {
		detail = append(detail, strings.TrimSpace(d.Explanation))
	}
	if len(detail) > 0 {
		parts = append(parts, "("+strings.Join(detail, ": ")+")")
	}
	if len(parts) == 0 {
		return "stop_reason refusal, no text"
	}
	return strings.Join(parts, " ")
}
