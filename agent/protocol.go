// Package agent owns the minimal coding-agent loop: the protocol types shared
// with model adapters and tools, the tool registry, the write policy, the
// event stream and the stop conditions. It knows nothing about GitHub and
// imports no concrete tool: tools and models are injected.
package agent

import (
	"context"
	"encoding/json"
	"time"
)

// Role says who produced a Message.
type Role string

// The three roles of the conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the append-only history.
//
// A user message carries Text. An assistant message carries Text, ToolCalls
// or both, and the Provider's own record of the turn. A tool message answers
// exactly one ToolCall: ToolCallID, ToolName, Text (what the model reads)
// and IsError.
type Message struct {
	Role       Role       `json:"role"`
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	IsError    bool       `json:"is_error,omitempty"`
	// Provider is what the adapter that sampled this assistant turn needs
	// sent back with it (see ProviderState). It is never serialised: not
	// in a trace, a bundle or a report.
	Provider *ProviderState `json:"-"`
}

// ProviderState is a model adapter's own record of an assistant turn: the
// provider-specific parts a server requires back verbatim in later
// requests and that are no text for the model to read — DeepSeek's
// reasoning_content, Gemini's thought signatures, Anthropic's thinking and
// redacted_thinking blocks with their signatures, the server-tool blocks
// of a paused turn. The loop keeps it with the turn, untouched and
// unredacted (a signature covers the exact bytes; the model produced it
// from the redacted history, so it holds no secret the harness knows), and
// never writes it anywhere. Only the adapter named by Adapter reads Data.
type ProviderState struct {
	Adapter string
	Data    json.RawMessage
}

// ToolCall is one tool invocation proposed by the model. Arguments is the
// model's raw argument text; it is untrusted and may not even be valid JSON,
// so it must be validated before use (the Registry does).
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// MarshalJSON keeps a trace writable when the model sent arguments that are
// not valid JSON: they are then recorded as a JSON string.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	type plain struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage("null")
	} else if !json.Valid(args) {
		quoted, _ := json.Marshal(string(args))
		args = quoted
	}
	return json.Marshal(plain{ID: c.ID, Name: c.Name, Arguments: args})
}

// Usage counts tokens for one model call or, summed, for a run.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// Estimated is set when the server reported no usage (or only zeros)
	// for a call, so its counts are the adapter's estimate from the bytes
	// sent and received (EstimateTokens); on a sum, when any call's were.
	// A missing count is never a zero: budgets must still hold.
	Estimated bool `json:"estimated,omitempty"`
}

// Add returns the element-wise sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		Estimated:        u.Estimated || o.Estimated,
	}
}

// UsageNotReported is how a run says its token counts are estimates.
const UsageNotReported = "usage not reported by the server; tokens estimated from the bytes sent and received"

// EstimateTokens is the token estimate for n bytes of request or response
// (JSON as sent on the wire): one token per BytesPerToken bytes, rounded
// up. Tokenizers give about 3.5-4.5 bytes a token on English and code; the
// JSON framing and escaping counted here make the estimate err high, so a
// budget trips early rather than late.
func EstimateTokens(n int) int64 {
	if n <= 0 {
		return 0
	}
	return int64((n + BytesPerToken - 1) / BytesPerToken)
}

// Total is input plus output tokens (cache reads and writes are part of input).
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// ToolSpec describes a tool to the model. InputSchema is a JSON Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Request is what the loop asks a Model for: the system instructions, the
// whole history (append-only, so the provider's prompt cache keeps hitting)
// and the tools the model may call.
type Request struct {
	System          string     `json:"system"`
	Messages        []Message  `json:"messages"`
	Tools           []ToolSpec `json:"tools"`
	MaxOutputTokens int        `json:"max_output_tokens,omitempty"`
}

// Output is one model turn: either a final message (no ToolCalls) or tool
// calls (Message may then hold accompanying text), plus the turn's usage.
type Output struct {
	Message   string     `json:"message,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Usage     Usage      `json:"usage"`
	// Model is the model name the provider reports, when it reports one.
	Model string `json:"model,omitempty"`
	// Truncated is set when the provider cut the turn at its output token
	// limit: a "final message" that was cut off is no final message, and a
	// tool call in a cut reply is never run (its arguments may be cut).
	Truncated bool `json:"truncated,omitempty"`
	// Refused is set when the model declined (Anthropic stop_reason
	// "refusal", a Chat Completions refusal) or the provider's filter
	// blocked the reply (finish_reason "content_filter"): the run ends
	// with StopRefused. Message then says what the model or the provider
	// said, or which signal it was.
	Refused bool `json:"refused,omitempty"`
	// Paused is set when the provider paused a long turn (Anthropic
	// stop_reason "pause_turn"): the turn is not over, the loop sends it
	// back as it is and samples again.
	Paused bool `json:"paused,omitempty"`
	// Provider is the adapter's record of the turn, kept on the assistant
	// message in the history (see ProviderState).
	Provider *ProviderState `json:"-"`
}

// Model samples one assistant turn. Adapters retry transient failures
// (429, 5xx) themselves; an error returned here ends the run with stop
// reason model_error, unless it wraps ErrContextLength.
type Model interface {
	Sample(ctx context.Context, req Request) (Output, error)
}

// Result is what a tool returns to the model.
//
// A bad call (invalid arguments, a refused path, a failed command) is a Result
// with IsError set: the model reads Text and the loop continues. Only an
// infrastructure failure (cancelled context, disk error) is a Go error.
type Result struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error,omitempty"`
	// Code classifies an error result: INVALID_ARGUMENT, NOT_FOUND, DENIED,
	// PATCH_REJECTED, FAILED, TIMEOUT... Empty for a success.
	Code string `json:"code,omitempty"`
}

// Tool is one capability offered to the model.
type Tool interface {
	Spec() ToolSpec
	// Mutates reports whether the tool can change the workspace; mutating
	// calls pass the write policy and never run concurrently.
	Mutates() bool
	Execute(ctx context.Context, args json.RawMessage) (Result, error)
}

// PathToucher is implemented by mutating tools that can say, before running,
// which workspace-relative paths a call would write (create, modify, delete,
// rename source and target). The write policy checks them.
type PathToucher interface {
	TouchedPaths(args json.RawMessage) ([]string, error)
}

// Event is one entry of the event stream (the trace).
type Event struct {
	Type EventType      `json:"type"`
	Time time.Time      `json:"time"`
	Data map[string]any `json:"data,omitempty"`
}

// EventType names an event in the trace ("tool.end"); the JSON is the
// plain string.
type EventType string

// Event types, in the order a run emits them.
const (
	EventTurnStart     EventType = "turn.start"
	EventModelRequest  EventType = "model.request"
	EventModelResponse EventType = "model.response"
	EventToolStart     EventType = "tool.start"
	EventToolEnd       EventType = "tool.end"
	EventMessage       EventType = "message"
	EventTurnEnd       EventType = "turn.end"
)

// EventSink receives events. Emit must be safe for concurrent use and must
// not block the loop for long.
type EventSink interface {
	Emit(Event)
}
