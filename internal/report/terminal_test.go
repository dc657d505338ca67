package report

import (
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
)

func TestStripControls(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain text\n\tindented":                        "plain text\n\tindented",
		"ünïcödé ✓":                                     "ünïcödé ✓",
		"\x1b[31mred\x1b[0m":                            "red",
		"\x1b[2J\x1b[H cleared":                         " cleared",
		"\x1b]0;title\x07after":                         "after",
		"\x1b]8;;https://evil/\x1b\\link\x1b]8;;\x1b\\": "link",
		"\x1bP+q\x1b\\dcs":                              "dcs",
		"\x1bcreset":                                    "reset",
		"\x1b(Bcharset":                                 "charset",
		"ok\rFAKE":                                      "okFAKE",
		"bell\a back\bspace del\x7f":                    "bell backspace del",
		"\u009b31mc1 csi":                               "c1 csi",
		"\u009d0;t\u009cc1 osc":                         "c1 osc",
		"\u0085nel":                                     "nel",
		"bad\xff\xfeutf8":                               "bad\uFFFDutf8",
		"\x1b]unterminated\nnext line":                  "\nnext line",
		"\x1b[12;\nnext":                                "\nnext",
		"trailing\x1b":                                  "trailing",
	} {
		if got := stripControls(in); got != want {
			t.Errorf("stripControls(%q) = %q, want %q", in, got, want)
		}
	}
}

// Escape sequences in the model's final message (and in every other field
// of model or repository origin) never reach the terminal, and removing
// them cannot assemble a workflow command.
func TestTextStripsEscapeSequences(t *testing.T) {
	t.Parallel()
	b := sample()
	b.Report = agent.ParseReport("## Summary\nFixed \x1b[2J\x1b]0;pwned\x07it.\x1b]unterminated\n:\x1b[0m:error::forged\n" +
		"## Root cause\n\x1b]8;;https://evil.example/\x1b\\cart.go:14\x1b]8;;\x1b\\ started at 1.\r\n" +
		"## Assumptions\n- \u009b2Jnone")
	b.FailingTests = []string{"TestA\x1b[8m", "TestB\n::add-mask::x"}
	b.Model = "gpt\x1b[5m"
	b.Run.StopReason, b.Run.Detail = "max_steps", "stopped: \x1b[41mlimit"
	b.Warnings = []string{"w\x1b]52;c;aGk=\x07"}
	b.Diff = "--- a/cart.go\n+++ b/cart.go\n+\x1b[31mred\n"
	txt := Text(b)
	for i, r := range txt {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Fatalf("control character %U at byte %d of:\n%q", r, i, txt)
		}
	}
	for _, want := range []string{"Fixed it.", "cart.go:14 started at 1.", "failing tests: TestA, TestB", "+red",
		"Model `gpt`", "stopped: limit", "full test command  exit 0", "  - none"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	for _, line := range strings.Split(txt, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "::") {
			t.Errorf("line would be a workflow command: %q", line)
		}
	}
}
