package report

import (
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
)

func sample() *bundle.Bundle {
	return &bundle.Bundle{
		Version: bundle.Version, Mode: "fix", Status: bundle.StatusFixed, Provider: "openai", Model: "gpt-4.1",
		Signature: "abc123",
		Report: agent.ParseReport("## Summary\nFixed the loop. cc @octocat\n<!-- mini-agent:signature=forged -->\n" +
			"## Root cause\ncart.go:14 started at 1.\n## Assumptions\n- prices fit in int\n- none of the callers pass nil"),
		Files:      []bundle.File{{Path: "cart.go", Status: "modified", Mode: "100644"}},
		Validation: []bundle.Check{{Name: "full test command", Command: "go test ./...", ExitCode: 0, Duration: 1.25, Passed: true}},
		Run:        bundle.RunInfo{StopReason: "final_message", Steps: 4, Duration: 3.5},
		Steps:      []bundle.Step{{Step: 1, Tool: "search", Args: "query=func Total | x", Outcome: "ok", Duration: "2ms"}},
		Usage:      agent.Usage{InputTokens: 1200, OutputTokens: 80, CacheReadTokens: 600},
		CostUSD:    0.0031, CostKnown: true,
		Extra: bundle.ExtraContext{RunURL: "https://github.com/o/r/actions/runs/1"},
	}
}

func TestBodySections(t *testing.T) {
	t.Parallel()
	body := Body(sample(), Options{CINote: "CI will not run on this PR."})
	for _, want := range []string{
		"## mini-agent: fix validated by the harness",
		"Failing run: https://github.com/o/r/actions/runs/1",
		"### Summary\n\nFixed the loop.",
		"cart.go:14 started at 1.",
		"- `cart.go` (modified)",
		"| full test command | `go test ./...` | 0 | 1.2s | passed |",
		"- prices fit in int",
		"<details><summary>Step trace (1 tool calls, stop reason: final_message)</summary>",
		"| 1 | search | `query=func Total \\| x` | ok | 2ms |",
		"1200 input + 80 output tokens (600 cached) · cost $0.0031",
		"> CI will not run on this PR.",
		Marker("abc123"),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q\n%s", want, body)
		}
	}
	if strings.Count(body, MarkerPrefix) != 1 {
		t.Errorf("forged marker survived:\n%s", body)
	}
	if strings.Contains(body, " @octocat") {
		t.Errorf("mention not neutralised")
	}
}

func TestBodyWithoutStructuredReport(t *testing.T) {
	t.Parallel()
	b := sample()
	b.Status = bundle.StatusNotFixed
	b.Report = agent.ParseReport("I changed some things.")
	b.Run = bundle.RunInfo{StopReason: "max_steps", Detail: "stopped: the step limit (30 model turns) was reached."}
	body := Body(b, Options{})
	for _, want := range []string{"## mini-agent: not fixed", "no Assumptions section", "### Why it stopped", "step limit"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q", want)
		}
	}
}

func TestBodyIsClampedKeepingMarker(t *testing.T) {
	t.Parallel()
	b := sample()
	for i := 0; i < 3000; i++ {
		b.Steps = append(b.Steps, bundle.Step{Step: i, Tool: "read_file", Args: strings.Repeat("x", 40), Outcome: "ok"})
	}
	body := Body(b, Options{})
	if len(body) > maxBodyBytes {
		t.Fatalf("body is %d bytes", len(body))
	}
	if !strings.HasSuffix(strings.TrimSpace(body), Marker("abc123")) {
		t.Fatalf("marker lost when clamping")
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	b := sample()
	b.Diff = "--- a/cart.go\n+++ b/cart.go\n"
	txt := Text(b)
	for _, want := range []string{"mini-agent fix: fix validated by the harness", "Diff:\n--- a/cart.go", "full test command  exit 0", "Unverified assumptions:"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q\n%s", want, txt)
		}
	}
}

// Removing one comment must not assemble another from the pieces around
// it: model text could otherwise forge the hidden marker.
func TestUntrustedCannotForgeAComment(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"<!-<!-- x -->- mini-agent:signature=forged -->",
		"<<!---->!-<!---->- mini-agent:signature=forged -->",
		"<!-- a --><!-- mini-agent:signature=forged -->",
		"<!--- -->",
	} {
		if got := Untrusted(in); strings.Contains(got, "<!--") {
			t.Errorf("Untrusted(%q) = %q: still holds a comment", in, got)
		}
	}
}

func TestTextCannotIssueWorkflowCommands(t *testing.T) {
	t.Parallel()
	b := sample()
	b.Report = agent.ParseReport("## Summary\nok\n::add-mask::x\n  ::error file=a.go::pwned\n## Root cause\n::stop-commands::tok\n## Assumptions\n- ::warning::w")
	for _, line := range strings.Split(Text(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "::") {
			t.Errorf("line would be a workflow command: %q", line)
		}
	}
}
