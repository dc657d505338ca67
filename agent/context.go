package agent

import (
	"fmt"
)

// BytesPerToken approximates tokens from bytes: to budget the window
// (providers report real counts afterwards, but elision must decide
// before) and, when a server reports no usage, to estimate it.
const BytesPerToken = 4

// keepRecentTools is how many of the newest tool outputs are never elided:
// the model is usually acting on them.
const keepRecentTools = 2

func approxTokens(req Request) int {
	n := len(req.System)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	for _, m := range req.Messages {
		n += len(m.Text) + 16
		if m.Provider != nil {
			n += len(m.Provider.Data) // reasoning and signatures go back too
		}
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments) + 16
		}
	}
	return n / BytesPerToken
}

// elide shrinks the history in place when its estimate exceeds limit tokens:
// the oldest tool outputs are replaced, one by one in order, by a note of
// what was elided. It is deterministic (same history, same result) and
// keeps the newest keep outputs. It returns how many outputs it elided.
func elide(history []Message, system string, tools []ToolSpec, limit, keep int) int {
	req := Request{System: system, Messages: history, Tools: tools}
	total := approxTokens(req)
	if limit <= 0 || total <= limit {
		return 0
	}
	var toolIdx []int
	for i, m := range history {
		if m.Role == RoleTool && !isElided(m.Text) {
			toolIdx = append(toolIdx, i)
		}
	}
	if len(toolIdx) <= keep {
		return 0
	}
	n := 0
	for _, i := range toolIdx[:len(toolIdx)-keep] {
		if total <= limit {
			break
		}
		m := &history[i]
		note := fmt.Sprintf("%s[elided to save context: %d bytes of %s output (call %s); call the tool again if you still need it]",
			elidedMark, len(m.Text), m.ToolName, m.ToolCallID)
		total -= (len(m.Text) - len(note)) / BytesPerToken
		m.Text = note
		n++
	}
	return n
}

const elidedMark = "\u2702 "

func isElided(s string) bool { return len(s) >= len(elidedMark) && s[:len(elidedMark)] == elidedMark }
