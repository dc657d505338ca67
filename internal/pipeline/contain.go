package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/gitguard"
	"github.com/org/mini-agent/internal/snapshot"
)

// containment undoes, after every run of the test command (the model's
// run_test calls and the harness's own runs), what code under test did to
// what the harness owns: .git always, and in explain mode the workspace
// too. Each change is reported to the model in the run's result and
// recorded in the bundle.
type containment struct {
	guard    *gitguard.Guard
	snap     *snapshot.Snapshot
	readOnly bool

	mu       sync.Mutex
	calls    int
	reverted []bundle.Reverted
	failures []string // what could not be undone or checked
}

// after checks and undoes; label names the run ("run_test call 2",
// "initial run"). It returns a note for the model, or "".
func (c *containment) after(ctx context.Context, label string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx = context.WithoutCancel(ctx) // undoing must finish even on cancel
	var lines []string
	changes, err := c.guard.Check()
	for _, ch := range changes {
		c.reverted = append(c.reverted, bundle.Reverted{Path: ch.Path, Change: ch.Change, Where: ".git", After: label,
			Restored: ch.Restored, Error: ch.Err})
		lines = append(lines, ch.String())
		if !ch.Restored {
			c.failures = append(c.failures, fmt.Sprintf("%s: %s", label, ch))
		}
	}
	if err != nil {
		c.failures = append(c.failures, fmt.Sprintf("%s: .git could not be checked: %v", label, err))
		lines = append(lines, ".git could not be checked: "+err.Error())
	}
	if c.readOnly {
		undone, err := c.snap.Restore(ctx)
		for _, ch := range undone {
			c.reverted = append(c.reverted, bundle.Reverted{Path: ch.Path, Change: workspaceChange(ch.Status), Where: "workspace",
				After: label, Restored: true})
			lines = append(lines, ch.Path+" "+workspaceChange(ch.Status)+" (undone)")
		}
		if err != nil {
			c.failures = append(c.failures, fmt.Sprintf("%s: the workspace could not be put back: %v", label, err))
			lines = append(lines, "the workspace could not be put back: "+err.Error())
		}
	}
	if len(lines) == 0 {
		return ""
	}
	what := "The .git directory belongs to the harness"
	if c.readOnly {
		what += ", and this run is read-only"
	}
	return "[mini-agent harness] the code under test changed what it must not; every change was undone where possible. " +
		what + ". Changes:\n- " + strings.Join(lines, "\n- ")
}

func workspaceChange(status string) string {
	if status == "deleted" {
		return "removed"
	}
	return status
}

// record copies what was undone into the bundle, with a warning each for
// what could not be.
func (c *containment) record(b *bundle.Bundle) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b.Reverted = append([]bundle.Reverted(nil), c.reverted...)
	if n := len(c.reverted); n > 0 {
		owned := ".git"
		if c.readOnly {
			owned = ".git, or the workspace in a read-only run"
		}
		b.Warnings = append(b.Warnings, fmt.Sprintf("the code under test changed %d path(s) the harness owns (%s); "+
			"each was undone where possible: see \"reverted\"", n, owned))
	}
	for _, f := range c.failures {
		b.Warnings = append(b.Warnings, "not undone: "+f)
	}
}

// broken reports whether something could not be undone or checked: the
// run's result then cannot be trusted.
func (c *containment) broken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.failures) > 0
}

// wrap returns run_test with the check after every call.
func (c *containment) wrap(t agent.Tool) agent.Tool { return &guardedTool{Tool: t, c: c} }

// guardedTool is run_test followed by the containment check. It keeps the
// tool's optional behaviours (exclusive, fingerprint).
type guardedTool struct {
	agent.Tool
	c *containment
}

func (g *guardedTool) Exclusive() bool { return true }

func (g *guardedTool) Fingerprint(text string) string {
	if fp, ok := g.Tool.(agent.Fingerprinter); ok {
		return fp.Fingerprint(text)
	}
	return text
}

func (g *guardedTool) Execute(ctx context.Context, args json.RawMessage) (agent.Result, error) {
	res, err := g.Tool.Execute(ctx, args)
	g.c.mu.Lock()
	g.c.calls++
	n := g.c.calls
	g.c.mu.Unlock()
	note := g.c.after(ctx, fmt.Sprintf("run_test call %d", n))
	if note == "" || err != nil {
		return res, err
	}
	return appendNote(res, note), nil
}

// appendNote adds note to a result: to the message of a JSON error result,
// after the text otherwise.
func appendNote(res agent.Result, note string) agent.Result {
	if res.IsError {
		var m map[string]any
		if json.Unmarshal([]byte(res.Text), &m) == nil {
			if msg, ok := m["message"].(string); ok {
				m["message"] = msg + "\n\n" + note
				if b, err := json.Marshal(m); err == nil {
					res.Text = string(b)
					return res
				}
			}
		}
	}
	res.Text += "\n\n" + note
	return res
}
