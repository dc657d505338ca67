package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/demo"
)

// A review iteration asks for a change on a green suite: without
// ChangeRequested a passing test command is "nothing to fix" and the model
// is never asked; with it the model makes the change, and the harness
// validates the full test command as for any fix.
func TestRequestedChangeOnAPassingSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	passingDemo := func(t *testing.T) string {
		dir := t.TempDir()
		if err := demo.Materialize(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "cart.go")
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fixed := strings.Replace(string(src), "for i := 1; i < len(items); i++ {", "for i := 0; i < len(items); i++ {", 1)
		if fixed == string(src) {
			t.Fatal("the demo's bug is not where this test expects it")
		}
		if err := os.WriteFile(p, []byte(fixed), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	change := "--- a/cart.go\n+++ b/cart.go\n@@ -13,4 +13,5 @@\n \tsum := 0\n+\t// Each item counts its quantity.\n \tfor i := 0; i < len(items); i++ {\n \t\tsum += items[i].Price * items[i].Quantity\n \t}\n"
	final := agent.Output{Message: "## Summary\nDocumented the loop as asked.\n## Root cause\nA reviewer asked for a comment.\n## Assumptions\nnone"}

	t.Run("without a request", func(t *testing.T) {
		t.Parallel()
		m := &recording{scripted: scripted{outs: []agent.Output{patchCall(change), final}}}
		out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: passingDemo(t), TestCommand: "go test ./...",
			Instructions: "add a comment to the loop"}, Deps{Model: script(m)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Bundle.Status != bundle.StatusNothingToFix || len(m.reqs) != 0 {
			t.Fatalf("status %s after %d model requests, want nothing-to-fix and no request", out.Bundle.Status, len(m.reqs))
		}
	})
	t.Run("requested", func(t *testing.T) {
		t.Parallel()
		dir := passingDemo(t)
		m := &recording{scripted: scripted{outs: []agent.Output{patchCall(change), final}}}
		out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...",
			Instructions: "add a comment to the loop", ChangeRequested: true}, Deps{Model: script(m)})
		if err != nil {
			t.Fatal(err)
		}
		b := out.Bundle
		if b.Status != bundle.StatusFixed {
			t.Fatalf("status %s, want fixed (warnings %v, validation %+v)", b.Status, b.Warnings, b.Validation)
		}
		if len(b.Validation) != 1 || b.Validation[0].Name != "full test command" || !b.Validation[0].Passed {
			t.Errorf("validation %+v, want the full test command, passed", b.Validation)
		}
		if !strings.Contains(b.Diff, "+\t// Each item counts its quantity.") {
			t.Errorf("diff does not hold the requested change:\n%s", b.Diff)
		}
		if len(m.reqs) == 0 || !strings.Contains(m.reqs[0].Messages[0].Text, "The test command passes. Make the change") {
			t.Errorf("the goal does not say the suite passes and a change is asked for")
		}
	})
}
