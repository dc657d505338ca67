package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/sandbox"
)

// What confines a run and how it is reported: the places it may write to, the
// protections and the isolation events.

// writable lists what the sandboxed command may write to: the workspace,
// the temp dir, the tool caches env implies and the configured extras.
func (r *RunTest) writable(env []string) []string {
	w := []string{r.ws.Dir(), os.TempDir(), "/tmp"}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && filepath.IsAbs(v) {
			w = append(w, v) // the command's own temp dir, when the caller set another
		}
	}
	caches := sandbox.ToolCaches(env)
	if r.cfg.ReadOnlyModules {
		caches = slices.DeleteFunc(caches, func(d string) bool { return isModuleCache(d, env) })
	}
	w = append(w, caches...)
	return append(w, r.cfg.WritableDirs...)
}

// Protections names what contained the latest run ("" before any run).
func (r *RunTest) Protections() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.protections
}

// EventIsolation is the trace event IsolationEvents adds after each
// run_test call: what contained that run.
const EventIsolation = "run_test.isolation"

// IsolationEvents returns a sink that forwards every event to next and,
// after the tool.end of each run_test call that ran the command, emits an
// EventIsolation event naming what contained the run (data: step, id,
// protections, leftovers_killed).
func (r *RunTest) IsolationEvents(next agent.EventSink) agent.EventSink {
	return &isolationSink{rt: r, next: next}
}

type isolationSink struct {
	rt   *RunTest
	next agent.EventSink
	mu   sync.Mutex
	seen int // runs already reported
}

func (s *isolationSink) Emit(e agent.Event) {
	s.next.Emit(e)
	if e.Type != agent.EventToolEnd || e.Data["tool"] != "run_test" {
		return
	}
	s.rt.mu.Lock()
	runs, prot, left := s.rt.runs, s.rt.protections, s.rt.leftovers
	s.rt.mu.Unlock()
	s.mu.Lock()
	fresh := runs > s.seen
	s.seen = runs
	s.mu.Unlock()
	if !fresh || prot == "" {
		return
	}
	s.next.Emit(agent.Event{Type: EventIsolation, Time: e.Time, Data: map[string]any{
		"step": e.Data["step"], "id": e.Data["id"], "protections": prot, "leftovers_killed": left}})
}

// CredentialsHidden reports whether the latest run had the workspace's
// persisted credentials hidden from test code (false before any run).
func (r *RunTest) CredentialsHidden() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hidden
}

// protections is one line: the containment mechanism, then the sandbox.
func protections(res proc.Result, noSandbox bool) string {
	box := res.Sandbox.String()
	if noSandbox {
		box = "sandbox off by configuration (--no-sandbox): no Landlock, network open, groups kept, persisted credentials readable"
	}
	return "processes: " + res.Containment + "; " + box
}

// isModuleCache reports whether the tool-cache directory d is the Go
// module cache or the GOPATH pkg directory holding it.
func isModuleCache(d string, env []string) bool {
	if d == lastEnv(env, "GOMODCACHE") {
		return true
	}
	return filepath.Base(d) == "pkg" && !strings.Contains(d, string(filepath.Separator)+".cache"+string(filepath.Separator))
}

// lastEnv is the value the environment gives name (its last entry), or "".
func lastEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
