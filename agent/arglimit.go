package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Bounds on one tool call's arguments (raw JSON bytes as the model sent
// them). Arguments are names, paths and patterns, except for a mutating
// tool's content (apply_patch's patch). A patch is at most one model reply:
// the largest output windows offered today are ~128k tokens, about 512 KiB
// of text, and JSON escaping (\n, \", \t) can nearly double that, so 1 MiB
// lets any patch a model can really produce through. Everything else fits
// in a few KiB; 256 KiB is generous and still cheap to keep and re-send.
const (
	MaxArgumentBytes         = 256 << 10
	MaxMutatingArgumentBytes = 1 << 20
)

// ArgumentLimiter is implemented by a tool that wants its own bound on its
// arguments' size instead of the default for its kind.
type ArgumentLimiter interface {
	MaxArgumentBytes() int
}

// ArgumentLimit returns the size bound for a call to the named tool: the
// tool's own (ArgumentLimiter), MaxMutatingArgumentBytes for a mutating
// tool, MaxArgumentBytes otherwise (and for an unknown name).
func (r *Registry) ArgumentLimit(name string) int {
	t, ok := r.tools[name]
	switch {
	case !ok:
		return MaxArgumentBytes
	case hasLimit(t):
		return t.(ArgumentLimiter).MaxArgumentBytes()
	case t.Mutates():
		return MaxMutatingArgumentBytes
	}
	return MaxArgumentBytes
}

func hasLimit(t Tool) bool {
	l, ok := t.(ArgumentLimiter)
	return ok && l.MaxArgumentBytes() > 0
}

// tooLargeResult is the answer to a call whose arguments exceed limit.
func (r *Registry) tooLargeResult(name string, size, limit int) Result {
	hint := "send only the arguments the tool's schema describes"
	if t, ok := r.tools[name]; ok && t.Mutates() {
		hint = "send a smaller patch: split the change into several calls of a few hunks or one file each, and change only the lines the fix needs"
	}
	return ErrorResult(CodeInvalidArgument,
		fmt.Sprintf("arguments for %s too large: %d bytes, limit %d; %s", name, size, limit, hint), true)
}

// clippedArguments is what an oversized argument is replaced by in the
// history and the trace: its size and digest, never its content.
func clippedArguments(raw json.RawMessage, limit int) json.RawMessage {
	sum := sha256.Sum256(raw)
	b, _ := json.Marshal(map[string]any{"argument_too_large": map[string]any{
		"bytes": len(raw), "limit": limit, "sha256": hex.EncodeToString(sum[:])}})
	return b
}

// clipOversized replaces every call's arguments over its tool's limit by
// clippedArguments, returning the answers those calls get (by call id).
// The original text is dropped here, before it is redacted, digested,
// recorded or kept in the history: one oversized call costs its size once.
func (r *Registry) clipOversized(calls []ToolCall) (map[string]Result, []ToolCall) {
	var tooLarge map[string]Result
	for i, c := range calls {
		limit := r.ArgumentLimit(c.Name)
		if len(c.Arguments) <= limit {
			continue
		}
		if tooLarge == nil {
			tooLarge = map[string]Result{}
		}
		tooLarge[c.ID] = r.tooLargeResult(c.Name, len(c.Arguments), limit)
		calls[i].Arguments = clippedArguments(c.Arguments, limit)
	}
	return tooLarge, calls
}
