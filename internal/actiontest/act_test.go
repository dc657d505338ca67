package actiontest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/demo"
)

const (
	// actTimeout bounds one act run (install, agent loop, validation, publish).
	actTimeout = 5 * time.Minute
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
// the demo example (a real bug, a failing test) and the fixer workflow,
// committed, with origin naming acme/shop. It returns the workspace and its
// tracked files.
func fixtureWorkspace(t *testing.T) (string, map[string]string) {
	t.Helper()
	ws := t.TempDir()
	if err := demo.Materialize(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	wf, err := os.ReadFile(filepath.Join("testdata", "workflows", "fixer.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".github", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".github", "workflows", "mini-agent.yml"), wf, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-q", "-m", "the fixer workflow")
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
}

// runAct runs the fixer workflow of ws in act, host mode, offline.
func runAct(t *testing.T, act, ws, apiURL string, rel *releaseHost, actionDir, eventFile, script string) actRun {
	t.Helper()
	tmp := t.TempDir()
	outputs := filepath.Join(tmp, "outputs")
	ctx, cancel := context.WithTimeout(context.Background(), actTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, act, "workflow_run",
		"-W", ".github/workflows/mini-agent.yml",
		"-e", eventFile,
		"-P", "ubuntu-latest=-self-hosted",
		"--local-repository", "org/mini-agent@v1="+actionDir,
		"--action-offline-mode",
		"--action-cache-path", filepath.Join(tmp, "act-cache"),
		"--no-cache-server",
		"--env", "GITHUB_API_URL="+apiURL,
		"--env", "GITHUB_SERVER_URL="+rel.URL,
		"--env", "MINI_AGENT_SCRIPT="+script,
		"--env", "OUTPUTS_FILE="+outputs,
		"-s", "GITHUB_TOKEN="+fakeToken,
	)
	cmd.Dir = ws
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
	res := actRun{err: cmd.Run(), log: log.String(), outputs: map[string]string{}}
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

// TestActionInAct runs the real action.yml in nektos/act (host mode, no
// Docker, no network): the fixer workflow of a repository whose CI failed
// installs the release binary through the action's install step (v1 → the
// release, SHA-256 verified), runs `mini-agent action` with the script
// provider against a fake GitHub, and publishes one PR; a second run of the
// same failure updates that PR instead of opening another.
func TestActionInAct(t *testing.T) {
	act := requireAct(t)
	rel := actionReleases(t)
	actionDir := actionUnderTest(t)
	ws, files := fixtureWorkspace(t)

	gh := ghtest.NewServer(t, fakeToken)
	head := gh.AddRepo(fixtureRepo, "main", files)
	gh.AddRun(fixtureRepo, ghtest.Run{
		ID: failingRunID, Name: "ci", HeadBranch: "main", HeadSHA: head,
		Jobs: []ghtest.Job{{ID: 777, Name: "test", FailedStep: "Run go test ./...", Log: failingLog(t, ws)}},
	})
	// The failure is at the checkout's commit, which the fake knows as head.
	local := git(t, ws, "rev-parse", "HEAD")
	apiURL := aliasGitHub(t, gh.URL, local, head)
	tmp := t.TempDir()
	eventFile := filepath.Join(tmp, "event.json")
	if err := os.WriteFile(eventFile, workflowRunEvent(t, local), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(tmp, "trajectory.jsonl")
	if err := os.WriteFile(script, demo.Trajectory, 0o644); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	first := runAct(t, act, ws, apiURL, rel, actionDir, eventFile, script)
	t.Logf("first act run: %v", time.Since(start).Round(time.Millisecond))
	checkActRun(t, "first run", first)
	if got := first.outputs["status"]; got != "fixed" {
		t.Fatalf("first run: status = %q, want fixed\n%s", got, first.log)
	}
	if !strings.Contains(first.log, "installed mini-agent_") || !strings.Contains(first.log, "(SHA-256 verified)") {
		t.Errorf("the action did not install the verified release binary:\n%s", first.log)
	}
	if rel.downloadsOf(releaseTag) < 2 {
		t.Errorf("release downloads = %v, want the asset and the checksums of %s", rel.downloads, releaseTag)
	}
	checkOutputs(t, first.outputs)

	for _, c := range []struct {
		method, path string
		atLeast      int
	}{
		{"POST", "/repos/" + fixtureRepo + "/git/blobs", 1},
		{"POST", "/repos/" + fixtureRepo + "/git/trees", 1},
		{"POST", "/repos/" + fixtureRepo + "/git/commits", 1},
		{"POST", "/repos/" + fixtureRepo + "/git/refs", 1},
		{"POST", "/repos/" + fixtureRepo + "/pulls", 1},
	} {
		if n := gh.Count(c.method, c.path); n < c.atLeast {
			t.Errorf("%s %s: %d calls, want at least %d", c.method, c.path, n, c.atLeast)
		}
	}
	if n := gh.Count("POST", "/repos/"+fixtureRepo+"/pulls"); n != 1 {
		t.Errorf("first run created %d PRs, want 1", n)
	}
	pulls := gh.Pulls(fixtureRepo)
	if len(pulls) != 1 {
		t.Fatalf("PRs after the first run: %d, want 1", len(pulls))
	}
	pr := pulls[0]
	if !strings.HasSuffix(first.outputs["pr-url"], "/pull/"+strconv.Itoa(pr.Number)) || first.outputs["branch"] != pr.Head {
		t.Errorf("outputs pr-url %q, branch %q; the PR is #%d on %q", first.outputs["pr-url"], first.outputs["branch"], pr.Number, pr.Head)
	}
	checkPRBody(t, pr.Body)
	fixed := gh.Files(fixtureRepo, pr.Head)["cart.go"].Content
	if !strings.Contains(fixed, "for i := 0; i < len(items); i++") {
		t.Errorf("cart.go on %s is not fixed:\n%s", pr.Head, fixed)
	}
	if gh.Files(fixtureRepo, "main")["cart.go"].Content == fixed {
		t.Error("the fix landed on main; it must go to the PR branch")
	}
	if n := gh.LogAuthViolations(); n != 0 {
		t.Errorf("%d log downloads carried the token to the log host", n)
	}

	start = time.Now()
	second := runAct(t, act, ws, apiURL, rel, actionDir, eventFile, script)
	t.Logf("second act run: %v", time.Since(start).Round(time.Millisecond))
	checkActRun(t, "second run", second)
	if n := gh.Count("POST", "/repos/"+fixtureRepo+"/pulls"); n != 1 {
		t.Errorf("after the second run %d PRs were created, want still 1 (update, not duplicate)", n)
	}
	if pulls := gh.Pulls(fixtureRepo); len(pulls) != 1 || second.outputs["pr-url"] != first.outputs["pr-url"] {
		t.Errorf("second run: %d PRs, pr-url %q (first %q)", len(pulls), second.outputs["pr-url"], first.outputs["pr-url"])
	}
	if gh.Count("PATCH", "/repos/"+fixtureRepo+"/pulls/") == 0 {
		t.Error("the second run did not update the existing PR")
	}
}

// checkActRun fails on a failed act run, an image pull, or a network attempt.
func checkActRun(t *testing.T, what string, r actRun) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("%s: act: %v\n%s", what, r.err, r.log)
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

// checkPRBody checks what the PR tells the maintainer.
func checkPRBody(t *testing.T, body string) {
	t.Helper()
	for _, want := range []string{
		"Prices are in cents",     // the model's assumption, verbatim
		"apply_patch", "run_test", // the step trace
		"<details",          // ... in a collapsible block
		"go test",           // the validation the harness ran
		"actions/runs/4242", // the failing run
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the PR body lacks %q:\n%s", want, body)
		}
	}
	if !regexp.MustCompile(`(?i)assumption`).MatchString(body) {
		t.Errorf("the PR body has no assumptions section:\n%s", body)
	}
	if strings.Contains(body, fakeToken) {
		t.Error("the PR body contains the token")
	}
}
