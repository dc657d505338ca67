package action

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/flaky/flakytest"
	"github.com/org/mini-agent/internal/flakyjob"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/shaproxy"
)

// flakyScene is a checkout of the order fixture (a real flaky Go module)
// with the policy, the same files in the fake GitHub, and a CI history in
// which its test is flaky (flakyHistory) or always green.
func flakyScene(t *testing.T, policy string, flakyHistory bool) *scene {
	t.Helper()
	ws := flakytest.CopyModule(t, filepath.Join("..", "flaky", "testdata", "fixtures", "order"))
	if policy != "" {
		writeFile(t, filepath.Join(ws, ".github", "mini-agent.yml"), policy)
	}
	head, files := flakytest.Commit(t, ws)
	sc := &scene{ws: ws, tmp: t.TempDir(), head: head}
	sc.s = ghtest.NewServer(t, testToken)
	sc.fake = sc.s.AddRepo(testRepo, "main", files)
	sc.proxy = shaproxy.New(t, sc.s.URL)
	sc.proxy.Alias(sc.head, sc.fake)
	h := ghtest.FixtureHistory{Suite: []ghtest.GoPackage{{Path: "example.com/x", Tests: []ghtest.GoTest{{Name: "TestStartsEmpty"}, {Name: "TestRegister"}}}}}
	if flakyHistory {
		h.Flaky = [][]string{{"TestStartsEmpty"}}
	}
	ghtest.SeedFixtureHistory(sc.s, testRepo, time.Now(), h)
	sc.script = filepath.Join(sc.tmp, "none.jsonl")
	return sc
}

// schedulePayload is what GitHub gives a scheduled run.
var schedulePayload = map[string]any{"schedule": "17 4 * * *", "repository": map[string]any{"full_name": testRepo, "default_branch": "main"}}

// TestActionFlakyNothingFound: a scheduled run with mode flaky over a green
// history posts nothing, ends skipped with exit 0 and says so.
func TestActionFlakyNothingFound(t *testing.T) {
	t.Parallel()
	sc := flakyScene(t, "", false)
	env, vars, stdout := sc.env(t, "schedule", schedulePayload, map[string]string{"mode": "flaky", "test-command": "go test ./..."})
	r := Run(t.Context(), env)
	if r.Code != 0 || r.Status != "skipped" {
		t.Fatalf("exit %d status %s\n%s", r.Code, r.Status, stdout)
	}
	if w := writesTo(sc.s); len(w) != 0 {
		t.Errorf("write requests %v, want none", w)
	}
	out := outputs(t, vars["GITHUB_OUTPUT"])
	if v, ok := out["flaky-issues"]; !ok || v != "" || out["flaky-prs"] != "" {
		t.Errorf("outputs %v", out)
	}
	summary, _ := os.ReadFile(vars["GITHUB_STEP_SUMMARY"])
	if !strings.Contains(string(summary), "No flaky test found") {
		t.Errorf("summary:\n%s", summary)
	}
}

// TestActionFlakyWrongEventOrRef: mode flaky on a push is a skip that says
// where it runs (no request); a dispatch from another branch than the
// default is a skip too; a bad mode is a usage error.
func TestActionFlakyWrongEventOrRef(t *testing.T) {
	t.Parallel()
	sc := flakyScene(t, "", true)
	env, _, stdout := sc.env(t, "push", map[string]any{"ref": "refs/heads/main", "after": sc.head}, map[string]string{"mode": "flaky"})
	if r := Run(t.Context(), env); r.Code != 0 || r.Status != "skipped" || !strings.Contains(r.Summary, "schedule or workflow_dispatch only") {
		t.Errorf("push: %+v\n%s", r, stdout)
	}
	env, vars, stdout := sc.env(t, "workflow_dispatch", map[string]any{"inputs": map[string]any{}}, map[string]string{"mode": "flaky"})
	vars["GITHUB_REF"] = "refs/heads/feature"
	if r := Run(t.Context(), env); r.Code != 0 || r.Status != "skipped" || !strings.Contains(r.Summary, "default branch main") {
		t.Errorf("dispatch on a feature branch: %+v\n%s", r, stdout)
	}
	if w := writesTo(sc.s); len(w) != 0 {
		t.Errorf("write requests %v, want none", w)
	}
	env, _, _ = sc.env(t, "schedule", schedulePayload, map[string]string{"mode": "flakey"})
	if r := Run(t.Context(), env); r.Code != 2 || !strings.Contains(r.Summary, "auto, fix, explain or flaky") {
		t.Errorf("bad mode: %+v", r)
	}
}

// TestActionFlakyScheduledQuarantine: the real path from `mini-agent
// action` on a schedule: the flaky test is found in the history, proven
// locally, filed in an issue, and (no model configured: a warning, no fix)
// proposed for the policy's quarantine file in a draft PR; outputs list
// both; a failing-to-fix run is not-fixed (exit 1).
func TestActionFlakyScheduledQuarantine(t *testing.T) {
	if testing.Short() {
		t.Skip("stress-runs a real flaky module")
	}
	t.Parallel()
	// seed: reproducible orders, so the order fixture's verdict does not
	// depend on luck (random orders call it failing one time in 1,024).
	sc := flakyScene(t, "flaky: {max-runs: 30, quarantine-file: flaky-quarantine.txt, seed: 1}\n", true)
	env, vars, stdout := sc.env(t, "schedule", schedulePayload, map[string]string{"mode": "flaky", "test-command": "go test ./...",
		"provider": "openai", "api-key": ""})
	delete(vars, "INPUT_API-KEY")
	r := Run(t.Context(), env)
	if r.Code != 1 || r.Status != "not-fixed" {
		t.Fatalf("exit %d status %s, want 1 not-fixed\n%s", r.Code, r.Status, stdout)
	}
	issues, pulls := sc.s.Issues(testRepo), sc.s.Pulls(testRepo)
	if len(issues) != 1 || len(pulls) != 1 || !pulls[0].Draft || !strings.Contains(pulls[0].Title, "quarantine") {
		t.Fatalf("%d issues, PRs %+v", len(issues), pulls)
	}
	// The policy's seed reached the runs: the failing order's seed is one
	// of 1, 2, … (a random seed is a time in nanoseconds).
	if m := regexp.MustCompile("\\| seed \\| `([0-9]+)` \\|").FindStringSubmatch(issues[0].Body); m == nil || len(m[1]) > 3 {
		t.Errorf("the issue's seed row %q: want a seed counted from the policy's seed: 1\n%s", m, issues[0].Body)
	}
	out := outputs(t, vars["GITHUB_OUTPUT"])
	if out["flaky-issues"] != strconv.Itoa(issues[0].Number) || out["flaky-prs"] != strconv.Itoa(pulls[0].Number) || out["status"] != "not-fixed" {
		t.Errorf("outputs %v", out)
	}
	if !strings.Contains(stdout.String(), "no model") {
		t.Errorf("no warning about the missing model:\n%s", stdout)
	}
	if st := git(t, sc.ws, "status", "--porcelain"); st != "" {
		t.Errorf("workspace changed:\n%s", st)
	}
}

// TestFlakyStatus: skipped with no candidate, fixed only when every
// candidate has a proven fix's PR (a quarantine is not a fix).
func TestFlakyStatus(t *testing.T) {
	t.Parallel()
	pr := &flakyjob.PR{Number: 3}
	for _, c := range []struct {
		cands []*flakyjob.Candidate
		want  publish.Status
	}{
		{nil, publish.StatusSkipped},
		{[]*flakyjob.Candidate{{PR: pr}}, publish.StatusFixed},
		{[]*flakyjob.Candidate{{PR: pr}, {Quarantine: pr}}, publish.StatusNotFixed},
		{[]*flakyjob.Candidate{{Examined: true}}, publish.StatusNotFixed},
	} {
		if got := flakyStatus(&flakyjob.Result{Candidates: c.cands}); got != c.want {
			t.Errorf("%d candidates: %s, want %s", len(c.cands), got, c.want)
		}
	}
}
