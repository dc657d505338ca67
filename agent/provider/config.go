// Package provider owns the model adapters behind agent.Model: the
// OpenAI-compatible Chat Completions adapter (official openai-go SDK, any
// base URL), the Anthropic Messages adapter (official anthropic-sdk-go) and
// the script provider that replays a JSONL trajectory for tests, the eval
// and the demo. It also holds their shared retry policy, the typed API
// error, and the price table used for cost budgets.
//
// Both network adapters switch the SDKs' own retries off and share one
// policy: 429, 408 and 5xx answers and transport errors are retried with
// exponential backoff or the server's Retry-After / retry-after-ms, at most
// 1+MaxRetries attempts, never past the context. A refusal because the
// prompt exceeds the context window wraps agent.ErrContextLength. Errors
// never contain the API key.
//
// Tool-call arguments are untrusted text and travel raw: what a model sent
// (even malformed JSON) is returned unchanged for the registry to judge, and
// replayed unchanged to OpenAI-compatible servers. The Anthropic API needs
// a JSON object as tool_use input, so recorded arguments that are not one
// are replayed as {"_raw": "<the text>"}.
package provider

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/org/mini-agent/agent"
)

// Default model names, used when Config.Model is empty (for OpenAI only on
// the official endpoint: a custom base URL needs an explicit model).
const (
	DefaultOpenAIModel    = "gpt-4.1"
	DefaultAnthropicModel = "claude-sonnet-4-5"
)

// Provider names accepted by New.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderScript    = "script"
)

// Config selects and configures a model adapter.
type Config struct {
	// Provider is "openai", "anthropic" or "script" (case-insensitive).
	Provider string
	// Model is the provider's model name; see DefaultOpenAIModel and
	// DefaultAnthropicModel. Ignored by the script provider.
	Model string
	// BaseURL overrides the API endpoint (e.g. http://localhost:11434/v1
	// for Ollama). Defaults from OPENAI_BASE_URL / ANTHROPIC_BASE_URL.
	BaseURL string
	// APIKey defaults from OPENAI_API_KEY / ANTHROPIC_API_KEY.
	APIKey string
	// MaxRetries is the number of retries after the first attempt on
	// transient failures: 0 means DefaultMaxRetries, negative means none.
	MaxRetries int
	// HTTPClient replaces the SDK's default client (proxies, tests).
	HTTPClient *http.Client
	// ScriptPath or Script (not both) holds the script provider's JSONL.
	ScriptPath string
	Script     []byte
	// Getenv reads the environment defaults above; nil means os.Getenv.
	// Tests inject a map lookup instead of touching the process
	// environment.
	Getenv func(string) string
}

func (c Config) getenv() func(string) string {
	if c.Getenv != nil {
		return c.Getenv
	}
	return os.Getenv
}

// New returns the adapter cfg selects. Configuration mistakes (unknown
// provider, missing key or model, bad base URL, unreadable or malformed
// script) wrap ErrConfig.
func New(cfg Config) (agent.Model, error) {
	switch strings.ToLower(strings.TrimSpace(cfg.Provider)) {
	case ProviderOpenAI:
		return NewOpenAI(cfg)
	case ProviderAnthropic:
		return NewAnthropic(cfg)
	case ProviderScript:
		switch {
		case cfg.ScriptPath != "" && len(cfg.Script) > 0:
			return nil, fmt.Errorf("%w: script: give a script path or script bytes, not both", ErrConfig)
		case cfg.ScriptPath != "":
			return LoadScript(cfg.ScriptPath)
		case len(cfg.Script) > 0:
			return ParseScript(bytes.NewReader(cfg.Script))
		default:
			return nil, fmt.Errorf("%w: script: no script given", ErrConfig)
		}
	case "":
		return nil, fmt.Errorf("%w: no provider given (want openai, anthropic or script)", ErrConfig)
	default:
		return nil, fmt.Errorf("%w: unknown provider %q (want openai, anthropic or script)", ErrConfig, cfg.Provider)
	}
}
