package route_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/route"
)

func ownBranchRun(t *testing.T, w *world, branch, conclusion, headRepo string) route.Event {
	t.Helper()
	repoJSON := map[string]any{"full_name": headRepo}
	b, err := json.Marshal(map[string]any{"action": "completed",
		"workflow_run": map[string]any{"id": runID, "workflow_id": 159038, "name": "CI", "head_branch": branch, "head_sha": w.head,
			"event": "workflow_dispatch", "conclusion": conclusion, "html_url": "https://github.com/" + repoName + "/actions/runs/30433642",
			"repository": map[string]any{"full_name": repoName}, "head_repository": repoJSON},
		"repository": map[string]any{"full_name": repoName, "default_branch": "main"}})
	if err != nil {
		t.Fatal(err)
	}
	return route.Event{Name: "workflow_run", Payload: b, Repo: repoName}
}

// TestRouteFollowUp: a completion on mini-agent's branch with an open PR is
// a follow-up job (never a fix), success or failure; a failure carries the
// failed jobs; the off label, a fork's look-alike branch and a custom
// prefix are refused.
func TestRouteFollowUp(t *testing.T) {
	t.Parallel()
	const branch = "mini-agent/fix-0123456789"
	for _, tt := range []struct {
		name, conclusion, headRepo, policy string
		labels                             []string
		wantSkip                           string
		wantJobs                           int
	}{
		{name: "failure", conclusion: "failure", headRepo: repoName, wantJobs: 1},
		{name: "success", conclusion: "success", headRepo: repoName},
		{name: "cancelled", conclusion: "cancelled", headRepo: repoName},
		{name: "off label", conclusion: "failure", headRepo: repoName, labels: []string{"mini-agent:off"}, wantSkip: "mini-agent is off"},
		{name: "fork look-alike", conclusion: "failure", headRepo: "mallory/hello-world", wantSkip: "loop guard"},
		{name: "other prefix", conclusion: "success", headRepo: repoName, policy: "branch-prefix: bot/\n", wantSkip: "not mini-agent's branch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, setup{policy: tt.policy})
			w.s.Push(repoName, branch, map[string]string{"fix.go": "package hello\n"})
			n := w.s.AddPR(repoName, ghtest.PR{Title: "mini-agent: fix", Head: branch, Base: "feature/parser", Labels: tt.labels})
			d, _, err := w.router().Route(t.Context(), ownBranchRun(t, w, branch, tt.conclusion, tt.headRepo))
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantSkip != "" {
				if !d.Skipped() || !strings.Contains(d.Reason, tt.wantSkip) {
					t.Errorf("decision %+v, want a skip with %q", d, tt.wantSkip)
				}
				return
			}
			j := d.Job
			if j == nil || !j.FollowUp || j.PR != n || j.Conclusion != tt.conclusion || j.Write != route.WriteNone ||
				j.RunID != runID || j.WorkflowID != 159038 || len(j.FailedJobs) != tt.wantJobs {
				t.Fatalf("decision %+v job %+v", d, j)
			}
		})
	}
}

// TestRouteScheduleRefreshes: a scheduled run is a refresh-only job, after
// reading the policy and nothing else.
func TestRouteScheduleRefreshes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, setup{})
	before := len(w.s.Requests())
	d, cfg, err := w.router().Route(t.Context(), route.Event{Name: "schedule", Payload: []byte(`{"schedule":"0 * * * *"}`), Repo: repoName})
	if err != nil || d.Job == nil || !d.Job.Refresh || d.Job.Write != route.WriteNone || cfg == nil {
		t.Fatalf("%+v %v", d, err)
	}
	for _, r := range w.s.Requests()[before:] {
		// The policy file, and the default branch it is read from.
		if !strings.Contains(r.Path, "/contents/") && r.Path != "/repos/"+repoName {
			t.Errorf("a scheduled run's routing made %s %s", r.Method, r.Path)
		}
	}
}

// TestRouteFollowUpCustomPrefix: with a custom branch-prefix, CI on
// mini-agent's own branch updates its PR instead of being refused by the
// loop guard: a success recognized by the head commit's trailer (the payload
// as GitHub sends it for a dispatched run), a failure after someone pushed
// to the branch (no trailer) by the prefix. A branch with the default
// prefix is then an ordinary branch: its failure is fixed.
func TestRouteFollowUpCustomPrefix(t *testing.T) {
	t.Parallel()
	const branch = "bots/fixer/fix-0123456789"
	policy := "branch-prefix: bots/fixer/\n"
	t.Run("success, trailer", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, setup{policy: policy})
		w.s.Push(repoName, branch, map[string]string{"fix.go": "package hello\n"})
		n := w.s.AddPR(repoName, ghtest.PR{Title: "mini-agent: fix", Head: branch, Base: "feature/parser",
			Body: "<!-- mini-agent:state attempts=1 failing-sha=" + w.head + " ci=pending -->"})
		d, _, err := w.router().Route(t.Context(), w.event(t, "workflow_run", "workflow_run_custom_prefix.json"))
		if err != nil {
			t.Fatal(err)
		}
		if j := d.Job; j == nil || !j.FollowUp || j.PR != n || j.Conclusion != "success" || j.Write != route.WriteNone {
			t.Fatalf("decision %+v job %+v", d, d.Job)
		}
	})
	t.Run("failure, pushed by a person", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, setup{policy: policy})
		w.s.Push(repoName, branch, map[string]string{"fix.go": "package hello\n"})
		n := w.s.AddPR(repoName, ghtest.PR{Title: "mini-agent: fix", Head: branch, Base: "feature/parser"})
		ev := ownBranchRun(t, w, branch, "failure", repoName)
		d, _, err := w.router().Route(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		if j := d.Job; j == nil || !j.FollowUp || j.PR != n || len(j.FailedJobs) != 1 {
			t.Fatalf("decision %+v job %+v", d, d.Job)
		}
	})
	t.Run("the default prefix is an ordinary branch", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, setup{policy: policy})
		w.s.Push(repoName, "mini-agent/notes", map[string]string{"notes.go": "package hello\n"})
		d, _, err := w.router().Route(t.Context(), ownBranchRun(t, w, "mini-agent/notes", "failure", repoName))
		if err != nil {
			t.Fatal(err)
		}
		if j := d.Job; j == nil || j.FollowUp || j.Write != route.WritePropose || j.Source != route.SourceRun {
			t.Fatalf("decision %+v job %+v", d, d.Job)
		}
	})
}
