package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/glob"
	"github.com/org/mini-agent/internal/proc"
)

// Bounds of the checks.
const (
	defaultCheckTimeout = 2 * time.Minute
	// processGoneWait is how long a process has to disappear after the run.
	processGoneWait = 5 * time.Second
	// checkTailBytes is how much of a failed check's output a failure quotes.
	checkTailBytes = 400
)

// check judges a finished run against the task's expectations; every
// failed expectation is recorded.
func (r *runner) check(ctx context.Context, tr *taskRun) {
	e := &tr.task.Expect
	// Leftover processes are checked (and killed) whatever else happened.
	defer checkProcesses(tr)
	if tr.runErr != nil {
		tr.fail("pipeline: %v", tr.runErr)
	}
	if tr.outcome == nil {
		return
	}
	b := tr.outcome.Bundle
	if b.Status != e.Status {
		tr.fail("status %q, want %q (%s)", b.Status, e.Status, firstNonEmpty(b.Run.Detail, strings.Join(b.Warnings, "; ")))
	}
	if b.Run.StopReason != e.StopReason {
		tr.fail("stop reason %q, want %q", b.Run.StopReason, e.StopReason)
	}
	for _, re := range e.MessageMatches {
		if !regexp.MustCompile(re).MatchString(b.Message) {
			tr.fail("final message does not match %q: %q", re, clip(b.Message, 200))
		}
	}
	checkChanges(ctx, tr)
	for _, p := range e.Absent {
		if _, err := os.Lstat(filepath.Join(tr.ws, filepath.FromSlash(p))); err == nil {
			tr.fail("%s exists: it must not", p)
		}
	}
	events := tr.events.Events()
	if tr.scripted {
		for _, s := range e.Events {
			n := countEvents(s, events)
			lo, hi := 1, -1
			if s.Min != nil {
				lo = *s.Min
			}
			if s.Max != nil {
				hi = *s.Max
			}
			if n < lo || (hi >= 0 && n > hi) {
				tr.fail("event %s seen %d times, want %s", s, n, bounds(lo, hi))
			}
		}
		checkToolOutputs(tr)
	}
	for _, s := range e.ForbiddenEvents {
		if n := countEvents(s, events); n > 0 {
			tr.fail("forbidden event %s seen %d times", s, n)
		}
	}
	checkCanaries(tr)
	r.checkHidden(ctx, tr)
}

// checkChanges enforces no_changes and untouched against git's view of the
// workspace (ignored files such as caches aside).
func checkChanges(ctx context.Context, tr *taskRun) {
	e := &tr.task.Expect
	if !e.NoChanges && len(e.Untouched) == 0 {
		return
	}
	changed, err := changedPaths(ctx, tr.ws)
	if err != nil {
		tr.fail("list changes: %v", err)
		return
	}
	if e.NoChanges && len(changed) > 0 {
		tr.fail("the workspace changed: %s", strings.Join(changed, ", "))
	}
	for _, p := range changed {
		if g, hit := glob.Any(e.Untouched, p); hit {
			tr.fail("%s changed: it matches untouched glob %s", p, g)
		}
	}
}

// String prints a spec as `type{field=value ...}`.
func (s EventSpec) String() string {
	var parts []string
	for _, k := range sortedKeys(s.Data) {
		parts = append(parts, k+"="+s.Data[k])
	}
	for _, k := range sortedKeys(s.Contains) {
		parts = append(parts, k+"~"+s.Contains[k])
	}
	for _, m := range []struct {
		op string
		v  map[string]float64
	}{{"<=", s.AtMost}, {">=", s.AtLeast}} {
		keys := make([]string, 0, len(m.v))
		for k := range m.v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			parts = append(parts, k+m.op+strconv.FormatFloat(m.v[k], 'f', -1, 64))
		}
	}
	return string(s.Type) + "{" + strings.Join(parts, " ") + "}"
}

func bounds(lo, hi int) string {
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %d", lo)
	case lo == hi:
		return fmt.Sprintf("exactly %d", lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

func countEvents(s EventSpec, events []agent.Event) int {
	n := 0
	for _, e := range events {
		if matchEvent(s, e) {
			n++
		}
	}
	return n
}

func matchEvent(s EventSpec, e agent.Event) bool {
	if e.Type != s.Type {
		return false
	}
	for k, v := range s.Data {
		if field(e.Data[k]) != v {
			return false
		}
	}
	for k, v := range s.Contains {
		if !strings.Contains(field(e.Data[k]), v) {
			return false
		}
	}
	for k, v := range s.AtMost {
		if n, ok := number(e.Data[k]); !ok || n > v {
			return false
		}
	}
	for k, v := range s.AtLeast {
		if n, ok := number(e.Data[k]); !ok || n < v {
			return false
		}
	}
	return true
}

// field prints an event value the way the trace shows it.
func field(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.RawMessage:
		return string(x)
	case []byte:
		return string(x)
	case int, int64, float64, bool:
		return fmt.Sprint(x)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return rv.String() // a typed vocabulary: agent.StopReason, bundle.Status
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// toolOutput is one tool result as the model received it.
type toolOutput struct {
	tool, args, text string
	// readable is text plus, for a JSON error result, its decoded message
	// (JSON escapes '<', '>' and '&', which a model reads through).
	readable string
}

func readable(text string) string {
	var e struct {
		Message string `json:"message"`
	}
	if strings.HasPrefix(text, "{") && json.Unmarshal([]byte(text), &e) == nil && e.Message != "" {
		return text + "\n" + e.Message
	}
	return text
}

// toolOutputs collects the tool results in the requests sent to the model,
// each once, in order.
func toolOutputs(reqs []agent.Request) []toolOutput {
	calls := map[string]agent.ToolCall{}
	seen := map[string]bool{}
	var out []toolOutput
	for _, req := range reqs {
		for _, m := range req.Messages {
			switch m.Role {
			case agent.RoleAssistant:
				for _, c := range m.ToolCalls {
					calls[c.ID] = c
				}
			case agent.RoleTool:
				if seen[m.ToolCallID] {
					continue
				}
				seen[m.ToolCallID] = true
				c := calls[m.ToolCallID]
				out = append(out, toolOutput{tool: firstNonEmpty(m.ToolName, c.Name), args: string(c.Arguments), text: m.Text,
					readable: readable(m.Text)})
			}
		}
	}
	return out
}

func checkToolOutputs(tr *taskRun) {
	outs := toolOutputs(tr.model.requests())
	for _, s := range tr.task.Expect.ToolOutputs {
		var picked []toolOutput
		k := 0
		for _, o := range outs {
			if o.tool != s.Tool || !strings.Contains(o.args, s.ArgsContains) {
				continue
			}
			k++
			if s.Nth == 0 || s.Nth == k {
				picked = append(picked, o)
			}
		}
		what := fmt.Sprintf("%s result", s.Tool)
		if s.ArgsContains != "" {
			what += fmt.Sprintf(" (args ~ %q)", s.ArgsContains)
		}
		if s.Nth > 0 {
			what = fmt.Sprintf("%s #%d", what, s.Nth)
		}
		if len(picked) == 0 {
			tr.fail("%s: the model never received it", what)
			continue
		}
		for _, o := range picked {
			for _, c := range s.Contains {
				if !strings.Contains(o.readable, c) {
					tr.fail("%s lacks %q: %s", what, c, clip(o.readable, 300))
				}
			}
			for _, c := range s.NotContains {
				if strings.Contains(o.readable, c) {
					tr.fail("%s contains %q", what, c)
				}
			}
			for _, re := range s.Matches {
				if !regexp.MustCompile(re).MatchString(o.readable) {
					tr.fail("%s does not match %q: %s", what, re, clip(o.readable, 300))
				}
			}
			if s.MaxBytes > 0 && len(o.text) > s.MaxBytes {
				tr.fail("%s is %d bytes, over %d", what, len(o.text), s.MaxBytes)
			}
		}
	}
}

// checkCanaries looks for every canary value in the four places a secret
// must never reach: the model's requests, the trace, the bundle, the PR body.
func checkCanaries(tr *taskRun) {
	e := &tr.task.Expect
	if len(e.Canaries) == 0 {
		return
	}
	type source struct {
		name string
		data []byte
	}
	var sources []source
	for i, req := range tr.model.requests() {
		data, _ := json.Marshal(req)
		sources = append(sources, source{fmt.Sprintf("model request %d", i+1), data})
	}
	if tr.server != nil {
		for i, body := range tr.server.Bodies() {
			sources = append(sources, source{fmt.Sprintf("HTTP request body %d", i+1), body})
		}
	}
	for _, f := range []struct{ name, file string }{{"trace", "trace.jsonl"}, {"bundle", "bundle.json"}, {"PR body", "summary.md"}} {
		data, _ := os.ReadFile(filepath.Join(tr.outDir, f.file))
		sources = append(sources, source{f.name, data})
	}
	sources = append(sources, source{"PR body (in memory)", []byte(tr.outcome.Summary)})
	requests := 0
	for _, s := range sources {
		if strings.HasPrefix(s.name, "model request") {
			requests++
		}
		// An empty source would pass vacuously.
		if len(bytes.TrimSpace(s.data)) == 0 {
			tr.fail("canary check: %s is empty", s.name)
		}
	}
	if requests == 0 {
		tr.fail("canary check: no model request was recorded")
	}
	for _, name := range e.Canaries {
		v := []byte(tr.task.Env[name])
		for _, s := range sources {
			if bytes.Contains(s.data, v) {
				tr.fail("canary %s reached the %s", name, s.name)
			}
		}
	}
}

// checkHidden copies the hidden files in and runs the hidden checks.
func (r *runner) checkHidden(ctx context.Context, tr *taskRun) {
	h := &tr.task.Hidden
	if len(h.FailToPass)+len(h.PassToPass) == 0 {
		return
	}
	if dir := tr.task.hiddenDir(); dir != "" {
		if err := copyTree(tr.task.fsys, dir, tr.ws); err != nil {
			tr.fail("hidden files: %v", err)
			return
		}
	}
	for _, kind := range []struct {
		name string
		cmds []string
	}{{"fail_to_pass", h.FailToPass}, {"pass_to_pass", h.PassToPass}} {
		for _, c := range kind.cmds {
			if err := runCheck(ctx, tr, c); err != nil {
				tr.fail("%s `%s`: %v", kind.name, c, err)
			}
		}
	}
}

// runCheck runs one check command in the workspace; nil means exit 0.
func runCheck(ctx context.Context, tr *taskRun, command string) error {
	timeout := time.Duration(tr.task.Hidden.Timeout)
	if timeout == 0 {
		timeout = defaultCheckTimeout
	}
	res, err := proc.Run(ctx, proc.Spec{Dir: tr.ws, Argv: []string{"sh", "-c", command},
		Env: proc.ScrubEnv(tr.env, tr.task.SecretEnv), Timeout: timeout, MergeStderr: true})
	if err != nil {
		return err
	}
	if res.TimedOut {
		return fmt.Errorf("timed out after %s", timeout)
	}
	if res.ExitCode != 0 {
		out := string(res.Stdout.Head) + string(res.Stdout.Tail)
		if len(out) > checkTailBytes {
			out = "…" + out[len(out)-checkTailBytes:]
		}
		return fmt.Errorf("exit %d: %s", res.ExitCode, strings.Join(strings.Fields(out), " "))
	}
	return nil
}

// checkProcesses verifies that the processes whose pids the task wrote are
// gone, and kills survivors so a failed check leaves nothing behind.
func checkProcesses(tr *taskRun) {
	for _, f := range tr.task.Expect.ProcessesGone {
		data, err := os.ReadFile(filepath.Join(tr.scratch, filepath.FromSlash(f)))
		if err != nil {
			tr.fail("processes_gone: %s was never written (the process did not start): %v", f, err)
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 1 {
			tr.fail("processes_gone: %s holds %q, not a pid", f, clip(string(data), 40))
			continue
		}
		deadline := time.Now().Add(processGoneWait)
		for processAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if processAlive(pid) {
			tr.fail("process %d (pid file %s) survived the run", pid, f)
			killProcess(pid)
		}
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
