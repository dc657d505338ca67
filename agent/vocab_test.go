package agent

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// Typed event names and stop reasons keep the trace's JSON: plain strings.
func TestTypedVocabularyJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	s := NewJSONLSink(&buf)
	s.Emit(Event{Type: EventTurnEnd, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: map[string]any{"stop_reason": StopMaxSteps}})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"turn.end","time":"2026-01-02T03:04:05Z","data":{"stop_reason":"max_steps"}}` + "\n"
	if buf.String() != want {
		t.Errorf("trace line = %s, want %s", buf.String(), want)
	}
	var e Event
	if err := json.Unmarshal(buf.Bytes(), &e); err != nil || e.Type != EventTurnEnd {
		t.Errorf("read back: %+v, %v", e, err)
	}
	var r RunResult
	if err := json.Unmarshal([]byte(`{"stop_reason":"cost_budget"}`), &r); err != nil || r.StopReason != StopCostBudget {
		t.Errorf("RunResult: %+v, %v", r, err)
	}
}
