package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
)

// Test code writes an ignored file that makes the next runs pass: the
// harness's own first run in the workspace fails, and a comment edit would
// then "pass" there. On the clean checkouts the first run fails again, so
// the failure is intermittent at the base (a flake for the flaky path) and
// nothing is claimed.
func TestIgnoredFileWrittenByTestCodeIsNoFix(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "gen")
	m := &recording{scripted: scripted{outs: []agent.Output{commentEdit, runTestCall, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./..."}, m)
	if _, err := os.Stat(filepath.Join(dir, "zz_gen.go")); err != nil {
		t.Fatalf("the fixture's test code did not write zz_gen.go, the test proves nothing: %v", err)
	}
	if b.Status == bundle.StatusFixed || b.Validated() || b.Diff != "" {
		t.Fatalf("status %s, diff %q", b.Status, b.Diff)
	}
	if b.Baseline == nil || b.Baseline.Verdict != bundle.VerdictIntermittent {
		t.Fatalf("baseline %+v", b.Baseline)
	}
	if r := target(t, &b.Baseline.Phase, "TestAdd"); r.Failures != 1 {
		t.Fatalf("TestAdd at the base: %+v, want exactly the first run failing", r)
	}
}
