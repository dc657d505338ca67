package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/org/mini-agent/agent"
)

// Anthropic defaults.
const (
	// DefaultAnthropicMaxTokens is max_tokens (required by the Messages
	// API) when Request.MaxOutputTokens is zero.
	DefaultAnthropicMaxTokens = 8192
	// rawArgumentsKey names the field that carries recorded tool-call
	// arguments that were not a JSON object (see anthropicToolInput).
	rawArgumentsKey = "_raw"
)

// Anthropic is an agent.Model speaking the Messages API through the
// official SDK.
//
// Prompt caching: the stable prefix is marked with cache_control
// "ephemeral" twice, on the last tool (tools come first in the prompt) and
// on the system block; a third breakpoint on the last block of the last
// message lets the next turn reuse the whole append-only history.
type Anthropic struct {
	client anthropic.Client
	model  string
	apiKey string // only to redact it from errors
	retry  *retrier
}

// NewAnthropic returns the Anthropic adapter for cfg. cfg.APIKey defaults
// from ANTHROPIC_API_KEY and cfg.BaseURL from ANTHROPIC_BASE_URL (read
// through cfg.Getenv; the SDK's own environment lookup is disabled). A key
// is required; the model defaults to DefaultAnthropicModel.
func NewAnthropic(cfg Config) (*Anthropic, error) {
	getenv := cfg.getenv()
	key := firstNonEmpty(cfg.APIKey, getenv("ANTHROPIC_API_KEY"))
	if key == "" {
		return nil, fmt.Errorf("%w: anthropic: no API key (set ANTHROPIC_API_KEY)", ErrConfig)
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(key),
		option.WithMaxRetries(0), // retries are ours: see retrier
		option.WithMiddleware(capResponse(MaxResponseBytes)),
	}
	if base := firstNonEmpty(cfg.BaseURL, getenv("ANTHROPIC_BASE_URL")); base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: anthropic base url %q is not an http(s) url", ErrConfig, redact(base, key))
		}
		opts = append(opts, option.WithBaseURL(base))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Anthropic{
		client: anthropic.NewClient(opts...),
		model:  firstNonEmpty(cfg.Model, DefaultAnthropicModel),
		apiKey: key,
		retry:  newRetrier(cfg.MaxRetries),
	}, nil
}

// Sample implements agent.Model with one Messages call (retried on
// transient failures). A "prompt is too long" refusal wraps
// agent.ErrContextLength.
func (m *Anthropic) Sample(ctx context.Context, req agent.Request) (agent.Output, error) {
	params, err := m.params(req)
	if err != nil {
		return agent.Output{}, fmt.Errorf("anthropic: %w", err)
	}
	resp, err := send(ctx, m.retry, "anthropic messages", m.apiKey, func(ctx context.Context) (*anthropic.Message, error) {
		return m.client.Messages.New(ctx, params)
	}, m.apiError)
	if err != nil {
		return agent.Output{}, err
	}
	out := anthropicOutput(resp)
	if anthropicUsageMissing(resp) {
		// A compatible server that counts nothing: a zero would switch
		// the budgets off, so the bytes on the wire stand in.
		sent, _ := json.Marshal(params)
		out.Usage = estimatedUsage(len(sent), len(resp.RawJSON()))
	}
	return out, nil
}

// anthropicUsageMissing reports whether the server counted nothing: no
// usage object, or one whose counts are all zero.
func anthropicUsageMissing(resp *anthropic.Message) bool {
	u := resp.Usage
	return !resp.JSON.Usage.Valid() ||
		(u.InputTokens == 0 && u.OutputTokens == 0 && u.CacheReadInputTokens == 0 && u.CacheCreationInputTokens == 0)
}

func (m *Anthropic) apiError(err error) error {
	sdkErr, ok := errors.AsType[*anthropic.Error](err)
	if !ok {
		return err
	}
	return statusError("anthropic", sdkErr.Response, sdkErr.StatusCode, m.apiKey, isAnthropicContextLength)
}

// isAnthropicContextLength recognises "prompt is too long: N tokens > M
// maximum" and "input length and max_tokens exceed context limit".
func isAnthropicContextLength(e *APIError) bool {
	if e.StatusCode != 400 && e.StatusCode != 413 {
		return false
	}
	msg := strings.ToLower(e.Message)
	return strings.Contains(msg, "prompt is too long") || strings.Contains(msg, "exceed context limit")
}

// params maps an agent.Request onto a Messages request.
func (m *Anthropic) params(req agent.Request) (anthropic.MessageNewParams, error) {
	maxTokens := int64(DefaultAnthropicMaxTokens)
	if req.MaxOutputTokens > 0 {
		maxTokens = int64(req.MaxOutputTokens)
	}
	p := anthropic.MessageNewParams{Model: m.model, MaxTokens: maxTokens}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{
			Text:         req.System,
			CacheControl: anthropic.NewCacheControlEphemeralParam(),
		}}
	}
	for _, spec := range req.Tools {
		var schema anthropic.ToolInputSchemaParam
		raw := spec.InputSchema
		if len(raw) == 0 {
			raw = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		if !jsonObject(raw) {
			return p, fmt.Errorf("tool %q: input schema is not a JSON object", spec.Name)
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			return p, fmt.Errorf("tool %q: input schema: %w", spec.Name, err)
		}
		tool := anthropic.ToolParam{Name: spec.Name, InputSchema: schema}
		if spec.Description != "" {
			tool.Description = anthropic.String(spec.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if n := len(p.Tools); n > 0 {
		p.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	msgs, err := anthropicMessages(req.Messages)
	if err != nil {
		return p, err
	}
	p.Messages = msgs
	return p, nil
}

// anthropicMessages maps the history. The Messages API wants alternating
// user/assistant turns, so consecutive same-role entries are merged: a run
// of tool results (and any user text after them) is one user message.
func anthropicMessages(history []agent.Message) ([]anthropic.MessageParam, error) {
	var out []anthropic.MessageParam
	add := func(role anthropic.MessageParamRole, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for i, msg := range history {
		switch msg.Role {
		case agent.RoleUser:
			if msg.Text != "" { // empty text blocks are rejected by the API
				add(anthropic.MessageParamRoleUser, anthropic.NewTextBlock(msg.Text))
			}
		case agent.RoleAssistant:
			blocks, err := anthropicAssistantBlocks(msg)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			add(anthropic.MessageParamRoleAssistant, blocks...)
		case agent.RoleTool:
			res := anthropic.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
			if msg.Text != "" {
				res.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: msg.Text}}}
			}
			if msg.IsError {
				res.IsError = anthropic.Bool(true)
			}
			add(anthropic.MessageParamRoleUser, anthropic.ContentBlockParamUnion{OfToolResult: &res})
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, msg.Role)
		}
	}
	if n := len(out); n > 0 {
		markCache(&out[n-1].Content[len(out[n-1].Content)-1])
	}
	return out, nil
}

// markCache puts a cache breakpoint on a content block.
func markCache(b *anthropic.ContentBlockParamUnion) {
	cc := anthropic.NewCacheControlEphemeralParam()
	switch {
	case b.OfText != nil:
		b.OfText.CacheControl = cc
	case b.OfToolUse != nil:
		b.OfToolUse.CacheControl = cc
	case b.OfToolResult != nil:
		b.OfToolResult.CacheControl = cc
	}
}

// anthropicToolInput returns a recorded tool call's arguments as the JSON
// object a tool_use block requires. Arguments that are not a JSON object
// (the model emitted malformed JSON, which the registry already reported
// back) are sent wrapped as {"_raw": "<the text>"}, so the history stays
// valid and the model can still see what it sent. Empty arguments are {}.
func anthropicToolInput(args json.RawMessage) any {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}")
	}
	if jsonObject(args) {
		return args
	}
	return map[string]string{rawArgumentsKey: string(args)}
}

// jsonObject reports whether raw is a valid JSON object.
func jsonObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// anthropicOutput maps a Messages response onto agent.Output: text blocks
// joined, tool_use blocks as tool calls; thinking blocks (and any other
// block the loop does not model) are never text, they are kept in the
// turn's ProviderState to go back verbatim. The stop reason is data:
// refusal is Refused, pause_turn Paused, max_tokens (and a full context
// window) Truncated, with or without a tool_use cut in the middle.
func anthropicOutput(resp *anthropic.Message) agent.Output {
	out := agent.Output{Model: resp.Model, Usage: anthropicUsage(resp.Usage),
		Truncated: resp.StopReason == anthropic.StopReasonMaxTokens || resp.StopReason == anthropic.StopReasonModelContextWindowExceeded,
		Paused:    resp.StopReason == anthropic.StopReasonPauseTurn,
		Provider:  anthropicReplayState(resp.Content)}
	var text []string
	for _, b := range resp.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			out.ToolCalls = append(out.ToolCalls, agent.ToolCall{
				ID:        b.ID,
				Name:      b.Name,
				Arguments: rawArguments(string(b.Input)),
			})
		}
	}
	out.Message = strings.Join(text, "\n")
	if resp.StopReason == anthropic.StopReasonRefusal {
		out.Refused, out.Message = true, anthropicRefusal(resp, out.Message)
	}
	return out
}

// anthropicUsage maps usage. Anthropic's input_tokens excludes cache reads
// and writes; agent.Usage counts them as part of the input.
func anthropicUsage(u anthropic.Usage) agent.Usage {
	return agent.Usage{
		InputTokens:      u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}
