package pipeline

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/demo"
)

// TestRefusalIsItsOwnStatus: a model that refuses (or whose reply a filter
// blocked) ends the job refused, in explain mode (never an empty
// diagnosis) and in fix mode (even with a change made before the refusal,
// which the harness still validates but does not call a fix); what it said
// is in the bundle, redacted, and leads the summary.
func TestRefusalIsItsOwnStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	const canary = "ghp_REFUSALcanary0123456789abcdef"
	refusal := agent.Output{Refused: true, Message: "I can't help with that (token " + canary + ")."}
	fix := patchCall("--- a/cart.go\n+++ b/cart.go\n@@ -14 +14 @@\n-\tfor i := 1; i < len(items); i++ {\n+\tfor i := 0; i < len(items); i++ {\n")
	for _, c := range []struct {
		mode  agent.Mode
		outs  []agent.Output
		files int
	}{
		{agent.ModeExplain, []agent.Output{refusal}, 0},
		{agent.ModeFix, []agent.Output{refusal}, 0},
		{agent.ModeFix, []agent.Output{fix, refusal}, 1},
	} {
		t.Run(fmt.Sprintf("%s/%d turns", c.mode, len(c.outs)), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := demo.Materialize(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			out, err := Run(context.Background(), Job{Mode: c.mode, Workdir: dir, TestCommand: "go test ./..."},
				Deps{Model: script(&scripted{outs: c.outs}), Environ: append(os.Environ(), "GITHUB_TOKEN="+canary)})
			if err != nil {
				t.Fatal(err)
			}
			b := out.Bundle
			if b.Status != bundle.StatusRefused || b.Run.StopReason != agent.StopRefused || len(b.Files) != c.files {
				t.Fatalf("status %s, stop %s, files %v", b.Status, b.Run.StopReason, b.Files)
			}
			if !strings.HasPrefix(b.Run.Refusal, "I can't help with that (token ") {
				t.Errorf("refusal %q", b.Run.Refusal)
			}
			if !strings.HasPrefix(b.WhyStopped, "the model refused: I can't help with that (token ") {
				t.Errorf("why_stopped %q", b.WhyStopped)
			}
			if !strings.HasPrefix(out.Summary, "## mini-agent: the model refused\n\n**The model refused: I can't help with that") {
				t.Errorf("summary starts\n%.300s", out.Summary)
			}
			all := out.Summary + b.Run.Refusal + b.Run.Detail + b.WhyStopped
			if strings.Contains(all, canary) {
				t.Error("the refusal's secret reached the bundle or the summary")
			}
			if c.files > 0 && (len(b.Validation) == 0 || !strings.Contains(strings.Join(b.Warnings, "\n"), "not proposed as a fix")) {
				t.Errorf("validation %+v, warnings %v", b.Validation, b.Warnings)
			}
		})
	}
}
