package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider/pricing"
)

// Limits on what an error keeps from a provider's error response.
const (
	maxErrorBodyBytes   = 64 << 10 // read at most this much of an error body
	maxErrorMessageLen  = 500      // keep errors short enough for a log line
	redactedPlaceholder = "[redacted]"
	retryAfterCeiling   = 24 * time.Hour // clamp for absurd Retry-After values
)

// ErrConfig is wrapped by every configuration error New and the adapter
// constructors return (unknown provider, missing key or model, unreadable
// script), so a CLI can map them to its usage/configuration exit code. It
// is pricing.ErrConfig.
var ErrConfig = pricing.ErrConfig

// ErrScriptExhausted is wrapped by the script provider when the model is
// asked for more turns than the script holds.
var ErrScriptExhausted = errors.New("script exhausted")

// APIError is a non-2xx answer from a model API. It holds only what the
// provider said (status, type, code, message); the request, its headers and
// the API key are never part of it.
type APIError struct {
	Provider   string // "openai" or "anthropic"
	StatusCode int
	Type       string // e.g. "invalid_request_error", "rate_limit_error"
	Code       string // e.g. "context_length_exceeded"
	Message    string
	// RetryAfter is the wait the server asked for (Retry-After or
	// retry-after-ms); HasRetryAfter says whether it asked at all.
	RetryAfter    time.Duration
	HasRetryAfter bool
}

// Error implements error.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s api: status %d", e.Provider, e.StatusCode)
	for _, s := range []string{e.Type, e.Code} {
		if s != "" {
			b.WriteString(" ")
			b.WriteString(s)
		}
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Retryable reports whether the status is worth another attempt: rate
// limits, request timeouts and server-side failures.
func (e *APIError) Retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests ||
		e.StatusCode == http.StatusRequestTimeout ||
		e.StatusCode >= http.StatusInternalServerError
}

// newAPIError builds an APIError from a provider's response. The body is
// parsed leniently because OpenAI-compatible servers disagree on the error
// shape: {"error":{"message","type","code"}} (OpenAI, Anthropic, llama.cpp,
// with code a string or a number), {"message","type","code"} at the top
// level (vLLM), {"error":"text"} (Ollama) and [{"error":{"code","message",
// "status"}}] (Gemini's compatible endpoint: an array, the status as the
// type) are all understood. Any
// occurrence of apiKey is redacted from the message.
func newAPIError(provider string, res *http.Response, apiKey string) *APIError {
	e := &APIError{Provider: provider}
	if res == nil {
		return e
	}
	e.StatusCode = res.StatusCode
	e.RetryAfter, e.HasRetryAfter = parseRetryAfter(res.Header, time.Now())
	var body []byte
	if res.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(res.Body, maxErrorBodyBytes))
		// Leave the body readable for anyone else holding the response.
		res.Body = io.NopCloser(bytes.NewReader(body))
	}
	e.Type, e.Code, e.Message = parseErrorBody(body)
	e.Message = shorten(redact(e.Message, apiKey), maxErrorMessageLen)
	e.Type = shorten(redact(e.Type, apiKey), maxErrorMessageLen)
	e.Code = shorten(redact(e.Code, apiKey), maxErrorMessageLen)
	return e
}

// errorFields is one candidate shape of an error object.
type errorFields struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Status  json.RawMessage `json:"status"` // Google's type (a string); Azure's HTTP status (a number)
}

func parseErrorBody(body []byte) (typ, code, msg string) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return "", "", ""
	}
	if body[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(body, &list) == nil && len(list) > 0 && bytes.HasPrefix(bytes.TrimSpace(list[0]), []byte("{")) {
			body = bytes.TrimSpace(list[0])
		}
	}
	var env struct {
		Error json.RawMessage `json:"error"`
		errorFields
	}
	if json.Unmarshal(body, &env) != nil {
		// Not JSON (an HTML page from a proxy, plain text): keep a prefix.
		return "", "", string(body)
	}
	f := env.errorFields
	if len(env.Error) > 0 && !bytes.Equal(env.Error, []byte("null")) {
		var s string
		if json.Unmarshal(env.Error, &s) == nil {
			return "", "", s
		}
		var inner errorFields
		if json.Unmarshal(env.Error, &inner) == nil {
			f = inner
		}
	}
	var status string
	if f.Type == "" && json.Unmarshal(f.Status, &status) == nil {
		f.Type = status
	}
	return f.Type, rawCode(f.Code), f.Message
}

// rawCode turns a JSON code that is a string or a number into text.
func rawCode(raw json.RawMessage) string {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// parseRetryAfter reads retry-after-ms (milliseconds, preferred because it
// is more precise) or Retry-After (seconds, or an HTTP date). Negative or
// unparsable values are ignored; huge ones are clamped to retryAfterCeiling
// (the retrier then refuses to wait that long).
func parseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if d, ok := parseDelay(h.Get("Retry-After-Ms"), time.Millisecond); ok {
		return d, true
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if d, ok := parseDelay(v, time.Second); ok {
		return d, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(0, t.Sub(now)), retryAfterCeiling), true
	}
	return 0, false
}

// parseDelay parses a non-negative decimal count of unit.
func parseDelay(v string, unit time.Duration) (time.Duration, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, false
	}
	if f*float64(unit) >= float64(retryAfterCeiling) {
		return retryAfterCeiling, true
	}
	return time.Duration(f * float64(unit)), true
}

// redact replaces every occurrence of secret in s.
func redact(s, secret string) string {
	if secret == "" || !strings.Contains(s, secret) {
		return s
	}
	return strings.ReplaceAll(s, secret, redactedPlaceholder)
}

// shorten cuts s to at most n bytes on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// redactedError hides a secret that leaked into an error's text (for
// example an API key in a transport error's URL) while keeping the chain
// for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr returns err unchanged unless its text contains secret.
func redactErr(err error, secret string) error {
	if err == nil || secret == "" {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, secret) {
		return err
	}
	return &redactedError{msg: redact(msg, secret), err: err}
}

// statusError builds the APIError for an SDK's status error, wrapping
// agent.ErrContextLength when isContextLength recognises the refusal.
func statusError(provider string, res *http.Response, status int, apiKey string, isContextLength func(*APIError) bool) error {
	apiErr := newAPIError(provider, res, apiKey)
	if apiErr.StatusCode == 0 {
		apiErr.StatusCode = status
	}
	if isContextLength(apiErr) {
		return fmt.Errorf("%w: %w", agent.ErrContextLength, apiErr)
	}
	if apiErr.StatusCode == http.StatusBadRequest && apiErr.Code == "content_filter" {
		// Azure OpenAI's filter refused the prompt: a refusal, not an outage.
		return fmt.Errorf("%w: %w", agent.ErrRefused, apiErr)
	}
	return apiErr
}
