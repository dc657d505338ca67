package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/flaky/flakytest"
)

// `fix` on a failure the baseline finds intermittent (a stale cache that
// fails every other use) hands it to the flaky path: the fix is judged by
// the rerun bar, not by one passing rerun. The real fix is proven and
// fixed; a comment edit is not, though a single rerun of it may pass.
func TestFixHandsAnIntermittentFailureToTheFlakyPath(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	fixture := filepath.Join("testdata", "flaky", "stale")
	proper, err := os.ReadFile(filepath.Join(fixture, "proper.diff"))
	if err != nil {
		t.Fatal(err)
	}
	comment := "--- a/calc.go\n+++ b/calc.go\n@@ -1,2 +1,2 @@\n-// Package calc adds numbers.\n+// Package calc adds numbers, quickly.\n package calc\n"
	for _, c := range []struct {
		name   string
		patch  string
		code   int
		status bundle.Status
		note   string
	}{
		{"proper", string(proper), 0, bundle.StatusFixed, "the fix is proven"},
		{"comment", comment, 3, bundle.StatusValidationFailed, "the fix is failed-bar"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := flakytest.CopyModule(t, fixture)
			flakytest.Commit(t, dir)
			out := t.TempDir()
			code, stdout, stderr := run(t, "fix", "--workdir", dir, "--test-command", "go test ./...",
				"--failure-log", filepath.Join(fixture, "ci.log"), "--provider", "script", "--script", fixScript(t, c.patch),
				"--bundle", filepath.Join(out, "bundle.json"), "--summary", filepath.Join(out, "summary.md"))
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			b := readBundle(t, filepath.Join(out, "bundle.json"))
			if b.Status != c.status || b.Baseline == nil || b.Baseline.Verdict == "" {
				t.Fatalf("status %s, baseline %+v", b.Status, b.Baseline)
			}
			if !strings.Contains(strings.Join(b.Warnings, "\n"), "flaky path: TestAdd was flaky") ||
				!strings.Contains(strings.Join(b.Warnings, "\n"), c.note) {
				t.Fatalf("warnings %q", b.Warnings)
			}
			if !strings.Contains(stderr, "the failure is intermittent at the base") {
				t.Fatalf("stderr does not say the failure went to the flaky path:\n%s", stderr)
			}
			summary, _ := os.ReadFile(filepath.Join(out, "summary.md"))
			if !strings.Contains(string(summary), "flaky path: TestAdd") {
				t.Fatalf("summary:\n%s", summary)
			}
		})
	}
}
