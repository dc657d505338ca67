package agent

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// StopReason says why a run ended ("max_steps"); the JSON is the plain
// string.
type StopReason string

// Stop reasons recorded on turn.end and in RunResult.
const (
	StopFinalMessage StopReason = "final_message"
	StopMaxSteps     StopReason = "max_steps"
	StopTokenBudget  StopReason = "token_budget"
	StopCostBudget   StopReason = "cost_budget"
	StopDeadline     StopReason = "deadline"
	StopCancelled    StopReason = "cancelled"
	StopLoopDetected StopReason = "loop_detected"
	StopModelError   StopReason = "model_error"
	// StopRefused: the model declined the task or the provider's filter
	// blocked its reply (Anthropic stop_reason "refusal", a Chat
	// Completions refusal or finish_reason "content_filter"). RunResult's
	// Refusal holds what was said.
	StopRefused StopReason = "refused"
	// StopError is an infrastructure failure (disk, a tool's Go error).
	StopError StopReason = "error"
)

// StopReasons lists every stop reason, in the order above.
var StopReasons = []StopReason{StopFinalMessage, StopMaxSteps, StopTokenBudget, StopCostBudget,
	StopDeadline, StopCancelled, StopLoopDetected, StopModelError, StopRefused, StopError}

// Limits are the hard stop conditions of a run. Zero values take defaults
// (see withDefaults); a negative value disables that limit.
type Limits struct {
	MaxSteps   int           // model turns
	MaxTokens  int64         // input + output tokens over the run
	MaxCostUSD float64       // needs a CostFunc that knows the model's prices
	Timeout    time.Duration // wall clock for the whole run
	LoopRepeat int           // identical call+result seen this many times stops the run
	// ContextTokens is the model's window; history is elided past 80% of it.
	ContextTokens int
}

// Default limits.
const (
	DefaultMaxSteps      = 30
	DefaultMaxTokens     = 2_000_000
	DefaultTimeout       = 20 * time.Minute
	DefaultLoopRepeat    = 3
	DefaultContextTokens = 128_000
)

func (l Limits) withDefaults() Limits {
	if l.MaxSteps == 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	if l.MaxTokens == 0 {
		l.MaxTokens = DefaultMaxTokens
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.LoopRepeat == 0 {
		l.LoopRepeat = DefaultLoopRepeat
	}
	if l.ContextTokens <= 0 {
		l.ContextTokens = DefaultContextTokens
	}
	return l
}

// CostFunc prices a usage; known is false when the model has no price, in
// which case a cost budget cannot be enforced and the run says so.
type CostFunc func(model string, u Usage) (usd float64, known bool)

// RunResult is what Run reports: why it stopped, what was done, what remains.
type RunResult struct {
	StopReason   StopReason `json:"stop_reason"`
	FinalMessage string     `json:"final_message,omitempty"`
	Steps        int        `json:"steps"`
	ToolCalls    int        `json:"tool_calls"`
	ToolErrors   int        `json:"tool_errors"`
	Denials      int        `json:"policy_denials"`
	Refusals     int        `json:"patch_refusals"`
	Usage        Usage      `json:"usage"`
	CostUSD      float64    `json:"cost_usd"`
	CostKnown    bool       `json:"cost_known"`
	Model        string     `json:"model,omitempty"`
	Duration     float64    `json:"duration_s"`
	Detail       string     `json:"detail"`
	Err          string     `json:"error,omitempty"`
	// Refusal is what the model (or the provider's filter) said when it
	// refused, redacted; set with StopRefused.
	Refusal string    `json:"refusal,omitempty"`
	History []Message `json:"-"`
	perTool map[string]int
}

// Finished reports whether the model ended the run with a final message.
func (r *RunResult) Finished() bool { return r.StopReason == StopFinalMessage }

// describe fills Detail: which limit stopped the run, what was done, and
// what remains, so that reaching a limit is never silent.
func (r *RunResult) describe(l Limits, pending []ToolCall) {
	var done []string
	names := make([]string, 0, len(r.perTool))
	for n := range r.perTool {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		done = append(done, fmt.Sprintf("%s×%d", n, r.perTool[n]))
	}
	did := fmt.Sprintf("%d model turns, %d tool calls", r.Steps, r.ToolCalls)
	if len(done) > 0 {
		did += " (" + strings.Join(done, ", ") + ")"
	}
	note := ""
	if r.Usage.Estimated {
		note = " Note: " + UsageNotReported + "."
	}
	var why string
	switch r.StopReason {
	case StopFinalMessage:
		r.Detail = "the model finished with a final message after " + did
		if note != "" {
			r.Detail += "." + note
		}
		return
	case StopMaxSteps:
		why = fmt.Sprintf("the step limit (%d model turns) was reached", l.MaxSteps)
	case StopTokenBudget:
		why = fmt.Sprintf("the token budget (%d tokens) was exhausted: %d used", l.MaxTokens, r.Usage.Total())
		if r.Usage.Estimated {
			why += " (estimated)"
		}
	case StopCostBudget:
		why = fmt.Sprintf("the cost budget ($%.4f) was exhausted: $%.4f spent", l.MaxCostUSD, r.CostUSD)
	case StopDeadline:
		why = fmt.Sprintf("the time limit (%s) was reached", l.Timeout)
	case StopCancelled:
		why = "the run was cancelled"
	case StopLoopDetected:
		why = fmt.Sprintf("the model repeated the same call with the same result %d times", l.LoopRepeat)
	case StopModelError:
		why = "the model API failed after retries: " + r.Err
	case StopRefused:
		why = "the model refused: " + refusalText(r.Refusal)
	default:
		why = "an internal error stopped the run: " + r.Err
	}
	remains := "the model did not send a final message, so the fix is unfinished and its explanation missing"
	if len(pending) > 0 {
		var calls []string
		for _, c := range pending {
			calls = append(calls, c.Name+" "+ArgDigest(c.Arguments))
		}
		remains += "; calls not run: " + strings.Join(calls, "; ")
	}
	r.Detail = fmt.Sprintf("stopped: %s. Done: %s. Remains: %s.%s", why, did, remains, note)
}

// maxRefusalText bounds the refusal text a detail line quotes.
const maxRefusalText = 400

// refusalText is a refusal as one clipped line.
func refusalText(s string) string {
	s = strings.TrimRight(strings.Join(strings.Fields(s), " "), ".")
	if s == "" {
		return "no reason given"
	}
	return clip(s, maxRefusalText)
}
