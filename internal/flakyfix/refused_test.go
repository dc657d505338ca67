package flakyfix

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider/pricing"
	"github.com/org/mini-agent/internal/demo"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyrun"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/testcmd"
)

// replay hands out outputs in order.
type replay struct{ outs []agent.Output }

func (r *replay) Sample(context.Context, agent.Request) (agent.Output, error) {
	o := r.outs[0]
	r.outs = r.outs[1:]
	return o, nil
}

// TestRefusedFixIsUnproven (issue 22): a model that refuses after making a
// change proposes no fix: the change the harness validated is not taken
// to the rerun bar, and the reason says the model refused.
func TestRefusedFixIsUnproven(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	cmd, err := testcmd.Parse("go test ./...")
	if err != nil {
		t.Fatal(err)
	}
	patch, _ := json.Marshal(map[string]string{"patch": "--- a/cart.go\n+++ b/cart.go\n@@ -14 +14 @@\n" +
		"-\tfor i := 1; i < len(items); i++ {\n+\tfor i := 0; i < len(items); i++ {\n"})
	m := &replay{outs: []agent.Output{
		{ToolCalls: []agent.ToolCall{{Name: "apply_patch", Arguments: patch}}},
		{Refused: true, Message: "I won't continue with this."},
	}}
	log := filepath.Join(t.TempDir(), "failure.log")
	if err := os.WriteFile(log, []byte("--- FAIL: TestTotal (0.00s)\n    cart_test.go:9: Total = 5, want 6\nFAIL\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Fix(context.Background(), FixConfig{
		Detect:     flakyrun.Config{Workdir: dir, Command: cmd},
		Target:     &flaky.Evidence{ID: "example.com/cart.TestTotal", Runs: 10, Failures: 3, FailedRuns: []int{2, 5, 9}},
		FailureLog: log,
		Deps:       pipeline.Deps{Model: pricing.New(m, "script", "script", nil)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Status != flaky.FixUnproven || !strings.HasPrefix(res.Report.Reason, "the model refused: I won't continue with this") {
		t.Fatalf("fix %s: %s", res.Report.Status, res.Report.Reason)
	}
	if len(res.Outcome.Bundle.Files) != 1 {
		t.Errorf("the case needs a change before the refusal: files %v", res.Outcome.Bundle.Files)
	}
}
