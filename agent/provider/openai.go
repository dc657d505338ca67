package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/org/mini-agent/agent"
)

// DefaultOpenAIBaseURL is the official OpenAI endpoint, used when neither
// Config.BaseURL nor OPENAI_BASE_URL is set.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1/"

// OpenAI is an agent.Model speaking the Chat Completions API through the
// official SDK. It works with any OpenAI-compatible base URL: OpenAI, Azure
// OpenAI's /openai/v1/ endpoint, vLLM, Ollama, llama.cpp server,
// OpenRouter, DeepSeek.
type OpenAI struct {
	client openai.Client
	model  string
	apiKey string // only to redact it from errors
	// maxCompletionTokens: the official API (and Azure) want
	// max_completion_tokens; many compatible servers only know max_tokens.
	maxCompletionTokens bool
	retry               *retrier
	// autoID numbers the tool calls a server sent without an id, so the
	// generated ids (call_1, call_2...) stay unique over the whole run.
	autoID atomic.Int64
}

// NewOpenAI returns the OpenAI-compatible adapter for cfg. cfg.APIKey and
// cfg.BaseURL default from OPENAI_API_KEY and OPENAI_BASE_URL (read through
// cfg.Getenv). A key is required for the official endpoint only: local
// servers (Ollama, llama.cpp, vLLM) usually need none. The model defaults to
// DefaultOpenAIModel on the official endpoint and is required elsewhere.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	getenv := cfg.getenv()
	key := firstNonEmpty(cfg.APIKey, getenv("OPENAI_API_KEY"))
	base := firstNonEmpty(cfg.BaseURL, getenv("OPENAI_BASE_URL"))
	official := base == ""
	if official {
		base = DefaultOpenAIBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: openai base url %q is not an http(s) url", ErrConfig, redact(base, key))
	}
	if u.Host == "api.openai.com" {
		official = true
	}
	model := cfg.Model
	if model == "" {
		if !official {
			return nil, fmt.Errorf("%w: openai: a model name is required with a custom base url (%s)", ErrConfig, u.Host)
		}
		model = DefaultOpenAIModel
	}
	if key == "" && official {
		return nil, fmt.Errorf("%w: openai: no API key (set OPENAI_API_KEY)", ErrConfig)
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithMaxRetries(0), // retries are ours: see retrier
		option.WithMiddleware(capResponse(MaxResponseBytes)),
		option.WithAPIKey(key),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &OpenAI{
		client:              openai.NewClient(opts...),
		model:               model,
		apiKey:              key,
		maxCompletionTokens: official || strings.HasSuffix(u.Hostname(), ".azure.com"),
		retry:               newRetrier(cfg.MaxRetries),
	}, nil
}

// Sample implements agent.Model with one Chat Completions call (retried on
// transient failures). A context-length refusal wraps agent.ErrContextLength.
func (m *OpenAI) Sample(ctx context.Context, req agent.Request) (agent.Output, error) {
	params, err := m.params(req)
	if err != nil {
		return agent.Output{}, fmt.Errorf("openai: %w", err)
	}
	resp, err := send(ctx, m.retry, "openai chat completion", m.apiKey, func(ctx context.Context) (*openai.ChatCompletion, error) {
		return m.client.Chat.Completions.New(ctx, params)
	}, m.apiError)
	if err != nil {
		return agent.Output{}, err
	}
	out, err := openAIOutput(resp, &m.autoID)
	if err != nil {
		return agent.Output{}, fmt.Errorf("openai chat completion: %w", err)
	}
	if openAIUsageMissing(resp) {
		// Ollama and vLLM often count nothing: a zero would switch the
		// budgets off, so the bytes on the wire stand in.
		sent, _ := json.Marshal(params)
		out.Usage = estimatedUsage(len(sent), len(resp.RawJSON()))
	}
	return out, nil
}

// openAIUsageMissing reports whether the server counted nothing: no usage
// object, or one whose counts are all zero (no real call reads no token).
func openAIUsageMissing(resp *openai.ChatCompletion) bool {
	return !resp.JSON.Usage.Valid() || (resp.Usage.PromptTokens == 0 && resp.Usage.CompletionTokens == 0)
}

// apiError converts an SDK status error into an APIError (wrapping
// agent.ErrContextLength when that is what it says); other errors pass.
func (m *OpenAI) apiError(err error) error {
	sdkErr, ok := errors.AsType[*openai.Error](err)
	if !ok {
		return err
	}
	return statusError("openai", sdkErr.Response, sdkErr.StatusCode, m.apiKey, isOpenAIContextLength)
}

// isOpenAIContextLength recognises the context-window refusals of OpenAI
// (code context_length_exceeded), vLLM/DeepSeek/OpenRouter ("maximum
// context length") and llama.cpp (type exceed_context_size_error).
func isOpenAIContextLength(e *APIError) bool {
	if e.StatusCode != 400 && e.StatusCode != 413 {
		return false
	}
	if e.Code == "context_length_exceeded" || e.Type == "exceed_context_size_error" {
		return true
	}
	msg := strings.ToLower(e.Message)
	for _, s := range []string{"maximum context length", "context_length_exceeded", "exceeds the available context size", "context window"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// params maps an agent.Request onto a Chat Completions request.
func (m *OpenAI) params(req agent.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: m.model}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case agent.RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(msg.Text))
		case agent.RoleAssistant:
			a, err := openAIAssistant(msg)
			if err != nil {
				return p, fmt.Errorf("message %d: %w", i, err)
			}
			p.Messages = append(p.Messages, a)
		case agent.RoleTool:
			p.Messages = append(p.Messages, openai.ToolMessage(msg.Text, msg.ToolCallID))
		default:
			return p, fmt.Errorf("message %d: unknown role %q", i, msg.Role)
		}
	}
	for _, spec := range req.Tools {
		schema, err := schemaMap(spec)
		if err != nil {
			return p, err
		}
		fn := openai.FunctionDefinitionParam{Name: spec.Name, Parameters: schema}
		if spec.Description != "" {
			fn.Description = openai.String(spec.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if req.MaxOutputTokens > 0 {
		if m.maxCompletionTokens {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxOutputTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxOutputTokens))
		}
	}
	return p, nil
}

// openAIAssistant maps an assistant turn; tool-call arguments go out as the
// exact text the model produced, even when it is not valid JSON, and the
// fields the server asked back (reasoning_content, thought signatures)
// exactly as it sent them.
func openAIAssistant(msg agent.Message) (openai.ChatCompletionMessageParamUnion, error) {
	a := openai.ChatCompletionAssistantMessageParam{}
	if msg.Text != "" || len(msg.ToolCalls) == 0 {
		a.Content.OfString = openai.String(msg.Text)
	}
	for _, c := range msg.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: c.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      c.Name,
					Arguments: string(c.Arguments),
				},
			},
		})
	}
	if err := applyOpenAIState(msg.Provider, &a); err != nil {
		return openai.ChatCompletionMessageParamUnion{}, err
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
}

// schemaMap decodes a tool's JSON Schema; an absent schema means "no
// arguments".
func schemaMap(spec agent.ToolSpec) (map[string]any, error) {
	if len(spec.InputSchema) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(spec.InputSchema, &m); err != nil || m == nil {
		return nil, fmt.Errorf("tool %q: input schema is not a JSON object", spec.Name)
	}
	return m, nil
}

// openAIOutput maps the first choice of a completion onto agent.Output.
// A refusal (the refusal field) or a filtered reply (finish_reason
// content_filter) is Refused; finish_reason length is Truncated, with or
// without tool calls.
func openAIOutput(resp *openai.ChatCompletion, autoID *atomic.Int64) (agent.Output, error) {
	if len(resp.Choices) == 0 {
		return agent.Output{}, errors.New("response has no choices")
	}
	choice := resp.Choices[0]
	msg := choice.Message
	out := agent.Output{Message: msg.Content, Model: resp.Model, Usage: openAIUsage(resp.Usage),
		Truncated: choice.FinishReason == "length"}
	switch {
	case strings.TrimSpace(msg.Refusal) != "":
		out.Refused, out.Message = true, msg.Refusal
	case choice.FinishReason == "content_filter":
		out.Refused, out.Message = true, contentFilterRefusal(choice)
	}
	var kept []openai.ChatCompletionMessageFunctionToolCall
	for _, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are never offered
		}
		kept = append(kept, tc.AsFunction())
		id := tc.ID
		if id == "" {
			// Some local servers omit ids; the tool result must still pair.
			id = fmt.Sprintf("call_%d", autoID.Add(1))
		}
		out.ToolCalls = append(out.ToolCalls, agent.ToolCall{
			ID:        id,
			Name:      tc.Function.Name,
			Arguments: rawArguments(tc.Function.Arguments),
		})
	}
	out.Provider = openAIReplayState(msg, kept)
	return out, nil
}

// rawArguments keeps the model's argument text byte for byte (malformed
// JSON included: the registry reports it to the model). Only empty text,
// which some servers send for argument-less calls, becomes {}.
func rawArguments(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

// openAIUsage maps token usage. prompt_tokens already includes cached
// tokens, as agent.Usage wants. DeepSeek reports its cache hits as
// prompt_cache_hit_tokens instead of cached_tokens.
func openAIUsage(u openai.CompletionUsage) agent.Usage {
	out := agent.Usage{
		InputTokens:      u.PromptTokens,
		OutputTokens:     u.CompletionTokens,
		CacheReadTokens:  u.PromptTokensDetails.CachedTokens,
		CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
	}
	if out.CacheReadTokens == 0 {
		if f, ok := u.JSON.ExtraFields["prompt_cache_hit_tokens"]; ok {
			var n int64
			if json.Unmarshal([]byte(f.Raw()), &n) == nil && n > 0 {
				out.CacheReadTokens = n
			}
		}
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
