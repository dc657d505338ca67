package pipeline

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider/pricing"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/demo"
	"github.com/org/mini-agent/internal/redact"
	"github.com/org/mini-agent/tools"
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
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
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
	out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./..."}, Deps{Model: script(m), Environ: append(os.Environ(), "GITHUB_TOKEN="+canary)})
	if err != nil {
		t.Fatal(err)
	}
	b := out.Bundle
	if b.Status != bundle.StatusNotFixed || b.Diff != "" || len(b.Files) != 0 {
		t.Fatalf("status %s diff %q files %v", b.Status, b.Diff, b.Files)
	}
	if !strings.Contains(strings.Join(b.Warnings, "\n"), "secret") {
		t.Fatalf("warnings %v", b.Warnings)
	}
	if strings.Contains(out.Summary, canary) {
		t.Fatal("canary in the summary")
	}
}

// recording is scripted and keeps every request the model received.
type recording struct {
	scripted
	reqs []agent.Request
}

func (r *recording) Sample(ctx context.Context, req agent.Request) (agent.Output, error) {
	r.reqs = append(r.reqs, req)
	return r.scripted.Sample(ctx, req)
}

// A test can read a secret the environment scrub cannot hide (the token
// actions/checkout writes into .git/config) and print it; a hostile model
// can echo it in its calls and messages. None of it may reach the model,
// the bundle (validation tails included), the trace or the summary, raw or
// base64-encoded.
func TestSecretsPrintedByTestsAreRedactedEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	const canary = "ghs_LEAKcanary0123456789abcdefABCDEF"
	b64 := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + canary))
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	leak := "package cart\n\nimport \"fmt\"\n\nfunc init() { fmt.Println(\"LEAK " + canary + " " + b64 + "\") }\n"
	if err := os.WriteFile(dir+"/leak_test.go", []byte(leak), 0o644); err != nil {
		t.Fatal(err)
	}
	// Committed: the harness reproduces and validates on clean checkouts of
	// the commit, which hold tracked files only.
	commitAll(t, dir, "leak")
	searchArgs, _ := json.Marshal(map[string]string{"query": canary})
	m := &recording{scripted: scripted{outs: []agent.Output{
		{ToolCalls: []agent.ToolCall{{Name: "run_test", Arguments: json.RawMessage(`{}`)}}},
		{ToolCalls: []agent.ToolCall{{Name: "search", Arguments: searchArgs}}},
		patchCall("--- a/cart.go\n+++ b/cart.go\n@@ -14 +14 @@\n-\tfor i := 1; i < len(items); i++ {\n+\tfor i := 0; i < len(items); i++ {\n"),
		{Message: "## Summary\nthe token is " + canary + " aka " + b64 + "\n## Root cause\nx\n## Assumptions\nnone"},
	}}}
	trace := t.TempDir() + "/trace.jsonl"
	out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test -v .", TracePath: trace}, Deps{Model: script(m), Environ: append(os.Environ(), "GITHUB_TOKEN="+canary)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Bundle.Status != bundle.StatusFixed {
		t.Fatalf("status %s (%v)", out.Bundle.Status, out.Bundle.Warnings)
	}
	bundleJSON, _ := json.Marshal(out.Bundle)
	eventsJSON, _ := json.Marshal(out.Events)
	reqJSON, _ := json.Marshal(m.reqs)
	traceData, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(bundleJSON), "LEAK") {
		t.Fatalf("the fixture's output is not in the bundle: the test proves nothing: %s", bundleJSON)
	}
	for name, text := range map[string]string{"bundle": string(bundleJSON), "events": string(eventsJSON),
		"model requests": string(reqJSON), "trace": string(traceData), "summary": out.Summary} {
		if strings.Contains(text, canary) {
			t.Errorf("the canary reached the %s", name)
		}
		if strings.Contains(text, b64) || strings.Contains(text, b64[24:44]) {
			t.Errorf("the base64-encoded canary reached the %s", name)
		}
	}
}

// A model that renames (or deletes, or skips) the failing test makes the
// narrowed rerun match nothing, which go test answers with exit 0: the
// harness must not call that a validated fix.
func TestFailingTestThatNoLongerRunsIsNotValidated(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	for name, patch := range map[string]string{
		"renamed": "--- a/cart_test.go\n+++ b/cart_test.go\n@@ -5 +5 @@\n-func TestTotal(t *testing.T) {\n+func TestTotalLater(t *testing.T) {\n+\tt.Skip(\"later\")\n",
		"skipped": "--- a/cart_test.go\n+++ b/cart_test.go\n@@ -5 +5,2 @@\n func TestTotal(t *testing.T) {\n+\tt.Skip(\"later\")\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := demo.Materialize(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			m := &scripted{outs: []agent.Output{
				patchCall(patch),
				{Message: "## Summary\ndone\n## Root cause\nx\n## Assumptions\nnone"},
			}}
			out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./..."}, Deps{Model: script(m)})
			if err != nil {
				t.Fatal(err)
			}
			b := out.Bundle
			if len(b.Files) != 1 {
				t.Fatalf("the patch did not apply: %v %v", b.Files, b.Steps)
			}
			if b.Status == bundle.StatusFixed || b.Validated() {
				t.Fatalf("status %s, validation %+v", b.Status, b.Validation)
			}
		})
	}
}

// AGENTS.md comes from the repository: a symlink to .git/config (where
// actions/checkout keeps the token) must not put that file in the prompt.
func TestAgentsMDSymlinkIntoGitIsNotRead(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	const canary = "PRIVATE-git-config-canary"
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.OpenFile(dir+"/.git/config", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.WriteString("[x]\n\tsecret = " + canary + "\n"); err != nil {
		t.Fatal(err)
	}
	cfg.Close()
	if err := os.Remove(dir + "/AGENTS.md"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git/config", dir+"/AGENTS.md"); err != nil {
		t.Fatal(err)
	}
	m := &recording{scripted: scripted{outs: []agent.Output{{Message: "## Summary\nno\n## Root cause\nx\n## Assumptions\nnone"}}}}
	if _, err := Run(context.Background(), Job{Mode: agent.ModeExplain, Workdir: dir, TestCommand: "go test ./..."}, Deps{Model: script(m)}); err != nil {
		t.Fatal(err)
	}
	if len(m.reqs) == 0 {
		t.Fatal("no model request")
	}
	if strings.Contains(m.reqs[0].System, canary) {
		t.Fatal(".git/config reached the system prompt through the AGENTS.md symlink")
	}
}

// The kept tail of a validation output starts at a line: a byte cut could
// keep the end of a secret, which the redactor then no longer recognises.
func TestCheckTailStartsAtALine(t *testing.T) {
	t.Parallel()
	const secret = "ghs_TAILcanary0123456789abcdefABCDEF"
	// len(rest) is tailBytes-10: a byte cut keeps the secret's last 10 bytes.
	rest := "\n" + strings.Repeat("x", tailBytes-10-len("\n\nlast line\n")) + "\nlast line\n"
	out := "line before the secret " + secret + rest
	c := checkFrom("full", tools.RunOutcome{Output: out})
	if tail := redact.New([]string{secret})(c.Tail); strings.Contains(tail, secret[len(secret)-10:]) {
		t.Fatalf("the tail keeps part of the secret: %.60q", tail)
	}
	if !strings.HasSuffix(c.Tail, "last line\n") {
		t.Fatalf("the tail lost its end: %q", c.Tail[len(c.Tail)-20:])
	}
}

// run_test executes code the model wrote, which can write what apply_patch
// may not: a change that touches a protected path is not a fix.
func TestProtectedPathWrittenByTestCodeIsNotAFix(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	sneaky := "--- /dev/null\n+++ b/sneaky_test.go\n@@ -0,0 +1,8 @@\n+package cart\n+\n+import \"os\"\n+\n+func init() {\n+\tos.MkdirAll(\".github/workflows\", 0o755)\n+\tos.WriteFile(\".github/workflows/evil.yml\", []byte(\"on: push\\n\"), 0o644)\n+}\n"
	m := &scripted{outs: []agent.Output{
		patchCall(sneaky),
		{ToolCalls: []agent.ToolCall{{Name: "run_test", Arguments: json.RawMessage(`{}`)}}},
		patchCall("--- a/cart.go\n+++ b/cart.go\n@@ -14 +14 @@\n-\tfor i := 1; i < len(items); i++ {\n+\tfor i := 0; i < len(items); i++ {\n"),
		{Message: "## Summary\ndone\n## Root cause\nx\n## Assumptions\nnone"},
	}}
	out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./..."}, Deps{Model: script(m)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/.github/workflows/evil.yml"); err != nil {
		t.Fatalf("the test code did not run, the test proves nothing: %v", err)
	}
	b := out.Bundle
	if b.Status == bundle.StatusFixed {
		t.Fatalf("status %s with files %v", b.Status, paths(b.Files))
	}
	for _, f := range b.Files {
		if strings.HasPrefix(f.Path, ".github/") {
			t.Fatalf("the bundle carries %s", f.Path)
		}
	}
	if !strings.Contains(strings.Join(b.Warnings, "\n"), ".github/workflows/evil.yml") {
		t.Fatalf("no warning names the protected path: %v", b.Warnings)
	}
}

func paths(files []bundle.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// An output path that cannot be written is a configuration error found
// before the run, not an error after a whole (paid) run that still exits 0.
func TestUnwritableOutputPathIsAUsageError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	for _, o := range []Job{{BundlePath: filepath.Join(missing, "b.json")}, {SummaryPath: filepath.Join(missing, "s.md")}} {
		m := &scripted{outs: []agent.Output{{Message: "## Summary\nx\n## Root cause\nx\n## Assumptions\nnone"}}}
		o.Mode, o.Workdir, o.TestCommand = agent.ModeExplain, dir, "go test ./..."
		_, err := Run(context.Background(), o, Deps{Model: script(m)})
		var ce *ConfigError
		if !errors.As(err, &ce) || (ce.Field != "bundle" && ce.Field != "summary") || !strings.Contains(err.Error(), "its directory does not exist") {
			t.Errorf("bundle %q summary %q: err %v, want a ConfigError naming the field", o.BundlePath, o.SummaryPath, err)
		}
		if len(m.outs) != 1 {
			t.Errorf("the model was asked before the configuration was checked (err %v)", err)
		}
	}
}

// A test command no shell could parse is a configuration error found
// before anything runs: no test run, no model call.
func TestUnparsableTestCommandIsAUsageError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	for _, line := range []string{"touch " + marker + " 'unterminated", `touch ` + marker + ` "unterminated`, "touch " + marker + ` \`} {
		m := &scripted{outs: []agent.Output{{Message: "## Summary\nx\n## Root cause\nx\n## Assumptions\nnone"}}}
		_, err := Run(context.Background(), Job{Mode: agent.ModeExplain, Workdir: dir, TestCommand: line}, Deps{Model: script(m)})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "test-command" {
			t.Errorf("%q: err %v, want a ConfigError naming the test command", line, err)
		}
		if len(m.outs) != 1 {
			t.Errorf("%q: the model was asked", line)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%q: the command ran", line)
		}
	}
}

// A binary file's diff is a compressed git binary patch, where the
// secret-in-the-change check cannot see a secret: the files' contents, which
// the bundle carries to the publisher, must be checked too.
func TestSecretInABinaryFileIsDiscarded(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	const canary = "ghs_BINARYcanary0123456789abcdefABCD"
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	// Stands for test code that found the token and wrote it to a file.
	writer := "--- /dev/null\n+++ b/writer_test.go\n@@ -0,0 +1,7 @@\n+package cart\n+\n+import \"os\"\n+\n+func init() {\n+\tos.WriteFile(\"blob.bin\", []byte(\"\\x00\\x01\"+os.Getenv(\"GO_LEAKED\")), 0o644)\n+}\n"
	m := &scripted{outs: []agent.Output{
		patchCall(writer),
		{ToolCalls: []agent.ToolCall{{Name: "run_test", Arguments: json.RawMessage(`{}`)}}},
		patchCall("--- a/cart.go\n+++ b/cart.go\n@@ -14 +14 @@\n-\tfor i := 1; i < len(items); i++ {\n+\tfor i := 0; i < len(items); i++ {\n"),
		{Message: "## Summary\ndone\n## Root cause\nx\n## Assumptions\nnone"},
	}}
	// GO_LEAKED is allow-listed and not a secret name, so it reaches the
	// test; GITHUB_TOKEN has the same value.
	env := append(os.Environ(), "GO_LEAKED="+canary, "GITHUB_TOKEN="+canary)
	out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./..."}, Deps{Model: script(m), Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(dir + "/blob.bin"); err != nil || !strings.Contains(string(data), canary) {
		t.Fatalf("the test code did not write the blob, the test proves nothing: %v", err)
	}
	b := out.Bundle
	for _, f := range b.Files {
		if strings.Contains(string(f.Content), canary) {
			t.Fatalf("the bundle carries the secret in %s (status %s)", f.Path, b.Status)
		}
	}
	if b.Status == bundle.StatusFixed {
		t.Fatalf("status %s", b.Status)
	}
}

// A huge file left by the tests ends the run as not fixed, with the file
// named, instead of an error (or the harness reading it whole).
func TestHugeChangedFileIsNotAFix(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	writer := "--- /dev/null\n+++ b/writer_test.go\n@@ -0,0 +1,7 @@\n+package cart\n+\n+import \"os\"\n+\n+func init() {\n+\tos.WriteFile(\"huge.out\", nil, 0o644); os.Truncate(\"huge.out\", 17<<20)\n+}\n"
	m := &scripted{outs: []agent.Output{
		patchCall(writer),
		{ToolCalls: []agent.ToolCall{{Name: "run_test", Arguments: json.RawMessage(`{}`)}}},
		{Message: "## Summary\ndone\n## Root cause\nx\n## Assumptions\nnone"},
	}}
	out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./..."}, Deps{Model: script(m)})
	if err != nil {
		t.Fatal(err)
	}
	if b := out.Bundle; b.Status != bundle.StatusNotFixed || len(b.Files) != 0 || !strings.Contains(strings.Join(b.Warnings, "\n"), "huge.out") {
		t.Fatalf("status %s files %v warnings %v", b.Status, paths(b.Files), b.Warnings)
	}
}

// `cd repo && mini-agent fix --workdir . --trace trace.jsonl`: the trace is
// the harness's output, not part of the change.
func TestTraceInsideTheWorkspaceIsNotPartOfTheChange(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	m := &scripted{outs: []agent.Output{
		patchCall("--- a/cart.go\n+++ b/cart.go\n@@ -14 +14 @@\n-\tfor i := 1; i < len(items); i++ {\n+\tfor i := 0; i < len(items); i++ {\n"),
		{Message: "## Summary\ndone\n## Root cause\nx\n## Assumptions\nnone"},
	}}
	out, err := Run(context.Background(), Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", TracePath: filepath.Join(dir, "trace.jsonl")}, Deps{Model: script(m)})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(out.Bundle.Files); len(got) != 1 || got[0] != "cart.go" || strings.Contains(out.Bundle.Diff, "trace.jsonl") {
		t.Fatalf("changed files %v", got)
	}
	if out.Bundle.Status != bundle.StatusFixed {
		t.Fatalf("status %s", out.Bundle.Status)
	}
}

// The test command's environment is an allow-list: a variable the
// maintainer names in TestEnv reaches it, one not named does not, and a
// secret-looking name never does, named or not.
func TestTestEnvReachesTheTestCommand(t *testing.T) {
	t.Parallel()
	for _, named := range []bool{false, true} {
		dir := t.TempDir()
		if err := demo.Materialize(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
		m := &scripted{outs: []agent.Output{{Message: "## Summary\nno\n## Root cause\nx\n## Assumptions\nnone"}}}
		env := append(os.Environ(), "APP_DB_URL=postgres://db", "APP_API_TOKEN=tok-canary")
		o := Job{Mode: agent.ModeFix, Workdir: dir,
			TestCommand: `sh -c 'printf "%s|%s" "$APP_DB_URL" "$APP_API_TOKEN" > seen.env; exit 1'`}
		if named {
			o.TestEnv = []string{"APP_DB_URL", "APP_API_TOKEN"}
		}
		if _, err := Run(context.Background(), o, Deps{Model: script(m), Environ: env}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "seen.env"))
		if err != nil {
			t.Fatalf("named=%v: the test command did not run: %v", named, err)
		}
		want := "|"
		if named {
			want = "postgres://db|"
		}
		if string(data) != want {
			t.Errorf("named=%v: the test command saw %q, want %q", named, data, want)
		}
	}
}

// script is m as the run's model, reported as the script provider (what
// provider.Choice.Use gives for a script Choice; importing provider would
// link the model SDKs into this test binary).
func script(m agent.Model) pricing.Selected {
	return pricing.New(m, "script", "script", nil)
}

// commitAll commits everything in dir (a repository made by the test).
func commitAll(t *testing.T, dir, msg string) {
	t.Helper()
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", msg)
}

// gitRun runs git in dir with no global or system configuration.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
