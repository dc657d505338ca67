package actiontest

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
)

// pushEvent is the payload of a push of sha to main.
func pushEvent(t *testing.T, sha string) []byte {
	t.Helper()
	repo := map[string]any{
		"id": 1, "name": "shop", "full_name": fixtureRepo, "private": false,
		"owner":          map[string]any{"login": "acme", "name": "acme"},
		"default_branch": "main", "master_branch": "main",
		"html_url": "https://github.com/" + fixtureRepo,
	}
	b, err := json.Marshal(map[string]any{
		"ref": "refs/heads/main", "before": strings.Repeat("0", 40), "after": sha,
		"created": false, "deleted": false, "forced": false,
		"head_commit": map[string]any{"id": sha, "message": "the workflow"},
		"repository":  repo,
		"pusher":      map[string]any{"name": "octocat"},
		"sender":      map[string]any{"login": "octocat", "type": "User"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestActionInActWorkflowRun runs the real action.yml in nektos/act (host
// mode, no Docker, no network) as the README's workflow_run fixer: after CI
// failed, the action installs the release binary through its install step
// (v1 → the release, SHA-256 verified), runs `mini-agent action` with the
// script provider against a fake GitHub, and publishes one PR through the
// Git Data API, under the policy file read from the default branch. A second
// run of the same failure updates that PR instead of opening another.
func TestActionInActWorkflowRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	f := newActFixture(t, "fixer.yml", "reviewers: [octo-reviewer]\n")
	f.gh.AddRun(fixtureRepo, ghtest.Run{
		ID: failingRunID, Name: "ci", HeadBranch: "main", HeadSHA: f.head,
		Jobs: []ghtest.Job{{ID: 777, Name: "test", FailedStep: "Run go test ./...", Log: failingLog(t, f.ws)}},
	})
	event := workflowRunEvent(t, f.local)

	first := f.run(t, "workflow_run", event)
	checkActRun(t, "first run", first, false)
	if got := first.outputs["status"]; got != "fixed" {
		t.Fatalf("first run: status = %q, want fixed\n%s", got, first.log)
	}
	if !strings.Contains(first.log, "installed mini-agent_") || !strings.Contains(first.log, "(SHA-256 verified)") {
		t.Errorf("the action did not install the verified release binary:\n%s", first.log)
	}
	if n := f.rel.downloadsOf(releaseTag); n < 2 {
		t.Errorf("%d downloads from release %s, want the asset and the checksums", n, releaseTag)
	}
	checkOutputs(t, first.outputs)

	repoAPI := "/repos/" + fixtureRepo
	for _, path := range []string{"/git/blobs", "/git/trees", "/git/commits", "/git/refs", "/pulls"} {
		if n := exactCount(f.gh, "POST", repoAPI+path); n < 1 {
			t.Errorf("POST %s: no call", repoAPI+path)
		}
	}
	if n := f.gh.Count("GET", repoAPI+"/contents/.github/mini-agent.yml"); n < 1 {
		t.Errorf("the policy file was not read through the API")
	}
	if n := f.gh.LogAuthViolations(); n != 0 {
		t.Errorf("%d job-log downloads carried the token to the log host", n)
	}
	pulls := f.gh.Pulls(fixtureRepo)
	if len(pulls) != 1 {
		t.Fatalf("PRs after the first run: %d, want 1", len(pulls))
	}
	pr := pulls[0]
	if !strings.HasSuffix(first.outputs["pr-url"], "/pull/"+strconv.Itoa(pr.Number)) || first.outputs["branch"] != pr.Head || pr.Base != "main" {
		t.Errorf("outputs pr-url %q, branch %q; the PR is #%d %s → %s", first.outputs["pr-url"], first.outputs["branch"], pr.Number, pr.Head, pr.Base)
	}
	checkPRBody(t, pr.Body, "/actions/runs/4242")
	if got := f.gh.Reviewers(fixtureRepo, pr.Number); !slices.Contains(got, "octo-reviewer") {
		t.Errorf("reviewers %v: the policy file's reviewers were not requested", got)
	}
	fixed := f.gh.Files(fixtureRepo, pr.Head)["cart.go"].Content
	if !strings.Contains(fixed, "for i := 0; i < len(items); i++") {
		t.Errorf("cart.go on %s is not fixed:\n%s", pr.Head, fixed)
	}
	if f.gh.Files(fixtureRepo, "main")["cart.go"].Content == fixed {
		t.Error("the fix landed on main; it must go to the PR branch")
	}

	second := f.run(t, "workflow_run", event)
	checkActRun(t, "second run", second, false)
	if n := exactCount(f.gh, "POST", repoAPI+"/pulls"); n != 1 {
		t.Errorf("%d PRs were created in all, want 1: the rerun must update, not duplicate", n)
	}
	if pulls := f.gh.Pulls(fixtureRepo); len(pulls) != 1 || second.outputs["pr-url"] != first.outputs["pr-url"] {
		t.Errorf("second run: %d PRs, pr-url %q (first %q)", len(pulls), second.outputs["pr-url"], first.outputs["pr-url"])
	}
	if f.gh.Count("PATCH", repoAPI+"/pulls/") == 0 {
		t.Error("the second run did not update the existing PR")
	}
}

// TestActionInActInJob runs the action as a step after failing tests (the
// README's first recipe) on a push: the failure comes from the failure-log
// input, the test command is detected (go.mod), the PR is opened, and the
// job stays red because its tests failed.
func TestActionInActInJob(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	f := newActFixture(t, "injob.yml", "")
	r := f.run(t, "push", pushEvent(t, f.local))
	checkActRun(t, "in-job run", r, true)
	for _, want := range []string{"❌  Failure - Main Test", "✅  Success - Main org/mini-agent@v1"} {
		if !strings.Contains(r.log, want) {
			t.Errorf("act's log lacks %q\n%s", want, r.log)
		}
	}
	if r.outputs["status"] != "fixed" || r.outputs["steps"] != "5" || !strings.HasPrefix(r.outputs["branch"], "mini-agent/fix-") {
		t.Fatalf("outputs %v\n%s", r.outputs, r.log)
	}
	pulls := f.gh.Pulls(fixtureRepo)
	if len(pulls) != 1 || pulls[0].Base != "main" {
		t.Fatalf("PRs: %+v", pulls)
	}
	checkPRBody(t, pulls[0].Body, "/acme/shop/actions/runs/1")
}

// exactCount counts the API requests with method on exactly path.
func exactCount(gh *ghtest.Server, method, path string) int {
	n := 0
	for _, r := range gh.Requests() {
		if r.Host == "api" && r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// TestWorkflowsValidInAct checks every workflow of the project and of the
// act tests against act's strict workflow schema.
func TestWorkflowsValidInAct(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	act := requireAct(t)
	root := repoRoot(t)
	files, err := filepathGlob(root, ".github/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := filepathGlob(root, "internal/actiontest/testdata/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, tests...) {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			cmd := exec.Command(act, "--validate", "--strict", "-W", f, "-P", "ubuntu-latest=-self-hosted")
			cmd.Dir = root
			cmd.Env = append(scrubbedEnv(), "HOME="+home, "XDG_CONFIG_HOME="+home, "DOCKER_HOST=unix:///nonexistent/docker.sock")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("act --validate --strict: %v\n%s", err, out)
			}
		})
	}
}
