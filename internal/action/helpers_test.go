package action

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/demo"
	"github.com/org/mini-agent/internal/shaproxy"
)

const (
	testVersion = "v0.0.0-test"
	testToken   = "ghs_action_test_token_0123456789"
	testAPIKey  = "sk-test-api-key-0123456789"
	testRepo    = "octo-org/shop"
)

// scene is a repository with the demo's bug: a local checkout (real git, a
// real Go module whose test fails) and the same content in the fake GitHub.
type scene struct {
	s       *ghtest.Server
	proxy   *shaproxy.Proxy
	ws      string // the checkout (GITHUB_WORKSPACE)
	head    string // git's SHA of the checkout's HEAD
	fake    string // ghtest's SHA of the same commit
	script  string
	tmp     string
	testLog string // real `go test` output of the failing checkout
}

func newScene(t *testing.T, policy string) *scene { return newSceneWith(t, policy, nil) }

// newSceneWith is newScene with more files committed (name → content).
func newSceneWith(t *testing.T, policy string, extra map[string]string) *scene {
	t.Helper()
	ctx := t.Context()
	sc := &scene{ws: t.TempDir(), tmp: t.TempDir()}
	if err := demo.Materialize(ctx, sc.ws); err != nil {
		t.Fatal(err)
	}
	for name, content := range extra {
		writeFile(t, filepath.Join(sc.ws, name), content)
	}
	if policy != "" || len(extra) > 0 {
		if policy != "" {
			writeFile(t, filepath.Join(sc.ws, ".github", "mini-agent.yml"), policy)
		}
		git(t, sc.ws, "add", "-A")
		git(t, sc.ws, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "policy")
	}
	sc.head = strings.TrimSpace(git(t, sc.ws, "rev-parse", "HEAD"))
	files := map[string]string{}
	for _, f := range strings.Fields(git(t, sc.ws, "ls-files")) {
		b, err := os.ReadFile(filepath.Join(sc.ws, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(b)
	}
	sc.s = ghtest.NewServer(t, testToken)
	sc.fake = sc.s.AddRepo(testRepo, "main", files)
	sc.proxy = shaproxy.New(t, sc.s.URL)
	sc.proxy.Alias(sc.head, sc.fake)
	sc.script = filepath.Join(sc.tmp, "trajectory.jsonl")
	writeFile(t, sc.script, string(demo.Trajectory))
	return sc
}

// failingLog runs the checkout's tests for real and returns their output,
// as the failed job's log would hold it.
func (sc *scene) failingLog(t *testing.T) string {
	t.Helper()
	if sc.testLog == "" {
		cmd := exec.CommandContext(t.Context(), "go", "test", "./...")
		cmd.Dir = sc.ws
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("the demo's tests pass; expected a failure:\n%s", out)
		}
		sc.testLog = "2026-03-01T12:00:00.0000000Z ##[group]Run go test ./...\n2026-03-01T12:00:00.0000000Z go test ./...\n2026-03-01T12:00:00.0000000Z ##[endgroup]\n" +
			string(out) + "2026-03-01T12:00:01.0000000Z ##[error]Process completed with exit code 1.\n"
	}
	return sc.testLog
}

// env builds the action's environment for event name and payload. Inputs
// are given without the INPUT_ prefix, as in action.yml.
func (sc *scene) env(t *testing.T, event string, payload any, inputs map[string]string) (Env, map[string]string, *bytes.Buffer) {
	t.Helper()
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	evPath := filepath.Join(t.TempDir(), "event.json")
	writeFile(t, evPath, string(b))
	outDir := t.TempDir()
	vars := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": evPath, "GITHUB_REPOSITORY": testRepo,
		"GITHUB_API_URL": sc.proxy.URL, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "4242",
		"GITHUB_WORKSPACE": sc.ws, "RUNNER_TEMP": t.TempDir(), "GITHUB_SHA": sc.head, "GITHUB_REF": "refs/heads/main",
		"GITHUB_OUTPUT": filepath.Join(outDir, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(outDir, "summary.md"),
		"INPUT_GITHUB_TOKEN": testToken, "INPUT_API-KEY": testAPIKey, "INPUT_PROVIDER": "script", "INPUT_SCRIPT": sc.script,
	}
	for k, v := range inputs {
		vars["INPUT_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))] = v
	}
	// The toolchain's own variables, so `go test` works in the workspace.
	for _, name := range []string{"PATH", "HOME", "GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN", "TMPDIR"} {
		if v, ok := os.LookupEnv(name); ok {
			vars[name] = v
		}
	}
	var environ []string
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	stdout := &bytes.Buffer{}
	return Env{Version: testVersion, Getenv: func(k string) string { return vars[k] }, Environ: environ, Stdout: stdout, Stderr: stdout,
		WriteInterval: -1}, vars, stdout
}

// outputs parses the GITHUB_OUTPUT file (name<<delimiter blocks).
func outputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

func workflowRunPayload(runID int64, sha, branch string, prs []int) map[string]any {
	var prList []map[string]any
	for _, n := range prs {
		prList = append(prList, map[string]any{"number": n})
	}
	repoJSON := map[string]any{"full_name": testRepo, "name": "shop"}
	return map[string]any{
		"action": "completed",
		"workflow_run": map[string]any{"id": runID, "name": "CI", "head_branch": branch, "head_sha": sha, "event": "push",
			"status": "completed", "conclusion": "failure", "html_url": "https://github.com/" + testRepo + "/actions/runs/" + strconv.FormatInt(runID, 10),
			"pull_requests": prList, "repository": repoJSON, "head_repository": repoJSON,
			"head_commit": map[string]any{"id": sha, "message": "add cart totals"}},
		"repository": map[string]any{"full_name": testRepo, "name": "shop", "default_branch": "main"},
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// actionMain runs the action and returns its exit code.
func actionMain(ctx context.Context, env Env) int { return Run(ctx, env).Code }

// publishMain runs publish and returns its exit code.
func publishMain(ctx context.Context, env Env, bundlePath, cfgPath string) int {
	return Publish(ctx, env, bundlePath, cfgPath).Code
}
