package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/org/mini-agent/agent"
)

// Script limits.
const (
	maxScriptBytes     = 16 << 20 // a whole script
	maxScriptLineBytes = 4 << 20  // one turn (a large patch fits)
)

// ScriptModelName is the Output.Model the script provider reports.
const ScriptModelName = "script"

// Script is an agent.Model that replays recorded model turns, one JSONL line
// per Sample call. It is what tests, the eval and the demo run on. A line is
// one of:
//
//	{"message":"final text"}
//	{"tool_calls":[{"name":"read_file","arguments":{"path":"a.go"}}]}
//	{"tool_calls":[{"id":"c1","name":"search","arguments_raw":"{not json"}]}
//	{"error":"simulated model failure"}
//	{"refusal":"I can't help with that."}
//
// "message" and "tool_calls" may be combined (text beside the calls). A
// tool call without "id" gets call_1, call_2... numbered across the script;
// "arguments_raw" sends its string verbatim as the arguments (to simulate
// malformed JSON), and a call with neither gets {}. An optional
// "usage":{"input_tokens":N,"output_tokens":M} sets the turn's usage;
// without it, usage is estimated from the request and output sizes
// (bytes/4), so budgets and benchmarks have numbers; "usage_unreported":
// true makes that estimate one a real server's missing usage would get
// (Usage.Estimated). The stop reasons real servers send are data here too:
// "refusal" is a refused turn (its text, possibly empty), "truncated":true
// a turn cut at the output token limit (a cut tool call is never run),
// "paused":true a paused turn that continues. Blank lines and lines
// starting with # are skipped. Unknown fields are errors.
//
// A Script is safe for concurrent use; turns are handed out in order.
type Script struct {
	mu    sync.Mutex
	turns []scriptTurn
	next  int
}

type scriptTurn struct {
	line   int
	out    agent.Output
	err    string
	usage  bool // out.Usage came from the script
	output int  // output size in bytes, for the usage estimate
	// unreported marks the estimate as a real server's missing usage.
	unreported bool
}

// scriptLine is the JSON shape of one line.
type scriptLine struct {
	Message   *string          `json:"message"`
	ToolCalls []scriptToolCall `json:"tool_calls"`
	Error     *string          `json:"error"`
	Refusal   *string          `json:"refusal"`
	Truncated bool             `json:"truncated"`
	Paused    bool             `json:"paused"`
	Usage     *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	UsageUnreported bool `json:"usage_unreported"`
}

type scriptToolCall struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments"`
	ArgumentsRaw *string         `json:"arguments_raw"`
}

// LoadScript reads a script file. Errors wrap ErrConfig.
func LoadScript(path string) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: script: %w", ErrConfig, err)
	}
	defer f.Close()
	s, err := ParseScript(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseScript reads a script from r (the demo embeds its script). Every
// line is validated now, so a malformed script fails before the run starts;
// errors name the line and wrap ErrConfig.
func ParseScript(r io.Reader) (*Script, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxScriptBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: script: %w", ErrConfig, err)
	}
	if len(data) > maxScriptBytes {
		return nil, fmt.Errorf("%w: script: larger than %d bytes", ErrConfig, maxScriptBytes)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxScriptLineBytes)
	s := &Script{}
	callN := 0
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		t, err := parseScriptLine(line, lineNo, &callN)
		if err != nil {
			return nil, fmt.Errorf("%w: script line %d: %w", ErrConfig, lineNo, err)
		}
		s.turns = append(s.turns, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: script: %w", ErrConfig, err)
	}
	if len(s.turns) == 0 {
		return nil, fmt.Errorf("%w: script: no turns", ErrConfig)
	}
	return s, nil
}

func parseScriptLine(line []byte, lineNo int, callN *int) (scriptTurn, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var l scriptLine
	if err := dec.Decode(&l); err != nil {
		return scriptTurn{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return scriptTurn{}, errors.New("more than one JSON value on the line")
	}
	t := scriptTurn{line: lineNo}
	switch {
	case l.Error != nil:
		if l.Message != nil || l.ToolCalls != nil || l.Refusal != nil {
			return t, errors.New(`"error" cannot be combined with "message", "tool_calls" or "refusal"`)
		}
		t.err = *l.Error
		return t, nil
	case l.Refusal != nil:
		if l.Message != nil || l.Truncated || l.Paused {
			return t, errors.New(`"refusal" cannot be combined with "message", "truncated" or "paused"`)
		}
		t.out.Refused, t.out.Message = true, *l.Refusal
	case l.Message == nil && len(l.ToolCalls) == 0:
		return t, errors.New(`want "message", "tool_calls", "refusal" or "error"`)
	case l.Truncated && l.Paused:
		return t, errors.New(`a turn is "truncated" or "paused", not both`)
	case l.Usage != nil && l.UsageUnreported:
		return t, errors.New(`"usage" and "usage_unreported" contradict each other`)
	}
	t.out.Truncated, t.out.Paused = l.Truncated, l.Paused
	if l.Message != nil {
		t.out.Message = *l.Message
	}
	for i, c := range l.ToolCalls {
		if c.Name == "" {
			return t, fmt.Errorf("tool call %d: no name", i+1)
		}
		*callN++
		tc := agent.ToolCall{ID: c.ID, Name: c.Name, Arguments: json.RawMessage("{}")}
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", *callN)
		}
		switch {
		case c.ArgumentsRaw != nil && c.Arguments != nil:
			return t, fmt.Errorf("tool call %d: both arguments and arguments_raw", i+1)
		case c.ArgumentsRaw != nil:
			tc.Arguments = json.RawMessage(*c.ArgumentsRaw)
		case c.Arguments != nil:
			var compact bytes.Buffer
			if err := json.Compact(&compact, c.Arguments); err != nil {
				return t, fmt.Errorf("tool call %d: arguments: %w", i+1, err)
			}
			tc.Arguments = compact.Bytes()
		}
		t.out.ToolCalls = append(t.out.ToolCalls, tc)
		t.output += len(tc.Name) + len(tc.Arguments)
	}
	t.output += len(t.out.Message)
	t.unreported = l.UsageUnreported
	if l.Usage != nil {
		if l.Usage.InputTokens < 0 || l.Usage.OutputTokens < 0 {
			return t, errors.New("usage: negative token count")
		}
		t.usage = true
		t.out.Usage = agent.Usage{InputTokens: l.Usage.InputTokens, OutputTokens: l.Usage.OutputTokens}
	}
	t.out.Model = ScriptModelName
	return t, nil
}

// Sample implements agent.Model: it returns the next turn of the script,
// the simulated error of an {"error":...} line, or, past the end, an error
// wrapping ErrScriptExhausted.
func (s *Script) Sample(ctx context.Context, req agent.Request) (agent.Output, error) {
	if err := ctx.Err(); err != nil {
		return agent.Output{}, err
	}
	s.mu.Lock()
	if s.next >= len(s.turns) {
		n := len(s.turns)
		s.mu.Unlock()
		return agent.Output{}, fmt.Errorf("%w after %d turns", ErrScriptExhausted, n)
	}
	t := s.turns[s.next]
	s.next++
	s.mu.Unlock()

	if t.err != "" {
		return agent.Output{}, fmt.Errorf("script line %d: simulated model error: %s", t.line, t.err)
	}
	out := t.out
	// Hand out copies: the caller may keep or alter what it gets.
	out.ToolCalls = make([]agent.ToolCall, len(t.out.ToolCalls))
	for i, c := range t.out.ToolCalls {
		c.Arguments = bytes.Clone(c.Arguments)
		out.ToolCalls[i] = c
	}
	if len(out.ToolCalls) == 0 {
		out.ToolCalls = nil
	}
	if !t.usage {
		out.Usage = agent.Usage{
			InputTokens:  estimateTokens(requestSize(req)),
			OutputTokens: estimateTokens(t.output),
			Estimated:    t.unreported,
		}
	}
	return out, nil
}

// Remaining reports how many turns are left.
func (s *Script) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

// Len reports how many turns the script holds.
func (s *Script) Len() int { return len(s.turns) }

// requestSize is the byte size of what a real provider would be sent:
// system prompt, every message's text and tool-call arguments, tool specs.
func requestSize(req agent.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Text) + len(m.ToolCallID)
		for _, c := range m.ToolCalls {
			n += len(c.ID) + len(c.Name) + len(c.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	return n
}

// estimateTokens converts bytes to tokens (agent.EstimateTokens, at least 1).
func estimateTokens(bytes int) int64 {
	return max(1, agent.EstimateTokens(bytes))
}
