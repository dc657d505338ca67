package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/demo"
)

// scripted replays outputs in-process (the script provider lives in
// agent/provider; this keeps the pipeline test free of files).
type scripted struct{ outs []agent.Output }

func (s *scripted) Sample(_ context.Context, _ agent.Request) (agent.Output, error) {
	o := s.outs[0]
	s.outs = s.outs[1:]
	return o, nil
}

func patchCall(patch string) agent.Output {
	args, _ := json.Marshal(map[string]string{"patch": patch})
	return agent.Output{ToolCalls: []agent.ToolCall{{Name: "apply_patch", Arguments: args}}}
}

func TestSecretInTheChangeIsDiscarded(t *testing.T) {
	t.Parallel()
	const canary = "ghp_PIPELINEcanary0123456789abcdef"
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	m := &scripted{outs: []agent.Output{
		patchCall("--- a/cart.go\n+++ b/cart.go\n@@ -14 +14,2 @@\n-\tfor i := 1; i < len(items); i++ {\n+\t// " + canary + "\n+\tfor i := 0; i < len(items); i++ {\n"),
		{Message: "## Summary\ndone\n## Root cause\nx\n## Assumptions\nnone"},
	}}
	out, err := Run(context.Background(), Options{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...",
		Provider: "script", ModelImpl: m, Environ: append(os.Environ(), "GITHUB_TOKEN="+canary)})
	if err != nil {
		t.Fatal(err)
	}
	b := out.Bundle
	if b.Status != bundle.StatusNotFixed || b.Diff != "" || len(b.Files) != 0 || out.ExitCode != ExitNotFixed {
		t.Fatalf("status %s diff %q files %v", b.Status, b.Diff, b.Files)
	}
	if !strings.Contains(strings.Join(b.Warnings, "\n"), "secret") {
		t.Fatalf("warnings %v", b.Warnings)
	}
	if strings.Contains(out.Summary, canary) {
		t.Fatal("canary in the summary")
	}
}

func TestTestNames(t *testing.T) {
	t.Parallel()
	got := testNames([]string{"TestTotal", "TestTable/case_2", "TestTable/case_3",
		"tests/test_calc.py::test_add", "calc > adds numbers"})
	want := []string{"TestTotal", "TestTable", "test_add", "calc > adds numbers"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestRedactorReplacesLongestFirst(t *testing.T) {
	t.Parallel()
	r := newRedactor([]string{"abcdefgh", "abcdefgh-longer-secret"})
	if got := r("x abcdefgh-longer-secret y abcdefgh"); got != "x *** y ***" {
		t.Fatalf("got %q", got)
	}
}
