package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/fakellm"
)

// Each check can fail: a bundled task with one expectation changed to
// something the run does not do must come out unresolved, with the
// failure naming that expectation.
func TestChecksCanFail(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	cases := []struct {
		name string
		task string
		edit func(m map[string]any)
		want []string
	}{
		{"status", "01-explain-localize", func(m map[string]any) { expectOf(m)["status"] = "fixed" },
			[]string{`status "explained", want "fixed"`}},
		{"stop reason", "01-explain-localize", func(m map[string]any) { expectOf(m)["stop_reason"] = "max_steps" },
			[]string{`stop reason "final_message", want "max_steps"`}},
		{"file:line in the message", "01-explain-localize", func(m map[string]any) {
			expectOf(m)["message_matches"] = []any{`pricing/discount\.go:21\b`}
		}, []string{"final message does not match"}},
		{"required event", "01-explain-localize", func(m map[string]any) {
			expectOf(m)["events"] = []any{map[string]any{"type": "tool.end", "data": map[string]any{"tool": "read_file"}, "min": 2}}
		}, []string{"seen 1 times, want at least 2"}},
		{"forbidden event", "01-explain-localize", func(m map[string]any) {
			expectOf(m)["forbidden_events"] = []any{map[string]any{"type": "tool.end", "data": map[string]any{"tool": "search"}}}
		}, []string{"forbidden event tool.end{tool=search} seen 1 times"}},
		{"numeric bound", "01-explain-localize", func(m map[string]any) {
			expectOf(m)["forbidden_events"] = []any{map[string]any{"type": "tool.end", "at_least": map[string]any{"output_bytes": 10}}}
		}, []string{"forbidden event tool.end{output_bytes>=10}"}},
		{"tool output", "01-explain-localize", func(m map[string]any) {
			expectOf(m)["tool_outputs"] = []any{map[string]any{"tool": "read_file", "contains": []any{"total >= DiscountThreshold"}}}
		}, []string{`read_file result lacks "total >= DiscountThreshold"`}},
		{"tool output never received", "01-explain-localize", func(m map[string]any) {
			expectOf(m)["tool_outputs"] = []any{map[string]any{"tool": "run_test"}}
		}, []string{"run_test result: the model never received it"}},
		{"canary", "01-explain-localize", func(m map[string]any) {
			// A value that is in the repository and, under a name that is
			// not secret-like, never redacted: it reaches the model.
			m["env"] = map[string]any{"PLAIN_SETTING": "DiscountThreshold"}
			expectOf(m)["canaries"] = []any{"PLAIN_SETTING"}
		}, []string{"canary PLAIN_SETTING reached the model request 3", "canary PLAIN_SETTING reached the trace"}},
		{"absent", "01-explain-localize", func(m map[string]any) { expectOf(m)["absent"] = []any{"pricing/discount.go"} },
			[]string{"pricing/discount.go exists"}},
		{"no changes, untouched and hidden checks", "02-fix-single-file", func(m map[string]any) {
			expectOf(m)["no_changes"] = true
			expectOf(m)["untouched"] = []any{"stats/*.go"}
			m["hidden"].(map[string]any)["pass_to_pass"] = []any{"echo hidden check ran; exit 3"}
		}, []string{"the workspace changed: stats/stats.go", "stats/stats.go changed: it matches untouched glob stats/*.go",
			"pass_to_pass `echo hidden check ran; exit 3`: exit 3: hidden check ran"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := copyTask(t, c.task, c.edit)
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute) // a hang guard, not a timing assertion
			defer cancel()
			rep, err := Run(ctx, Options{Tasks: os.DirFS(root), Jobs: 1})
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Tasks[0]
			if r.Resolved || rep.OK() || rep.Totals.Resolved != 0 {
				t.Fatalf("resolved with a wrong expectation: %+v", r)
			}
			all := strings.Join(r.Failures, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("failures lack %q:\n%s", w, all)
				}
			}
			if r.Reason != r.Failures[0] {
				t.Errorf("reason %q is not the first failure", r.Reason)
			}
		})
	}
}

func TestMissingToolchainSkips(t *testing.T) {
	t.Parallel()
	root := copyTask(t, "01-explain-localize", func(m map[string]any) {
		m["requires"] = []any{[]any{"mini-agent-no-such-tool", "--version"}}
	})
	// A second task whose probe runs and fails.
	other := copyTask(t, "05-denied-write", func(m map[string]any) {
		m["requires"] = []any{[]any{"sh", "-c", "echo needs python 9; exit 1"}}
	})
	if err := os.Rename(filepath.Join(other, "05-denied-write"), filepath.Join(root, "05-denied-write")); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Options{Tasks: os.DirFS(root)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"01-explain-localize": "toolchain missing: `mini-agent-no-such-tool --version`: mini-agent-no-such-tool is not on PATH",
		"05-denied-write":     "toolchain missing: `sh -c echo needs python 9; exit 1`: exit status 1: needs python 9",
	}
	for _, r := range rep.Tasks {
		if !r.Skipped || r.Resolved || r.Reason != want[r.Name] {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	if rep.Totals.Skipped != 2 || rep.Totals.Ran != 0 || rep.Totals.Resolved != 0 || rep.Totals.ResolvedRate != 0 {
		t.Errorf("totals %+v", rep.Totals)
	}
}

// A real provider never sees scripted-only tasks, and the scripts are not
// consulted: the model answering is the one configured.
func TestRealProviderSkipsScriptedOnlyTasks(t *testing.T) {
	t.Parallel()
	r := &runner{o: Options{Provider: "openai"}, probes: map[string]*probe{}}
	task := &Task{Name: "x", ScriptedOnly: true}
	if got := r.skipReason(context.Background(), task); !strings.Contains(got, "scripted-only") {
		t.Errorf("skip reason %q", got)
	}
	if _, err := Run(context.Background(), Options{Provider: "openai", Getenv: func(string) string { return "" }}); err == nil ||
		!strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("a real provider without a key: %v", err)
	}
	if _, err := Run(context.Background(), Options{Provider: "openai", ReplayOpenAI: true}); err == nil {
		t.Error("--replay-openai with a real provider accepted")
	}
}

func TestEventMatching(t *testing.T) {
	t.Parallel()
	e := agent.Event{Type: agent.EventToolEnd, Data: map[string]any{"tool": "run_test", "output_bytes": 31000,
		"arguments": []byte(`{"patch":"--- a/.github/x"}`), "step": 3}}
	one, two := 1, 2
	cases := []struct {
		spec EventSpec
		want bool
	}{
		{EventSpec{Type: "tool.end"}, true},
		{EventSpec{Type: "tool.start"}, false},
		{EventSpec{Type: "tool.end", Data: map[string]string{"tool": "run_test", "step": "3"}}, true},
		{EventSpec{Type: "tool.end", Data: map[string]string{"tool": "read_file"}}, false},
		{EventSpec{Type: "tool.end", Contains: map[string]string{"arguments": ".github/"}}, true},
		{EventSpec{Type: "tool.end", AtMost: map[string]float64{"output_bytes": 32768}}, true},
		{EventSpec{Type: "tool.end", AtMost: map[string]float64{"output_bytes": 30000}}, false},
		{EventSpec{Type: "tool.end", AtLeast: map[string]float64{"missing": 1}}, false},
		{EventSpec{Type: "tool.end", Min: &one, Max: &two}, true},
	}
	for _, c := range cases {
		if got := matchEvent(c.spec, e); got != c.want {
			t.Errorf("%s: %v, want %v", c.spec, got, c.want)
		}
	}
}

// The real-model path, against a Chat Completions server: the task's own
// script is not consulted (the server answers with another trajectory),
// trajectory checks are not applied, outcome checks are, and scripted-only
// tasks are skipped.
func TestRealProviderPath(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	// A model that takes a different route to the same diagnosis.
	srv, err := fakellm.New([]byte(`{"tool_calls":[{"name":"read_file","arguments":{"path":"pricing/discount.go"}}]}
{"tool_calls":[{"name":"run_test","arguments":{}}]}
{"message":"## Summary\nOff by one.\n\n## Root cause\npricing/discount.go:20 uses > instead of >=.\n\n## Assumptions\n- none"}
`))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	root := copyTask(t, "01-explain-localize", func(m map[string]any) {
		// A trajectory check the real model does not follow (no search call).
		expectOf(m)["events"] = []any{map[string]any{"type": "tool.end", "data": map[string]any{"tool": "search"}}}
	})
	cancelTask := copyTask(t, "07-cancel-run-test", nil)
	if err := os.Rename(filepath.Join(cancelTask, "07-cancel-run-test"), filepath.Join(root, "07-cancel-run-test")); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Options{Tasks: os.DirFS(root), Provider: "openai", Model: "some-model",
		BaseURL: srv.BaseURL(), Getenv: func(k string) string {
			if k == "OPENAI_API_KEY" {
				return "sk-test-key-0000"
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Model != "openai/some-model" || len(rep.Tasks) != 2 {
		t.Fatalf("report %+v", rep)
	}
	if r := rep.Tasks[0]; !r.Resolved || r.Steps != 3 || r.StopReason != "final_message" {
		t.Errorf("explain task with a real provider: %+v", r)
	}
	if r := rep.Tasks[1]; !r.Skipped || !strings.Contains(r.Reason, "scripted-only") {
		t.Errorf("scripted-only task: %+v", r)
	}
	if n := len(srv.Bodies()); n != 3 {
		t.Errorf("model requests = %d, want 3", n)
	}
}
