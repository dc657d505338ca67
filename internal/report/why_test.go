package report

import (
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
)

// stopped is a not-fixed run with the given stop reason and detail.
func stopped(reason agent.StopReason, detail string, steps int) *bundle.Bundle {
	b := sample()
	b.Status, b.Files, b.Diff, b.Validation = bundle.StatusNotFixed, nil, "", nil
	b.Run = bundle.RunInfo{StopReason: reason, Detail: detail, Steps: steps}
	return b
}

func TestWhy(t *testing.T) {
	t.Parallel()
	outage := "stopped: the model API failed after retries: openai chat completion: gave up after 4 attempts: openai api: status 503: Service Unavailable. " +
		"Done: 0 model turns, 0 tool calls. Remains: the model did not send a final message."
	cases := []struct {
		name string
		b    *bundle.Bundle
		want string
	}{
		{"fixed", sample(), ""},
		{"no patch", stopped(agent.StopFinalMessage, "the model finished with a final message after 4 model turns, 3 tool calls", 4),
			"not fixed: the model ended without a patch after 4 turns"},
		{"model outage", stopped(agent.StopModelError, outage, 0),
			"not fixed: the model API failed after 4 attempts: openai api: status 503: Service Unavailable"},
		{"step limit", stopped(agent.StopMaxSteps, "stopped: the step limit (30 model turns) was reached. Done: 30 model turns. Remains: x.", 30),
			"not fixed: the step limit (30 model turns) was reached"},
		{"odd detail", stopped(agent.StopError, "boom", 2), "not fixed: stopped (error) after 2 turns"},
		{"discarded", func() *bundle.Bundle {
			b := stopped(agent.StopFinalMessage, "", 3)
			b.Warnings = []string{"the change touched protected paths (.github/x.yml) and was discarded"}
			return b
		}(), "not fixed: the change touched protected paths (.github/x.yml) and was discarded"},
		{"validation failed", func() *bundle.Bundle {
			b := sample()
			b.Status = bundle.StatusValidationFailed
			b.Validation = []bundle.Check{{Name: "failing tests", ExitCode: 1}, {Name: "full test command", Passed: true}}
			return b
		}(), "validation failed: the model finished, but the harness's rerun of the tests failed: failing tests (exit 1)"},
		{"cancelled", func() *bundle.Bundle {
			b := stopped(agent.StopCancelled, "stopped: the run was cancelled. Done: x. Remains: y.", 2)
			b.Status = bundle.StatusCancelled
			return b
		}(), "cancelled: the run was interrupted after 2 turns; nothing more was run"},
		{"explain without diagnosis", func() *bundle.Bundle {
			b := stopped(agent.StopLoopDetected, "stopped: the model repeated the same call with the same result 3 times. Done: x. Remains: y.", 5)
			b.Mode = "explain"
			return b
		}(), "no diagnosis: the model repeated the same call with the same result 3 times after 5 turns"},
		{"refused", func() *bundle.Bundle {
			b := stopped(agent.StopRefused, "stopped: the model refused: x. Done: 1 model turns. Remains: y.", 1)
			b.Status, b.Mode = bundle.StatusRefused, "explain"
			b.Run.Refusal = "I can't help\nwith that.  (category cyber)."
			return b
		}(), "the model refused: I can't help with that. (category cyber) (after 1 turn)"},
		{"refused in silence", func() *bundle.Bundle {
			b := stopped(agent.StopRefused, "", 2)
			b.Status = bundle.StatusRefused
			return b
		}(), "the model refused: no reason given (after 2 turns)"},
	}
	for _, c := range cases {
		if got := Why(c.b); got != c.want {
			t.Errorf("%s: Why = %q\nwant        %q", c.name, got, c.want)
		}
	}
}

// TestStoppedReportsLeadWithWhy: the PR body / summary and the terminal
// report of a stopped run start with why it stopped.
func TestStoppedReportsLeadWithWhy(t *testing.T) {
	t.Parallel()
	b := stopped(agent.StopModelError, "stopped: the model API failed after retries: gave up after 4 attempts: openai api: status 503. Done: 0 model turns. Remains: all.", 0)
	body := Body(b, Options{})
	if want := "## mini-agent: not fixed\n\n**Not fixed: the model API failed after 4 attempts: openai api: status 503**\n\n"; !strings.HasPrefix(body, want) {
		t.Errorf("body starts\n%.200s\nwant\n%s", body, want)
	}
	text := Text(b)
	lines := strings.Split(text, "\n")
	if lines[0] != "mini-agent fix: not fixed: the model API failed after 4 attempts: openai api: status 503" ||
		lines[1] != "stop reason: model_error" || !strings.HasPrefix(lines[2], "stopped: the model API failed") {
		t.Errorf("terminal report starts:\n%s", strings.Join(lines[:3], "\n"))
	}
	// The detail is printed for a final message without a patch too.
	b = stopped(agent.StopFinalMessage, "the model finished with a final message after 4 model turns", 4)
	if got := strings.SplitN(Text(b), "\n", 4); got[0] != "mini-agent fix: not fixed: the model ended without a patch after 4 turns" ||
		got[2] != "the model finished with a final message after 4 model turns" {
		t.Errorf("terminal report starts:\n%s", strings.Join(got[:3], "\n"))
	}
	// A fixed run has no such line.
	if body := Body(sample(), Options{}); strings.Contains(body, "**Not fixed") || strings.Contains(Text(sample()), "not fixed") {
		t.Error("a fixed run's report says why it stopped")
	}
}

// TestTextHasNoEmptyDetailLine: a report with a reason (validation failed)
// but no stop detail goes from "stop reason" straight to the next section;
// it printed an empty line for the missing detail.
func TestTextHasNoEmptyDetailLine(t *testing.T) {
	t.Parallel()
	b := sample()
	b.Status = bundle.StatusValidationFailed
	b.Validation = []bundle.Check{{Name: "full test command", Command: "go test ./...", ExitCode: 1, Duration: 2}}
	b.FailingTests = []string{"TestTotal"}
	if Why(b) == "" || b.Run.Detail != "" {
		t.Fatalf("the case needs a reason and no detail: Why = %q, Detail = %q", Why(b), b.Run.Detail)
	}
	lines := strings.Split(Text(b), "\n")
	if lines[1] != "stop reason: final_message" || lines[2] != "failing tests: TestTotal" {
		t.Errorf("terminal report starts:\n%s", strings.Join(lines[:3], "\n"))
	}
	// A stopped run without a detail: one blank line before the summary.
	for _, detail := range []string{"", " \n"} {
		if txt := Text(stopped(agent.StopModelError, detail, 0)); !strings.Contains(txt, "stop reason: model_error\n\nSummary:\n") {
			t.Errorf("detail %q: terminal report:\n%s", detail, txt)
		}
	}
}

func TestFooterVersion(t *testing.T) {
	t.Parallel()
	b := sample()
	if body := Body(b, Options{}); strings.Contains(body, "Written by mini-agent") {
		t.Errorf("no version known, yet a footer:\n%s", body)
	}
	b.MiniAgentVersion = "v1.0.0"
	if body := Body(b, Options{}); !strings.Contains(body, "<sub>Written by mini-agent v1.0.0.</sub>") {
		t.Error("the bundle's version is not in the footer")
	}
	body := Body(b, Options{Version: "v1.2.3"})
	if !strings.Contains(body, "<sub>Written by mini-agent v1.2.3.</sub>") || strings.Contains(body, "v1.0.0") {
		t.Error("Options.Version does not win in the footer")
	}
	if i, j := strings.Index(body, "Written by"), strings.Index(body, MarkerPrefix); i < 0 || j < i {
		t.Error("the footer is not before the hidden marker")
	}
	if Footer("v1|x") != "<sub>Written by mini-agent v1\\|x.</sub>\n\n" {
		t.Errorf("Footer = %q", Footer("v1|x"))
	}
}

// TestRefusedReport: a refused run's reports lead with what the model
// said, under the refused headline, never as an empty diagnosis.
func TestRefusedReport(t *testing.T) {
	t.Parallel()
	b := stopped(agent.StopRefused, "stopped: the model refused: I can't help with that. Done: 1 model turns, 0 tool calls. Remains: y.", 1)
	b.Status, b.Mode, b.Run.Refusal = bundle.StatusRefused, "explain", "I can't help with that."
	b.Report = agent.Report{}
	body := Body(b, Options{})
	if want := "## mini-agent: the model refused\n\n**The model refused: I can't help with that (after 1 turn)**\n\n"; !strings.HasPrefix(body, want) {
		t.Errorf("body starts\n%.200s\nwant\n%s", body, want)
	}
	lines := strings.Split(Text(b), "\n")
	if lines[0] != "mini-agent explain: the model refused: I can't help with that (after 1 turn)" || lines[1] != "stop reason: refused" ||
		!strings.HasPrefix(lines[2], "stopped: the model refused: I can't help with that.") {
		t.Errorf("terminal report starts:\n%s", strings.Join(lines[:3], "\n"))
	}
}

// TestUsageSaysWhenEstimated: usage a server did not report is shown as
// the estimate it is, never as a count.
func TestUsageSaysWhenEstimated(t *testing.T) {
	t.Parallel()
	b := sample()
	if got := Usage(b); !strings.Contains(got, "1200 input + 80 output tokens (600 cached) · cost $0.0031") {
		t.Errorf("reported usage: %s", got)
	}
	b.Usage.Estimated = true
	got := Usage(b)
	if !strings.Contains(got, "about 1200 input + 80 output tokens (estimated: usage not reported by the server) · cost about $0.0031") {
		t.Errorf("estimated usage: %s", got)
	}
}
