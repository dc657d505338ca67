package action

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/report"
	"github.com/sethvargo/go-githubactions"
)

// console is where one execution writes: workflow commands and the log,
// through one lock so lines never interleave.
type console struct {
	env Env
	gha *githubactions.Action
	mu  *sync.Mutex
}

func newConsole(env Env) *console {
	mu := &sync.Mutex{}
	return &console{env: env, mu: mu,
		gha: githubactions.New(githubactions.WithGetenv(env.Getenv), githubactions.WithWriter(lockedWriter{mu, env.Stdout}))}
}

// log is the plain log, with workflow commands neutralised.
func (c *console) log() io.Writer { return newCommandSafeWriter(c.env.Stdout, c.mu) }

// outputNames are the action's outputs, always all set (empty when unknown).
var outputNames = []string{"status", "error", "pr-url", "branch", "bundle", "trace", "steps", "tokens", "cost-usd", "flaky-issues", "flaky-prs"}

// finish sets the outputs and writes the job summary. The runner's files
// are optional (a local run has none): without them the values are logged.
func (c *console) finish(r Result) {
	for _, k := range outputNames {
		v := r.Outputs[k]
		if k == "status" {
			v = string(r.Status)
		}
		if c.env.Getenv("GITHUB_OUTPUT") == "" {
			fmt.Fprintf(c.log(), "output %s=%s\n", k, v)
			continue
		}
		if err := fileCommand(func() { c.gha.SetOutput(k, v) }); err != nil {
			fmt.Fprintf(c.env.Stderr, "mini-agent: setting output %s: %v\n", k, err)
		}
	}
	summary := r.Summary
	if footer := report.Footer(c.env.Version); summary != "" && !strings.Contains(summary, footer) {
		summary += "\n" + footer
	}
	if summary != "" && c.env.Getenv("GITHUB_STEP_SUMMARY") != "" {
		if err := fileCommand(func() { c.gha.AddStepSummary(summary) }); err != nil {
			fmt.Fprintf(c.env.Stderr, "mini-agent: writing the job summary: %v\n", err)
		}
	}
}

// fileCommand runs a go-githubactions file command, which panics when the
// runner's file cannot be written, as an error.
func fileCommand(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// groupSink opens a log group per tool call (::group:: ... ::endgroup::),
// so the Actions log shows one collapsible entry per agent step.
type groupSink struct {
	mu   sync.Mutex
	gha  *githubactions.Action
	open bool
}

// Emit implements agent.EventSink.
func (g *groupSink) Emit(e agent.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch e.Type {
	case agent.EventToolStart:
		if g.open {
			g.gha.EndGroup()
		}
		g.gha.Group(oneLine(fmt.Sprintf("step %v: %v %v", e.Data["step"], e.Data["tool"], e.Data["args"])))
		g.open = true
	case agent.EventToolEnd:
		if g.open {
			g.gha.EndGroup()
			g.open = false
		}
	}
}

func (g *groupSink) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		g.gha.EndGroup()
		g.open = false
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// commandSafeWriter neutralises workflow commands at line starts ("::" and
// the legacy "##[") in text the action does not control (progress lines
// that quote model arguments), so nothing it prints can set outputs, masks
// or environment.
type commandSafeWriter struct {
	mu   sync.Mutex
	w    io.Writer
	bol  bool
	lock *sync.Mutex // shared with the groups' writer, so lines never interleave
}

func newCommandSafeWriter(w io.Writer, lock *sync.Mutex) *commandSafeWriter {
	return &commandSafeWriter{w: w, bol: true, lock: lock}
}

func (c *commandSafeWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if c.bol {
			t := bytes.TrimLeft(line, " \t")
			if bytes.HasPrefix(t, []byte("::")) || bytes.HasPrefix(t, []byte("##[")) {
				out.WriteString("  ")
			}
		}
		out.Write(line)
		c.bol = line[len(line)-1] == '\n'
	}
	if c.lock != nil {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	if _, err := c.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// lockedWriter serialises writes to the shared stdout.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
