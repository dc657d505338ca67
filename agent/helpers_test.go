package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/org/mini-agent/internal/protect"
)

// protectSet is the set protecting git's data and exactly globs.
func protectSet(globs ...string) *protect.Set {
	s, err := protect.New(append([]string{}, globs...))
	if err != nil {
		panic(err)
	}
	return s
}

// fakeModel replays outputs and records requests. It is an in-process
// stand-in for the script provider (which lives in agent/provider).
type fakeModel struct {
	mu   sync.Mutex
	outs []Output
	errs []error
	reqs []Request
	// block makes Sample wait for ctx when the outputs run out.
	block bool
}

func (m *fakeModel) Sample(ctx context.Context, req Request) (Output, error) {
	m.mu.Lock()
	i := len(m.reqs)
	cp := req
	cp.Messages = append([]Message(nil), req.Messages...)
	m.reqs = append(m.reqs, cp)
	m.mu.Unlock()
	if i < len(m.errs) && m.errs[i] != nil {
		return Output{}, m.errs[i]
	}
	if i >= len(m.outs) {
		if m.block {
			<-ctx.Done()
			return Output{}, ctx.Err()
		}
		return Output{}, errors.New("fake model exhausted")
	}
	return m.outs[i], nil
}

func calls(cs ...ToolCall) Output {
	return Output{ToolCalls: cs, Usage: Usage{InputTokens: 100, OutputTokens: 10}}
}

func call(name, args string) ToolCall { return ToolCall{Name: name, Arguments: json.RawMessage(args)} }

func final(text string) Output {
	return Output{Message: text, Usage: Usage{InputTokens: 100, OutputTokens: 10}}
}

// funcTool is a configurable tool.
type funcTool struct {
	name    string
	mutates bool
	excl    bool
	schema  string
	fn      func(ctx context.Context, args json.RawMessage) (Result, error)
}

func (t *funcTool) Spec() ToolSpec {
	s := t.schema
	if s == "" {
		s = `{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}`
	}
	return ToolSpec{Name: t.name, Description: t.name + " tool", InputSchema: json.RawMessage(s)}
}
func (t *funcTool) Mutates() bool   { return t.mutates }
func (t *funcTool) Exclusive() bool { return t.excl }
func (t *funcTool) Execute(ctx context.Context, args json.RawMessage) (Result, error) {
	if t.fn == nil {
		return Result{Text: t.name + " ok: " + string(args)}, nil
	}
	return t.fn(ctx, args)
}

// writeTool writes {"path","content"} into dir: a real mutating tool for
// policy tests.
type writeTool struct{ dir string }

func (w *writeTool) Spec() ToolSpec {
	return ToolSpec{Name: "write", InputSchema: json.RawMessage(`{"type":"object","required":["path","content"],"properties":{"path":{"type":"string"},"content":{"type":"string"}}}`)}
}
func (w *writeTool) Mutates() bool { return true }
func (w *writeTool) args(raw json.RawMessage) (p, c string, err error) {
	var a struct{ Path, Content string }
	err = json.Unmarshal(raw, &a)
	return a.Path, a.Content, err
}
func (w *writeTool) TouchedPaths(raw json.RawMessage) ([]string, error) {
	p, _, err := w.args(raw)
	return []string{p}, err
}
func (w *writeTool) Execute(_ context.Context, raw json.RawMessage) (Result, error) {
	p, c, err := w.args(raw)
	if err != nil {
		return ErrorResult(CodeInvalidArgument, err.Error(), true), nil
	}
	full := filepath.Join(w.dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return Result{}, err
	}
	if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
		return Result{}, err
	}
	return Result{Text: fmt.Sprintf("wrote %s", p)}, nil
}

func newAgent(m Model, p Policy, tools ...Tool) (*Agent, *Recorder) {
	reg, err := NewRegistry(tools...)
	if err != nil {
		panic(err)
	}
	rec := &Recorder{}
	return &Agent{Model: m, Tools: reg, Policy: p, Events: rec, System: "sys"}, rec
}
