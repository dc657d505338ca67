package agent

import (
	"encoding/json"
	"errors"
)

// ErrContextLength is wrapped by model adapters when the provider refuses a
// request because the prompt exceeds the model's context window. The loop
// reacts by eliding old tool outputs and trying once more.
var ErrContextLength = errors.New("model context length exceeded")

// ErrRefused is wrapped by model adapters when the provider refuses a
// request as a whole for its content (Azure OpenAI answers 400 with code
// content_filter when the prompt trips its filter). The run ends with
// StopRefused, the error's text as the refusal; it is not retried.
var ErrRefused = errors.New("the provider's content filter refused the request")

// Error codes carried by error Results.
const (
	CodeInvalidArgument = "INVALID_ARGUMENT"
	CodeNotFound        = "NOT_FOUND"
	CodeDenied          = "DENIED"
	CodePatchRejected   = "PATCH_REJECTED"
	CodeFailed          = "FAILED"
	CodeTimeout         = "TIMEOUT"
	// CodeOutputTruncated answers a call of a reply cut at the output
	// token limit: it was not run.
	CodeOutputTruncated = "OUTPUT_TRUNCATED"
)

// ErrorResult builds the structured error result the model reads:
// {"status":"error","code":...,"message":...,"retryable":...}.
func ErrorResult(code, message string, retryable bool) Result {
	b, _ := json.Marshal(struct {
		Status    string `json:"status"`
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	}{"error", code, message, retryable})
	return Result{Text: string(b), IsError: true, Code: code}
}
