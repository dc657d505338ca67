package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Registry holds the tools offered to the model, by unique name.
type Registry struct {
	tools map[string]Tool
	specs []ToolSpec
}

// NewRegistry registers tools in order; a duplicate or empty name is an error.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: map[string]Tool{}}
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds one tool. Its input schema must be a JSON object.
func (r *Registry) Register(t Tool) error {
	spec := t.Spec()
	if spec.Name == "" {
		return fmt.Errorf("register tool: empty name")
	}
	if _, dup := r.tools[spec.Name]; dup {
		return fmt.Errorf("register tool: duplicate name %q", spec.Name)
	}
	if _, err := parseSchema(spec.InputSchema); err != nil {
		return fmt.Errorf("register tool %q: %w", spec.Name, err)
	}
	r.tools[spec.Name] = t
	r.specs = append(r.specs, spec)
	return nil
}

// Specs lists the tool specs in registration order.
func (r *Registry) Specs() []ToolSpec { return append([]ToolSpec(nil), r.specs...) }

// Lookup finds a tool by name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Names lists the registered names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Check resolves a call to its tool and validates the arguments against the
// tool's schema. A failure is returned as an error Result for the model
// (code INVALID_ARGUMENT, retryable), never as a Go error.
func (r *Registry) Check(call ToolCall) (Tool, json.RawMessage, *Result) {
	t, ok := r.tools[call.Name]
	if !ok {
		res := ErrorResult(CodeInvalidArgument,
			fmt.Sprintf("unknown tool %q; available tools: %v", call.Name, r.Names()), true)
		return nil, nil, &res
	}
	if limit := r.ArgumentLimit(call.Name); len(call.Arguments) > limit {
		res := r.tooLargeResult(call.Name, len(call.Arguments), limit)
		return nil, nil, &res
	}
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		res := ErrorResult(CodeInvalidArgument,
			fmt.Sprintf("arguments for %s are not valid JSON: %s", call.Name, clip(string(args), 200)), true)
		return nil, nil, &res
	}
	schema, _ := parseSchema(t.Spec().InputSchema)
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		res := ErrorResult(CodeInvalidArgument, fmt.Sprintf("arguments for %s: %v", call.Name, err), true)
		return nil, nil, &res
	}
	if err := schema.validate("arguments", v); err != nil {
		res := ErrorResult(CodeInvalidArgument,
			fmt.Sprintf("arguments for %s do not match its schema: %v", call.Name, err), true)
		return nil, nil, &res
	}
	return t, args, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
