package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/fakellm"
)

// newOutage is a model endpoint that is down (every request answered 503),
// closed when the test ends.
func newOutage(t *testing.T) *fakellm.Outage {
	t.Helper()
	o := fakellm.NewOutage()
	t.Cleanup(o.Close)
	return o
}

// TestNoPatchRunSaysWhy: a run whose model ends without a patch says so on
// the terminal, in the summary and in the bundle.
func TestNoPatchRunSaysWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	ws, out := workspace(t), t.TempDir()
	r := runBinary(t, context.Background(), nil, append([]string{"fix"}, jobArgs(ws, out, "--provider", "script", "--script", "testdata/nofix.jsonl")...)...)
	if r.code != 1 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	const why = "not fixed: the model ended without a patch after 2 turns"
	lines := strings.Split(r.stdout, "\n")
	if lines[0] != "mini-agent fix: "+why || lines[1] != "stop reason: final_message" ||
		!strings.HasPrefix(lines[2], "the model finished with a final message after 2 model turns") {
		t.Errorf("terminal report starts:\n%s", strings.Join(lines[:min(3, len(lines))], "\n"))
	}
	if b := readBundle(t, filepath.Join(out, "bundle.json")); b.WhyStopped != why || b.Status != bundle.StatusNotFixed {
		t.Errorf("bundle why_stopped = %q (status %s), want %q", b.WhyStopped, b.Status, why)
	}
	summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "## mini-agent: not fixed\n\n**Not fixed: the model ended without a patch after 2 turns**\n\n"; !strings.HasPrefix(string(summary), want) {
		t.Errorf("summary starts\n%.300s\nwant\n%s", summary, want)
	}
	if !strings.Contains(string(summary), "<sub>Written by mini-agent ") {
		t.Error("the summary has no version footer")
	}
}

// outageWhy is how a report names a model endpoint that stayed down.
var outageWhy = regexp.MustCompile(`^Not fixed: the model API failed after 4 attempts: openai api: status 503 server_error: ` + regexp.QuoteMeta(fakellm.OutageMessage))

// TestModelOutageLeadsTheSummary (issue 16.3): with the model endpoint
// answering 503, the run ends not-fixed and the summary (CLI and action
// job summary) opens with the reason.
func TestModelOutageLeadsTheSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	srv := newOutage(t)
	ws, out := workspace(t), t.TempDir()
	r := runBinary(t, context.Background(), []string{"OPENAI_API_KEY=sk-test"},
		append([]string{"fix"}, jobArgs(ws, out, "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "gpt-4.1")...)...)
	if r.code != 1 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := srv.Requests(); n != 4 {
		t.Errorf("%d model requests, want 4 (one try and three retries)", n)
	}
	summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(summary), "\n\n")
	first, _, _ := strings.Cut(rest, "\n")
	if head != "## mini-agent: not fixed" || !outageWhy.MatchString(strings.TrimPrefix(first, "**")) {
		t.Errorf("summary starts\n%.400s", summary)
	}
	if !strings.HasPrefix(r.stdout, "mini-agent fix: not fixed: the model API failed after 4 attempts: openai api: status 503") {
		t.Errorf("terminal report starts\n%.300s", r.stdout)
	}
}
