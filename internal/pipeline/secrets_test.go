package pipeline

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/demo"
	"github.com/org/mini-agent/internal/redact"
)

// printConfigTest is test code that finds the checkout's credentials the
// way a hostile test would: it prints .git/config, and the header's
// base64, its decoded text and the token, and a remote URL's password, on
// lines of their own.
const printConfigTest = `package cart

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
)

func init() {
	data, err := os.ReadFile(".git/config")
	if err != nil {
		fmt.Println("NOCONFIG", err)
		return
	}
	fmt.Println("CONFIG<<" + string(data) + ">>")
	for _, line := range strings.Split(string(data), "\n") {
		if _, b64, ok := strings.Cut(line, "basic "); ok {
			b64 = strings.TrimSpace(b64)
			dec, _ := base64.StdEncoding.DecodeString(b64)
			_, tok, _ := strings.Cut(string(dec), ":")
			fmt.Println("B64=" + b64)
			fmt.Println("DECODED=" + string(dec))
			fmt.Println("TOKEN=" + tok)
		}
		if _, rest, ok := strings.Cut(line, "x-access-token:"); ok {
			pass, _, _ := strings.Cut(rest, "@")
			fmt.Println("URLPASS=" + pass)
		}
	}
}
`

// rawRunTest keeps run_test's results as the tool returned them, before
// the loop redacts them: the control that the canaries were printed.
type rawRunTest struct {
	agent.Tool
	mu  sync.Mutex
	out []string
}

func (r *rawRunTest) Execute(ctx context.Context, args json.RawMessage) (agent.Result, error) {
	res, err := r.Tool.Execute(ctx, args)
	r.mu.Lock()
	r.out = append(r.out, res.Text)
	r.mu.Unlock()
	return res, err
}

func (r *rawRunTest) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.out, "\n")
}

// actions/checkout persists a token mini-agent's environment does not
// hold (persist-credentials: true, or an App or PAT token of its own) in
// .git/config; test code prints it in every form. None of them reaches
// the bundle, the events, the model's requests, the trace, the summary or
// the progress log; the bundle warns about the persisted credential, by
// key.
func TestPersistedCheckoutCredentialIsRedactedEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	// Not in the environment; the header's token has the ghs_ format, the
	// URL's password no format the patterns know: only the config reader
	// can name it.
	token := "ghs_" + "PERSISTEDcanary0123456789abcdefABCDEF"[:36]
	urlPass := "glpat-" + "URLcanary0123456789abcd"
	decoded := "x-access-token:" + token
	b64 := base64.StdEncoding.EncodeToString([]byte(decoded))
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "leak_test.go"), []byte(printConfigTest), 0o644); err != nil {
		t.Fatal(err)
	}
	commitAll(t, dir, "leak")
	gitRun(t, dir, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic "+b64)
	gitRun(t, dir, "remote", "add", "origin", "https://x-access-token:"+urlPass+"@github.com/o/r")
	configBefore, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}

	m := &recording{scripted: scripted{outs: []agent.Output{
		{ToolCalls: []agent.ToolCall{{Name: "run_test", Arguments: json.RawMessage(`{}`)}}},
		patchCall("--- a/cart.go\n+++ b/cart.go\n@@ -14 +14 @@\n-\tfor i := 1; i < len(items); i++ {\n+\tfor i := 0; i < len(items); i++ {\n"),
		// A model that got hold of them anyway.
		{Message: "## Summary\nfound " + token + " and " + b64 + " and " + urlPass + "\n## Root cause\nx\n## Assumptions\nnone"},
	}}}
	raw := &rawRunTest{}
	wrap := func(tool agent.Tool) agent.Tool {
		if tool.Spec().Name == "run_test" {
			raw.Tool = tool
			return raw
		}
		return tool
	}
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	var progress bytes.Buffer
	out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test -v .", TracePath: trace},
		Deps{Model: script(m), Environ: os.Environ(), Progress: &progress, WrapTool: wrap})
	if err != nil {
		t.Fatal(err)
	}
	if out.Bundle.Status != bundle.StatusFixed {
		t.Fatalf("status %s (%v)", out.Bundle.Status, out.Bundle.Warnings)
	}

	// The control: test code did print every form, in the workspace.
	printed := raw.text()
	for _, want := range []string{"B64=" + b64, "DECODED=" + decoded, "TOKEN=" + token, "URLPASS=" + urlPass} {
		if !strings.Contains(printed, want) {
			t.Fatalf("run_test's raw output lacks %q: the test proves nothing:\n%s", want, printed)
		}
	}

	bundleJSON, _ := json.Marshal(out.Bundle)
	eventsJSON, _ := json.Marshal(out.Events)
	reqJSON, _ := json.Marshal(m.reqs)
	traceData, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"bundle": string(bundleJSON), "events": string(eventsJSON),
		"model requests": string(reqJSON), "trace": string(traceData), "summary": out.Summary, "progress": progress.String()} {
		for what, secret := range map[string]string{"token": token, "base64": b64, "decoded header": decoded,
			"base64 part": b64[16:40], "URL password": urlPass} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s reached the %s", what, name)
			}
		}
	}
	if !strings.Contains(string(reqJSON), "B64=***") || !strings.Contains(string(reqJSON), "URLPASS=***") {
		t.Error("the model did not get run_test's output, redacted")
	}
	warnings := strings.Join(out.Bundle.Warnings, "\n")
	if !strings.Contains(warnings, "persisted credential") || !strings.Contains(warnings, "http.https://github.com/.extraheader") ||
		!strings.Contains(warnings, "remote.origin.url") || !strings.Contains(warnings, "persist-credentials: false") {
		t.Fatalf("warnings %q", out.Bundle.Warnings)
	}
	// The clean checkouts the harness proves on have git's default config:
	// the credential is not there for test code to print.
	for _, c := range out.Bundle.Validation {
		if strings.Contains(c.Tail, "CONFIG<<") && strings.Contains(c.Tail, "extraheader") {
			t.Errorf("a clean checkout's config holds the header: %q", c.Tail)
		}
	}
	// The workspace's config is the user's: left as it was.
	if after, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); !bytes.Equal(after, configBefore) {
		t.Errorf(".git/config changed:\n%s", after)
	}
}

// A change is judged by the values mini-agent knows, and by tokens it
// adds: a token-like fixture the repository already holds (on a context
// line, or on a line the change edits) does not discard it.
func TestChangeLeaksSecret(t *testing.T) {
	t.Parallel()
	fixture := "ghs_" + "FIXTUREfake0123456789abcdefABCDEF0123"
	planted := "ghp_" + "PLANTEDreal0123456789abcdefABCDEF0123"
	known := "known-secret-value-0123"
	s := &session{known: redact.Values([]string{known})}
	for _, c := range []struct {
		name string
		diff string
		want bool
	}{
		{"fixture on a context line", "--- a/t.go\n+++ b/t.go\n@@ -1,2 +1,2 @@\n const fake = \"" + fixture + "\"\n-x := 1\n+x := 2\n", false},
		{"fixture on an edited line", "--- a/t.go\n+++ b/t.go\n@@ -1 +1 @@\n-var fake = \"" + fixture + "\"\n+const fake = \"" + fixture + "\"\n", false},
		{"a new token", "--- a/t.go\n+++ b/t.go\n@@ -1 +1,2 @@\n x := 1\n+// " + planted + "\n", true},
		{"a new file with a token", "--- /dev/null\n+++ b/leak.txt\n@@ -0,0 +1 @@\n+" + planted + "\n", true},
		{"a known value on a context line", "--- a/t.go\n+++ b/t.go\n@@ -1,2 +1,2 @@\n // " + known + "\n-x := 1\n+x := 2\n", true},
		{"a known value base64-encoded", "--- a/t.go\n+++ b/t.go\n@@ -1 +1 @@\n-x\n+" + base64.StdEncoding.EncodeToString([]byte("a:"+known)) + "\n", true},
		{"nothing", "--- a/t.go\n+++ b/t.go\n@@ -1 +1 @@\n-x := 1\n+x := 2\n", false},
	} {
		if got := s.changeLeaksSecret(&bundle.Bundle{Diff: c.diff}); got != c.want {
			t.Errorf("%s: changeLeaksSecret = %t, want %t", c.name, got, c.want)
		}
	}
	// A binary file's content carries no diff lines: known values only.
	b := &bundle.Bundle{Diff: "Binary files differ\n", Files: []bundle.File{{Path: "x.bin", Content: []byte("\x00" + known)}}}
	if !s.changeLeaksSecret(b) {
		t.Error("a known value in a binary file's content was not found")
	}
}

// The harness's own events (test ids, reasons: test output) and the
// progress lines are redacted like the loop's.
func TestHarnessEventsAndProgressAreRedacted(t *testing.T) {
	t.Parallel()
	secret := "harness-secret-0123456789"
	rd := redact.New([]string{secret})
	data := redactEvent(map[string]any{"targets": "TestX/" + secret, "runs": 3}, rd)
	if data["targets"] != "TestX/***" || data["runs"] != 3 {
		t.Fatalf("event data %v", data)
	}
	var buf bytes.Buffer
	w := redactingWriter{w: &buf, rd: rd}
	line := "flaky: run 1/3 [" + secret + "] failed\n"
	if n, err := w.Write([]byte(line)); err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if buf.String() != "flaky: run 1/3 [***] failed\n" {
		t.Fatalf("progress %q", buf.String())
	}
}
