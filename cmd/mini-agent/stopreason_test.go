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

// newFakeLLM is an OpenAI-compatible endpoint replaying trajectory, closed
// when the test ends.
func newFakeLLM(t *testing.T, trajectory string) *fakellm.Server {
	t.Helper()
	srv, err := fakellm.New([]byte(trajectory))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestRefusalExitsRefused (issue 22): a model that refuses, or whose reply a
// content filter blocks, is no diagnosis and no fix: exit 5, status and
// stop reason refused, and every report leads with what the model said.
func TestRefusalExitsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	for _, c := range []struct {
		mode, trajectory, why string
	}{
		{"explain", `{"refusal":"I can't help with that request."}`, "the model refused: I can't help with that request (after 1 turn)"},
		{"fix", `{"tool_calls":[{"name":"read_file","arguments":{"path":"cart.go"}}]}` + "\n" + `{"finish_reason":"content_filter"}`,
			"the model refused: the reply was blocked by the provider's content filter (finish_reason content_filter) (after 2 turns)"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			srv := newFakeLLM(t, c.trajectory)
			ws, out := workspace(t), t.TempDir()
			r := runBinary(t, context.Background(), []string{"OPENAI_API_KEY=sk-test"},
				append([]string{c.mode}, jobArgs(ws, out, "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "gpt-4.1")...)...)
			if r.code != 5 {
				t.Fatalf("exit %d, want 5\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			lines := strings.Split(r.stdout, "\n")
			if lines[0] != "mini-agent "+c.mode+": "+c.why || lines[1] != "stop reason: refused" {
				t.Errorf("terminal report starts:\n%s", strings.Join(lines[:min(3, len(lines))], "\n"))
			}
			b := readBundle(t, filepath.Join(out, "bundle.json"))
			if b.Status != bundle.StatusRefused || b.WhyStopped != c.why || b.Run.Refusal == "" {
				t.Errorf("bundle: status %s, why_stopped %q, refusal %q", b.Status, b.WhyStopped, b.Run.Refusal)
			}
			summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
			if err != nil {
				t.Fatal(err)
			}
			if want := "## mini-agent: the model refused\n\n**" + strings.ToUpper(c.why[:1]) + c.why[1:] + "**\n\n"; !strings.HasPrefix(string(summary), want) {
				t.Errorf("summary starts\n%.400s\nwant\n%s", summary, want)
			}
		})
	}
}

// TestMissingUsageStillTripsTheBudget (issue 22): a server that reports no
// usage does not switch the token budget off; the report says the counts
// are estimates.
func TestMissingUsageStillTripsTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	turn := `{"tool_calls":[{"name":"read_file","arguments":{"path":"cart.go"}}],"no_usage":true}` + "\n"
	srv := newFakeLLM(t, turn+strings.Replace(turn, "cart.go", "cart_test.go", 1)+turn)
	ws, out := workspace(t), t.TempDir()
	r := runBinary(t, context.Background(), []string{"OPENAI_API_KEY=sk-test"},
		append([]string{"fix"}, jobArgs(ws, out, "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "llama3.1:8b", "--max-tokens", "3000")...)...)
	if r.code != 1 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	b := readBundle(t, filepath.Join(out, "bundle.json"))
	if b.Run.StopReason != "token_budget" || !b.Usage.Estimated || b.Usage.InputTokens == 0 {
		t.Fatalf("stop %s, usage %+v: %s", b.Run.StopReason, b.Usage, b.Run.Detail)
	}
	if !strings.Contains(r.stdout, "(estimated: usage not reported by the server)") || !strings.Contains(r.stdout, "tokens estimated from the bytes sent and received") {
		t.Errorf("the terminal report does not say the usage is estimated:\n%s", r.stdout)
	}
}
