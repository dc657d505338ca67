package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// JSONLSink writes each event as one JSON line.
type JSONLSink struct {
	mu  sync.Mutex
	enc *json.Encoder
	err error
}

// NewJSONLSink returns a sink writing to w.
func NewJSONLSink(w io.Writer) *JSONLSink { return &JSONLSink{enc: json.NewEncoder(w)} }

// Emit implements EventSink. The first write error is kept (see Err) and
// later events are dropped: a broken trace must not stop the run.
func (s *JSONLSink) Emit(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = s.enc.Encode(e)
	}
}

// Err reports the first write error.
func (s *JSONLSink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// FanOut sends each event to every sink in order.
type FanOut []EventSink

// Emit implements EventSink.
func (f FanOut) Emit(e Event) {
	for _, s := range f {
		if s != nil {
			s.Emit(e)
		}
	}
}

// Recorder keeps every event in memory (for tests, bundles and summaries).
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Emit implements EventSink.
func (r *Recorder) Emit(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of what was recorded.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Types lists the recorded event types in order.
func (r *Recorder) Types() []EventType {
	var out []EventType
	for _, e := range r.Events() {
		out = append(out, e.Type)
	}
	return out
}

// ProgressSink writes one human line per finished tool call and per stop:
// step, tool, a short digest of the arguments, outcome, duration.
type ProgressSink struct {
	mu sync.Mutex
	w  io.Writer
}

// NewProgressSink returns a sink writing progress lines to w.
func NewProgressSink(w io.Writer) *ProgressSink { return &ProgressSink{w: w} }

// Emit implements EventSink.
func (p *ProgressSink) Emit(e Event) {
	var line string
	switch e.Type {
	case EventToolEnd:
		line = fmt.Sprintf("step %v  %-11v %-48s %-8v %v", e.Data["step"], e.Data["tool"],
			clip(fmt.Sprint(e.Data["args"]), 48), e.Data["outcome"], e.Data["duration"])
	case EventTurnEnd:
		line = fmt.Sprintf("stop: %v after %v steps, %v tokens", e.Data["stop_reason"], e.Data["steps"], e.Data["tokens"])
		if u, ok := e.Data["usage"].(Usage); ok && u.Estimated {
			line += " (estimated: usage not reported by the server)"
		}
	default:
		return
	}
	p.mu.Lock()
	fmt.Fprintln(p.w, line)
	p.mu.Unlock()
}

// ArgDigest summarises tool arguments in one short line: top-level keys in
// order with clipped values, e.g. `path=a.go start_line=10`. It is what
// progress lines and PR traces show instead of whole patches.
func ArgDigest(args json.RawMessage) string {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return clip(strings.Join(strings.Fields(string(args)), " "), 60)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		var v string
		switch x := m[k].(type) {
		case string:
			if k == "patch" {
				v = fmt.Sprintf("<%d lines>", strings.Count(x, "\n")+1)
			} else {
				v = x
			}
		default:
			b, _ := json.Marshal(x)
			v = string(b)
		}
		v = strings.Join(strings.Fields(v), " ")
		parts = append(parts, k+"="+clip(v, 40))
	}
	return clip(strings.Join(parts, " "), 100)
}

func durationString(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(10 * time.Millisecond).String()
	}
}
