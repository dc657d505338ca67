package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/testcmd"
)

// copyFixture copies testdata/NAME into a fresh directory and opens it.
func copyFixture(t *testing.T, name string) *Workspace {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return openWS(t, dst)
}

func openWS(t *testing.T, dir string) *Workspace {
	t.Helper()
	ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// goFailures is a tiny Summarize for go test output.
func goFailures(out []byte) []string {
	var fails []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "--- FAIL:") {
			fails = append(fails, l)
		}
	}
	return fails
}

func execute(t *testing.T, rt *RunTest, args string) agent.Result {
	t.Helper()
	res, err := rt.Execute(t.Context(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("Execute(%s): %v", args, err)
	}
	return res
}

// TestRunTestGoNarrowing runs real `go test` on the fixture module.
func TestRunTestGoNarrowing(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	ws := copyFixture(t, "run_gomod")
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "go test -count=1 -v ./a ./b"), Summarize: goFailures})
	all := []string{"ALPHA RAN", "BETA RAN", "GAMMA RAN", "SUB ONE RAN", "SUB TWO RAN", "DELTA RAN"}
	tests := []struct {
		name     string
		args     string
		wantCode string
		want     []string // markers that must appear; the others of all must not
		wantText []string
	}{
		{"full suite", `{}`, agent.CodeFailed, all,
			[]string{"status: FAILED", "exit_code: 1", "failing tests (1):", "--- FAIL: TestGamma", "GAMMA FAILED"}},
		{"one test", `{"tests":["TestAlpha"]}`, "", []string{"ALPHA RAN"},
			[]string{"status: PASSED", "exit_code: 0", "timed_out: false", "command: go test -count=1 -v -run '^(TestAlpha)$' ./a ./b"}},
		{"subtest with space", `{"tests":["TestSub/two words"]}`, "", []string{"SUB TWO RAN"}, nil},
		{"subtest and tests", `{"tests":["TestSub/one","TestDelta","TestBeta"]}`, "", []string{"SUB ONE RAN", "DELTA RAN", "BETA RAN"}, nil},
		{"package as a single string", `{"packages":"b"}`, "", []string{"DELTA RAN"}, []string{"command: go test -count=1 -v ./b"}},
		{"file and test", `{"packages":["a/a_test.go"],"tests":["TestGamma"]}`, agent.CodeFailed, []string{"GAMMA RAN"},
			[]string{"command: go test -count=1 -v -run '^(TestGamma)$' ./a", "--- FAIL: TestGamma"}},
		{"no match", `{"tests":["TestNope"]}`, "", nil, []string{"status: PASSED", "note: some packages reported \"no tests to run\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := execute(t, rt, tt.args)
			if res.Code != tt.wantCode || res.IsError != (tt.wantCode != "") {
				t.Fatalf("code %q, want %q:\n%s", res.Code, tt.wantCode, res.Text)
			}
			for _, m := range all {
				if got, want := strings.Contains(res.Text, m), contains(tt.want, m); got != want {
					t.Errorf("output has %q: %v, want %v:\n%s", m, got, want, res.Text)
				}
			}
			for _, w := range tt.wantText {
				if !strings.Contains(res.Text, w) {
					t.Errorf("text lacks %q:\n%s", w, res.Text)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// TestRunTestEnvScrubbed proves canary secrets never reach the tests.
func TestRunTestEnvScrubbed(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	ws := copyFixture(t, "run_gomod")
	canaries := map[string]string{
		"GITHUB_TOKEN":                 "canary-github-token-1111",
		"ACTIONS_RUNTIME_TOKEN":        "canary-runtime-token-2222",
		"ACTIONS_ID_TOKEN_REQUEST_URL": "https://canary-oidc.example/3333",
		"OPENAI_API_KEY":               "canary-openai-4444",
		"ANTHROPIC_API_KEY":            "canary-anthropic-5555",
		"MY_API_KEY":                   "canary-my-api-key-6666",
		"FOO_SECRET":                   "canary-foo-secret-7777",
		"db_password":                  "canary-db-password-8888",
		"DEPLOY_CONF":                  "canary-configured-9999",
		// Names no deny-list recognises: only the allow-list keeps them out.
		"DEPLOY_CREDS":      "canary-deploy-creds-1010",
		"AWS_ACCESS_KEY_ID": "canary-aws-key-id-1212",
		"DATABASE_URL":      "postgres://u:canary-db-url-1313@h/db",
	}
	env := os.Environ()
	for k, v := range canaries {
		env = append(env, k+"="+v)
	}
	env = append(env, "HARMLESS_VAR=visible-harmless")
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "go test -count=1 -v ./..."), Env: env, SecretNames: []string{"DEPLOY_CONF"},
		EnvAllow: []string{"HARMLESS_VAR", "DEPLOY_CONF"}})
	out, err := rt.Run(t.Context(), testcmd.Selection{Tests: []string{"TestPrintEnv"}, Packages: []string{"envp"}}, testcmd.Plain)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(out.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	text := out.Text()
	for _, want := range []string{"ENV-DUMP-END", "ENV:PATH=", "ENV:HOME=", "ENV:HARMLESS_VAR=visible-harmless"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	for k, v := range canaries {
		if strings.Contains(string(log), v) || strings.Contains(text, v) || strings.Contains(string(log), "ENV:"+k+"=") {
			t.Errorf("secret %s reached the test process", k)
		}
	}
}

func TestRunTestShellCommand(t *testing.T) {
	t.Parallel()
	ws := openWS(t, t.TempDir())
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "echo one && echo two >&2; exit 4")})
	res := execute(t, rt, `{}`)
	for _, want := range []string{"status: FAILED", "exit_code: 4", "command: sh -c 'echo one && echo two >&2; exit 4'", "one\ntwo\n"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, res.Text)
		}
	}
	res = execute(t, rt, `{"tests":["TestA"]}`)
	if res.Code != agent.CodeInvalidArgument || !strings.Contains(res.Text, "uses shell syntax") {
		t.Fatalf("narrowing a shell command: %+v", res)
	}
}

func TestRunTestTimeout(t *testing.T) {
	t.Parallel()
	ws := openWS(t, t.TempDir())
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, `sh -c 'echo started; sleep 30'`), Timeout: time.Second})
	start := time.Now()
	res := execute(t, rt, `{}`)
	if time.Since(start) > 20*time.Second {
		t.Fatalf("timeout not enforced: %v", time.Since(start))
	}
	if res.Code != agent.CodeTimeout || !res.IsError {
		t.Fatalf("code %q:\n%s", res.Code, res.Text)
	}
	for _, want := range []string{"status: TIMEOUT", "timed_out: true", "started"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, res.Text)
		}
	}
}

func TestRunTestCancel(t *testing.T) {
	t.Parallel()
	ws := openWS(t, t.TempDir())
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, `sleep 30`)})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := rt.Execute(ctx, json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("cancelled run: err %v", err)
	}
}

func TestRunTestBadCallsAndConfig(t *testing.T) {
	t.Parallel()
	ws := openWS(t, t.TempDir())
	tests := []struct {
		name, command, args, wantCode, wantMsg string
	}{
		{"unknown argument", "go test ./...", `{"test":["TestA"]}`, agent.CodeInvalidArgument, `unknown field \"test\"`},
		{"wrong type", "go test ./...", `{"tests":5}`, agent.CodeInvalidArgument, "must be an array of strings"},
		{"not json", "go test ./...", `tests: TestA`, agent.CodeInvalidArgument, "run_test arguments"},
		{"hostile name", "go test ./...", `{"tests":["; rm -rf /"]}`, agent.CodeInvalidArgument, "invalid narrowing"},
		{"no command", "", `{}`, agent.CodeFailed, "run_test is not configured"},
		{"missing program", "mini-agent-no-such-runner --all", `{}`, agent.CodeFailed, "configuration problem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := execute(t, NewRunTest(ws, RunTestConfig{Command: mustParse(t, tt.command)}), tt.args)
			if res.Code != tt.wantCode || !res.IsError || !strings.Contains(res.Text, tt.wantMsg) {
				t.Fatalf("got %+v, want %s containing %q", res, tt.wantCode, tt.wantMsg)
			}
		})
	}
	if entries, _ := os.ReadDir(ws.RunsDir()); len(entries) != 0 {
		t.Errorf("refused calls left logs: %v", entries)
	}
}

const bigOutputBytes = 10 << 20

// bigOutputCommand prints 10 MiB of numbered-looking lines, fast.
var bigOutputCommand = fmt.Sprintf(`sh -c 'yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c %d; echo; echo LAST-LINE'`, bigOutputBytes)

// TestRunTestLargeOutput is not parallel: it measures this process's
// allocations while the command streams 10 MiB through it.
func TestRunTestLargeOutput(t *testing.T) {
	ws := openWS(t, t.TempDir())
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, bigOutputCommand)})

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := execute(t, rt, `{}`)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.2f MiB for %d MiB of output; answer %d bytes", float64(alloc)/(1<<20), bigOutputBytes>>20, len(res.Text))
	if alloc > 6<<20 {
		t.Errorf("allocated %d bytes for a %d-byte output", alloc, bigOutputBytes)
	}
	if res.IsError || len(res.Text) > maxAnswerBytes {
		t.Fatalf("answer: error %v, %d bytes", res.IsError, len(res.Text))
	}
	var startLine int
	for _, l := range strings.Split(res.Text, "\n") {
		if strings.Contains(l, "lines omitted") {
			if _, err := fmt.Sscanf(l[strings.Index(l, `"start_line":`):], `"start_line":%d`, &startLine); err != nil {
				t.Fatalf("marker without start_line: %q", l)
			}
			if !strings.Contains(l, `read_file {"path":"@runs/1.log"`) {
				t.Fatalf("marker without read_file hint: %q", l)
			}
		}
	}
	if startLine == 0 || !strings.HasSuffix(res.Text, "LAST-LINE\n") || !strings.Contains(res.Text, "status: PASSED") {
		t.Fatalf("answer lacks marker or tail:\n%.2000s", res.Text)
	}

	log, err := os.ReadFile(filepath.Join(ws.RunsDir(), "1.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != bigOutputBytes+len("\nLAST-LINE\n") {
		t.Fatalf("log has %d bytes, want the full output", len(log))
	}
	// The hint is exact: the head shown ends at line startLine-1 of the log.
	lines := strings.SplitN(string(log), "\n", startLine+1)
	out := res.Text[strings.Index(res.Text, "\n0123"):]
	head := out[:strings.Index(out, "... ")]
	if got, want := strings.Count(head, "\n")-1, startLine-1; got != want {
		t.Fatalf("head shows %d lines, hint says the rest starts at line %d", got, startLine)
	}
	if lines[startLine-1] == "" {
		t.Fatalf("line %d of the log is empty", startLine)
	}
}

// BenchmarkRunTestLargeOutput reports memory per 10 MiB run:
// go test -run '^$' -bench RunTestLargeOutput -benchmem ./tools/
func BenchmarkRunTestLargeOutput(b *testing.B) {
	ws, err := OpenWorkspace(b.TempDir(), WorkspaceOptions{RunsDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(b, bigOutputCommand)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Run(b.Context(), testcmd.Selection{}, testcmd.Plain); err != nil {
			b.Fatal(err)
		}
	}
}
