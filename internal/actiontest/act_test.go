package actiontest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/demo"
	"github.com/org/mini-agent/internal/shaproxy"
)

const (
	// actTimeout bounds one act run (install, agent loop, validation, publish).
	actTimeout = 12 * time.Minute
	// requireActEnv turns the missing-act skip into a failure (CI sets it).
	requireActEnv = "MINI_AGENT_REQUIRE_ACT"

	fixtureRepo  = "acme/shop"
	fakeToken    = "ghs_actiontestTOKEN0123456789"
	failingRunID = 4242
	releaseTag   = "v0.0.0-actiontest"
)

// requireAct finds act on PATH, or skips (fails under MINI_AGENT_REQUIRE_ACT=1).
func requireAct(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("act")
	if err == nil {
		return p
	}
	msg := "act (nektos/act) is not on PATH, so the end-to-end test of action.yml cannot run; " +
		"install it with: go install github.com/nektos/act@v0.2.89"
	if os.Getenv(requireActEnv) == "1" {
		t.Fatalf("%s (%s=1 forbids skipping)", msg, requireActEnv)
	}
	t.Skip(msg)
	return ""
}

// actionUnderTest stages the action's own files (action.yml and its install
// script, byte for byte) as the checkout of org/mini-agent@v1 that act uses.
func actionUnderTest(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"action.yml", "scripts/install-action.sh"} {
		data := readRepoFile(t, f)
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// actionReleases serves the release build of this test process as release
// releaseTag of org/mini-agent, with the major tag v1 on the same commit.
func actionReleases(t *testing.T) *releaseHost {
	t.Helper()
	dist, asset := releaseDist(t)
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "release")
	git(t, repo, "tag", "-a", releaseTag, "-m", releaseTag)
	git(t, repo, "tag", "v1")
	git(t, repo, "update-server-info")
	h := newReleaseHost(t, repo)
	for _, name := range []string{asset, "mini-agent_checksums.txt"} {
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		h.assets[releaseTag+"/"+name] = data
		h.mu.Unlock()
	}
	return h
}

// fixtureWorkspace is the failing repository as the runner checks it out:
// the demo example (a real bug, a failing test) and the workflow under test
// (testdata/workflows/NAME) and the policy file (when not empty),
// committed, with origin naming acme/shop. It
// returns the workspace and its tracked files.
func fixtureWorkspace(t *testing.T, workflowName, policy string) (string, map[string]string) {
	t.Helper()
	ws := t.TempDir()
	if err := demo.Materialize(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	wf, err := os.ReadFile(filepath.Join("testdata", "workflows", workflowName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".github", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".github", "workflows", workflowName), wf, 0o644); err != nil {
		t.Fatal(err)
	}
	if policy != "" {
		// The policy is on main, which the action reads through the API;
		// main's commit is the checkout's, so the file is in both (the
		// published tree of a fix must be the one validated here).
		if err := os.WriteFile(filepath.Join(ws, ".github", "mini-agent.yml"), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-q", "-m", "the workflow")
	git(t, ws, "remote", "add", "origin", "https://github.com/"+fixtureRepo+".git")
	files := map[string]string{}
	for _, f := range strings.Split(git(t, ws, "ls-files"), "\n") {
		data, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(data)
	}
	return ws, files
}

// actFixture is one repository whose CI failed, its fake GitHub, and the
// action under test served as org/mini-agent@v1 from a fake release host.
type actFixture struct {
	act, ws, workflow, actionDir, apiURL, script string
	rel                                          *releaseHost
	gh                                           *ghtest.Server
	// proxy maps the checkout's commits to the fake's (Alias).
	proxy *shaproxy.Proxy
	// actArgs are more arguments for act (e.g. --local-repository).
	actArgs []string
	// local is the checkout's commit, which the fake knows as head.
	local, head string
}

// newActFixture sets up the workflow testdata/workflows/NAME; policy, when
// not empty, is the repository's .github/mini-agent.yml on main (the
// default branch the action reads it from), not in the checkout.
func newActFixture(t *testing.T, workflowName, policy string) *actFixture {
	t.Helper()
	f := &actFixture{act: requireAct(t), workflow: workflowName, rel: actionReleases(t), actionDir: actionUnderTest(t)}
	var files map[string]string
	f.ws, files = fixtureWorkspace(t, workflowName, policy)
	f.gh = ghtest.NewServer(t, fakeToken)
	f.head = f.gh.AddRepo(fixtureRepo, "main", files)
	f.local = git(t, f.ws, "rev-parse", "HEAD")
	f.proxy = shaproxy.New(t, f.gh.URL)
	f.proxy.Alias(f.local, f.head)
	f.apiURL = strings.TrimSuffix(f.proxy.URL, "/")
	f.script = filepath.Join(t.TempDir(), "trajectory.jsonl")
	if err := os.WriteFile(f.script, demo.Trajectory, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// failingLog is the CI job log of the failing run: the fixture's real
// `go test` output, with GitHub's timestamps and group markers.
func failingLog(t *testing.T, ws string) string {
	t.Helper()
	cmd := exec.Command("go", "test", "./...")
	cmd.Dir = ws
	cmd.Env = scrubbedEnv()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the fixture's tests pass; the e2e needs a failing run:\n%s", out)
	}
	stamp := "2026-03-01T12:00:00.0000000Z "
	var b strings.Builder
	b.WriteString(stamp + "##[group]Run go test ./...\n" + stamp + "go test ./...\n" + stamp + "##[endgroup]\n")
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		b.WriteString(stamp + l + "\n")
	}
	b.WriteString(stamp + "##[error]Process completed with exit code 1.\n")
	return b.String()
}

// workflowRunEvent is the payload GitHub sends the fixer when "ci" failed.
func workflowRunEvent(t *testing.T, headSHA string) []byte {
	t.Helper()
	repo := map[string]any{
		"id": 1, "name": "shop", "full_name": fixtureRepo, "private": false,
		"owner":          map[string]any{"login": "acme", "type": "Organization"},
		"default_branch": "main",
		"html_url":       "https://github.com/" + fixtureRepo,
	}
	ev := map[string]any{
		"action": "completed",
		"workflow_run": map[string]any{
			"id": failingRunID, "name": "ci", "event": "push", "status": "completed", "conclusion": "failure",
			"head_branch": "main", "head_sha": headSHA, "run_attempt": 1, "path": ".github/workflows/ci.yml",
			"html_url":        "https://github.com/" + fixtureRepo + "/actions/runs/4242",
			"pull_requests":   []any{},
			"repository":      repo,
			"head_repository": repo,
			"head_commit":     map[string]any{"id": headSHA, "message": "example with a bug"},
		},
		"workflow":   map[string]any{"name": "ci", "path": ".github/workflows/ci.yml"},
		"repository": repo,
		"sender":     map[string]any{"login": "octocat", "type": "User"},
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// actRun is one act invocation's result.
type actRun struct {
	err     error
	log     string
	outputs map[string]string
	// outputsFile is where the workflow wrote the outputs (and next to
	// it, with a suffix, any files it copied out).
	outputsFile string
}

// run runs the fixture's workflow in act for event (name and payload), in
// host mode (steps are local processes: no Docker), offline.
func (f *actFixture) run(t *testing.T, event string, payload []byte) actRun {
	t.Helper()
	tmp := t.TempDir()
	outputs, eventFile := filepath.Join(tmp, "outputs"), filepath.Join(tmp, "event.json")
	if err := os.WriteFile(eventFile, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), actTimeout)
	defer cancel()
	args := append([]string{event,
		"-W", ".github/workflows/" + f.workflow,
		"-e", eventFile,
		"-P", "ubuntu-latest=-self-hosted",
		"--local-repository", "org/mini-agent@v1=" + f.actionDir,
		"--action-offline-mode",
		"--action-cache-path", filepath.Join(tmp, "act-cache"),
		"--no-cache-server",
		"--env", "GITHUB_API_URL=" + f.apiURL,
		"--env", "GITHUB_SERVER_URL=" + f.rel.URL,
		"--env", "MINI_AGENT_SCRIPT=" + f.script,
		"--env", "OUTPUTS_FILE=" + outputs,
		"-s", "GITHUB_TOKEN=" + fakeToken,
	}, f.actArgs...)
	cmd := exec.CommandContext(ctx, f.act, args...)
	cmd.Dir = f.ws
	// act runs the steps as its children: on a timeout, kill them all.
	killGroupOnCancel(cmd)
	cmd.WaitDelay = 10 * time.Second
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(scrubbedEnv(),
		// Isolate act from the user's configuration (~/.actrc) ...
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		// ... but keep Go's caches, so the fixture's tests build quickly.
		"GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"), "GOPATH="+goEnv(t, "GOPATH"),
		"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=",
		// Nothing may reach the network: every proxy is a closed port, and
		// only the fakes on loopback are exempt.
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9",
		"http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "all_proxy=http://127.0.0.1:9",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "DOCKER_HOST=unix:///nonexistent/docker.sock",
	)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	res := actRun{err: cmd.Run(), log: log.String(), outputs: map[string]string{}, outputsFile: outputs}
	t.Logf("act %s (%s): %v", event, f.workflow, time.Since(start).Round(time.Millisecond))
	if os.Getenv("ACTIONTEST_VERBOSE") != "" {
		t.Log(res.log)
	}
	if data, err := os.ReadFile(outputs); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				res.outputs[k] = v
			}
		}
	}
	return res
}

// goEnv reads one `go env` value.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// checkActRun fails on an image pull, a network attempt, or an act exit
// status other than wanted (a job with a failed step fails).
func checkActRun(t *testing.T, what string, r actRun, jobFails bool) {
	t.Helper()
	if (r.err != nil) != jobFails {
		t.Fatalf("%s: act: %v (want the job to fail: %v)\n%s", what, r.err, jobFails, r.log)
	}
	for _, bad := range []string{"docker pull", "Pulling image", "🐳", "127.0.0.1:9"} {
		if strings.Contains(r.log, bad) {
			t.Errorf("%s: act's log shows %q: it tried to use Docker or the network\n%s", what, bad, r.log)
		}
	}
}

// checkOutputs checks every documented output of the action.
func checkOutputs(t *testing.T, out map[string]string) {
	t.Helper()
	for _, c := range []struct{ name, re string }{
		{"status", `^fixed$`},
		{"pr-url", `^https?://\S+/pull/\d+$`},
		{"branch", `^mini-agent/fix-[0-9a-f]+$`},
		{"bundle", `\S`},
		{"trace", `\S`},
		{"steps", `^[1-9]\d*$`},
		{"tokens", `^\d+$`},
		{"cost-usd", `^(|\d+(\.\d+)?)$`},
		{"bundle-file", `^present$`},
		{"trace-file", `^present$`},
		{"on-path", `/mini-agent$`},
	} {
		if !regexp.MustCompile(c.re).MatchString(out[c.name]) {
			t.Errorf("output %s = %q, want /%s/ (all: %v)", c.name, out[c.name], c.re, out)
		}
	}
	if out["steps"] != "5" {
		t.Errorf("steps = %q; the scripted trajectory has 5 model turns", out["steps"])
	}
}

// checkPRBody checks what the PR tells the maintainer; runLink ends the
// URL of the failing run.
func checkPRBody(t *testing.T, body, runLink string) {
	t.Helper()
	for _, want := range []string{
		"Prices are in cents",     // the model's assumption, verbatim
		"apply_patch", "run_test", // the step trace
		"<details",                       // ... in a collapsible block
		"`go test -count=1 -json ./...`", // the validation the harness ran, caches off
		"### Proof (run by the harness on clean checkouts)", "**reproduced**", "Validated tree: `", // the before/after proof
		runLink,                 // the failing run
		"mini-agent:signature=", // the hidden marker
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the PR body lacks %q:\n%s", want, body)
		}
	}
	if !regexp.MustCompile(`(?im)^#+ .*assumptions`).MatchString(body) {
		t.Errorf("the PR body has no assumptions section:\n%s", body)
	}
	if strings.Contains(body, fakeToken) {
		t.Error("the PR body contains the token")
	}
}
