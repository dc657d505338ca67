package agent

import (
	"context"
	"fmt"

	"github.com/org/mini-agent/internal/protect"
)

// Decision is a policy verdict on one tool call. Reason is shown to the model
// when the call is denied.
type Decision struct {
	Allow  bool   `json:"allow"`
	Reason string `json:"reason,omitempty"`
}

// Policy authorizes every tool call before it runs.
type Policy interface {
	Authorize(ctx context.Context, call ToolCall, tool Tool) Decision
}

// ReadOnly denies every mutating tool: the explain mode.
type ReadOnly struct{}

// Authorize implements Policy.
func (ReadOnly) Authorize(_ context.Context, call ToolCall, tool Tool) Decision {
	if tool.Mutates() {
		return Decision{Reason: fmt.Sprintf("this run is read-only; %s may not change the workspace. Diagnose and explain instead", call.Name)}
	}
	return Decision{Allow: true}
}

// WorkspaceWrite allows writes except to protected paths. Paths come from
// the tool (PathToucher); a tool that mutates but cannot name its paths is
// denied, since the policy cannot see what it would touch.
//
// The set is internal/protect's, the one owner of what is protected (git's
// data always, case ignored, validated globs): the policy asks it rather
// than a matcher of its own, so it cannot disagree with the sandbox and
// publishing. agent is a public package but one module with internal/, and
// protect is a leaf that imports nothing above it.
type WorkspaceWrite struct {
	// Protected is the set of paths refused; nil is protect.Default().
	Protected *protect.Set
}

// Authorize implements Policy.
func (p WorkspaceWrite) Authorize(_ context.Context, call ToolCall, tool Tool) Decision {
	if !tool.Mutates() {
		return Decision{Allow: true}
	}
	pt, ok := tool.(PathToucher)
	if !ok {
		return Decision{Reason: fmt.Sprintf("%s cannot say which paths it writes", call.Name)}
	}
	paths, err := pt.TouchedPaths(call.Arguments)
	if err != nil {
		// The tool reports malformed arguments itself, with more detail.
		return Decision{Allow: true}
	}
	for _, raw := range paths {
		// Ignoring case: ".GITHUB/workflows/x.yml" is the workflows folder
		// on a case-insensitive file system.
		if g, hit := p.Protected.Match(raw); hit {
			return Decision{Reason: fmt.Sprintf("%s is a protected path (%s); it may not be changed", raw, g)}
		}
	}
	return Decision{Allow: true}
}
