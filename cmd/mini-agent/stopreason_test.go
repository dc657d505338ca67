package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/org/mini-agent/internal/bundle"
)

// outageServer is a model endpoint that is down: every Chat Completions
// request is answered 503 (with a short retry-after so retries are quick).
type outageServer struct {
	*httptest.Server
	n atomic.Int64
}

func newOutageServer(t *testing.T) *outageServer {
	t.Helper()
	s := &outageServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("retry-after-ms", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"message":"upstream model unavailable","type":"server_error"}}`))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *outageServer) count() int { return int(s.n.Load()) }

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
var outageWhy = regexp.MustCompile(`^Not fixed: the model API failed after 4 attempts: openai api: status 503 server_error: upstream model unavailable`)

// TestModelOutageLeadsTheSummary (issue 16.3): with the model endpoint
// answering 503, the run ends not-fixed and the summary (CLI and action
// job summary) opens with the reason.
func TestModelOutageLeadsTheSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	srv := newOutageServer(t)
	ws, out := workspace(t), t.TempDir()
	r := runBinary(t, context.Background(), []string{"OPENAI_API_KEY=sk-test"},
		append([]string{"fix"}, jobArgs(ws, out, "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "gpt-4.1")...)...)
	if r.code != 1 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := srv.count(); n != 4 {
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
