package actiontest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/fakellm"
	"github.com/org/mini-agent/internal/flaky/flakytest"
	"github.com/org/mini-agent/internal/shaproxy"
)

// flakyFixtureDir is the order fixture: TestStartsEmpty fails whenever
// TestRegister ran before it in the same process.
var flakyFixtureDir = filepath.Join("..", "flaky", "testdata", "fixtures", "order")

// newFlakyActFixture is the repository of the scheduled flaky workflow: the
// order fixture (a real flaky Go module) with testdata/workflows/flaky.yml,
// committed on main, the same files on the fake GitHub's main, and 14 days
// of CI history in which TestStartsEmpty failed and passed on a re-run of
// the same commit.
func newFlakyActFixture(t *testing.T, policy string) *actFixture {
	t.Helper()
	f := &actFixture{act: requireAct(t), workflow: "flaky.yml", rel: actionReleases(t), actionDir: actionUnderTest(t)}
	f.ws = flakytest.CopyModule(t, flakyFixtureDir)
	wf, err := os.ReadFile(filepath.Join("testdata", "workflows", "flaky.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.ws, ".github", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.ws, ".github", "workflows", "flaky.yml"), wf, 0o644); err != nil {
		t.Fatal(err)
	}
	// The policy is on main, read through the API; main's commit is the
	// checkout's, so the file is in both (the fix's published tree must be
	// the tree the harness validated on the checkout).
	if err := os.WriteFile(filepath.Join(f.ws, ".github", "mini-agent.yml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	var files map[string]string
	f.local, files = flakytest.Commit(t, f.ws)
	// act derives GITHUB_REPOSITORY from origin.
	git(t, f.ws, "remote", "add", "origin", "https://github.com/"+fixtureRepo+".git")
	f.gh = ghtest.NewServer(t, fakeToken)
	f.head = f.gh.AddRepo(fixtureRepo, "main", files)
	f.proxy = shaproxy.New(t, f.gh.URL)
	f.proxy.Alias(f.local, f.head)
	f.apiURL = strings.TrimSuffix(f.proxy.URL, "/")
	f.script = filepath.Join(t.TempDir(), "unused.jsonl")
	ghtest.SeedFixtureHistory(f.gh, fixtureRepo, time.Now(), ghtest.FixtureHistory{
		Suite: []ghtest.GoPackage{{Path: "example.com/registry", Tests: []ghtest.GoTest{{Name: "TestStartsEmpty"}, {Name: "TestRegister"}}}},
		Flaky: [][]string{{"TestStartsEmpty"}},
	})
	return f
}

// scheduleEvent is the payload of a scheduled run.
func scheduleEvent(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"schedule": "17 4 * * 1-5",
		"repository": map[string]any{
			"id": 1, "name": "shop", "full_name": fixtureRepo, "private": false,
			"owner":          map[string]any{"login": "acme", "type": "Organization"},
			"default_branch": "main", "html_url": "https://github.com/" + fixtureRepo,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestActionInActFlakySchedule runs the real action.yml in act (host mode,
// offline) as the README's scheduled flaky-test workflow, twice. The first
// run reads the fake CI history, finds TestStartsEmpty flaky (it failed and
// then passed on a re-run of the same commit), proves it flaky in the
// checkout by stress-running go test, files one issue with the evidence,
// has the model (a fake OpenAI endpoint replaying the fixture's proper fix)
// fix it, holds the fix to the rerun bar and opens one draft PR "Tracked by
// #N" with the before/after table. The second scheduled run finds the
// issue and the PR again: no new issue, no second PR.
func TestActionInActFlakySchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	patch, err := os.ReadFile(filepath.Join(flakyFixtureDir, "proper.diff"))
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	step, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"name": "apply_patch", "arguments": map[string]string{"patch": string(patch)}}}})
	script.Write(step)
	script.WriteString("\n" + `{"message":"## Summary\nTestRegister now empties the registry when it ends.\n\n## Root cause\nTestRegister leaves a plugin in the package-level registry; TestStartsEmpty fails whenever it runs after it.\n\n## Assumptions\nNo other test relies on a plugin registered by another test."}` + "\n")
	// The second scheduled run may fix again (its PR exists already).
	model, err := fakellm.New([]byte(strings.Repeat(script.String(), 4)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Close)
	// flaky.seed: reproducible orders (random ones call the order
	// fixture's test failing, not flaky, one time in 1,024).
	f := newFlakyActFixture(t, "defaults:\n  model: gpt-4.1-mini\n  base-url: "+model.BaseURL()+"\nflaky:\n  seed: 1\n")
	stub, err := filepath.Abs(filepath.Join("testdata", "checkout"))
	if err != nil {
		t.Fatal(err)
	}
	f.actArgs = []string{"--local-repository", "actions/checkout@v4=" + stub, "-s", "OPENAI_API_KEY=" + modelKey,
		"--env", "CHECKOUT_REMOTE=" + f.ws}

	r := f.run(t, "schedule", scheduleEvent(t))
	checkActRun(t, "first scheduled run", r, false)
	issues := f.gh.Issues(fixtureRepo)
	if len(issues) != 1 {
		t.Fatalf("%d issues, want 1 for the flaky test\n%s", len(issues), r.log)
	}
	issue := issues[0]
	for _, want := range []string{"TestStartsEmpty", "go test", "-shuffle"} {
		if !strings.Contains(issue.Body, want) {
			t.Errorf("the issue lacks %q:\n%s", want, issue.Body)
		}
	}
	pulls := f.gh.Pulls(fixtureRepo)
	if len(pulls) != 1 {
		t.Fatalf("%d PRs, want 1 draft PR of the proven fix\n%s", len(pulls), r.log)
	}
	pr := pulls[0]
	if !pr.Draft {
		t.Error("the fix's PR is not a draft")
	}
	for _, want := range []string{"Tracked by #" + strconv.Itoa(issue.Number), "| before the fix |", "### Anti-pattern checks"} {
		if !strings.Contains(pr.Body, want) {
			t.Errorf("the PR body lacks %q:\n%s", want, pr.Body)
		}
	}
	got := f.gh.Files(fixtureRepo, pr.Head)["registry_test.go"].Content
	if !strings.Contains(got, "t.Cleanup(func() { clear(plugins) })") {
		t.Errorf("registry_test.go on %s is not the proper fix:\n%s", pr.Head, got)
	}
	if f.gh.Files(fixtureRepo, "main")["registry_test.go"].Content == got {
		t.Error("main changed; the fix must go to its own branch")
	}
	out := r.outputs
	if out["flaky-issues"] != strconv.Itoa(issue.Number) || out["flaky-prs"] != strconv.Itoa(pr.Number) || out["status"] != "fixed" {
		t.Errorf("outputs %v, want status fixed, flaky-issues %d, flaky-prs %d", out, issue.Number, pr.Number)
	}
	for _, body := range []string{issue.Body, pr.Body} {
		if strings.Contains(body, fakeToken) || strings.Contains(body, modelKey) {
			t.Errorf("a secret reached GitHub:\n%s", body)
		}
	}
	reqs := model.Bodies()
	if len(reqs) == 0 {
		t.Fatal("the model was never asked")
	}
	if !strings.Contains(string(reqs[0]), "TestStartsEmpty") {
		t.Errorf("the model's first request lacks the flaky test's evidence:\n%s", reqs[0])
	}
	for i, h := range model.AuthHeaders() {
		if h != "Bearer "+modelKey {
			t.Errorf("model request %d authorised with %q, not the api-key input", i+1, h)
		}
	}
	for i, req := range reqs {
		if strings.Contains(string(req), modelKey) || strings.Contains(string(req), fakeToken) {
			t.Errorf("model request %d carries a secret in its body", i+1)
		}
	}

	// The next scheduled run: the same issue and PR are found again.
	r2 := f.run(t, "schedule", scheduleEvent(t))
	checkActRun(t, "second scheduled run", r2, false)
	if n := len(f.gh.Issues(fixtureRepo)); n != 1 {
		t.Errorf("%d issues after the second run, want still 1", n)
	}
	if n := len(f.gh.Pulls(fixtureRepo)); n != 1 {
		t.Errorf("%d PRs after the second run, want still 1", n)
	}
}
