package eval

import (
	"testing"

	"github.com/org/mini-agent/agent"
)

// Event data carries the loop's typed vocabulary (agent.StopReason): a
// task's expected "stop_reason": "cancelled" must match it as the trace
// shows it, not as a quoted JSON string.
func TestMatchEventTypedVocabulary(t *testing.T) {
	t.Parallel()
	e := agent.Event{Type: agent.EventTurnEnd, Data: map[string]any{"stop_reason": agent.StopCancelled, "detail": "pending; apply_patch patch=x"}}
	spec := EventSpec{Type: agent.EventTurnEnd, Data: map[string]string{"stop_reason": "cancelled"}, Contains: map[string]string{"detail": "; apply_patch patch="}}
	if !matchEvent(spec, e) {
		t.Fatalf("typed stop reason %q did not match %q", field(e.Data["stop_reason"]), "cancelled")
	}
	spec.Data["stop_reason"] = "final_message"
	if matchEvent(spec, e) {
		t.Fatal("a different stop reason matched")
	}
}
