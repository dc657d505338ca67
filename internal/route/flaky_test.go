package route_test

import (
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/route"
)

// TestRouteFlakyMode: mode flaky on a schedule or a dispatch is the flaky
// job on the default branch (read with the policy, nothing else); on any
// other event it is a skip that says where it runs, decided before any
// request; a plain schedule still refreshes CI.
func TestRouteFlakyMode(t *testing.T) {
	t.Parallel()
	for _, ev := range []route.Event{
		{Name: "schedule", Payload: []byte(`{"schedule":"17 4 * * *"}`), Repo: repoName, Mode: "flaky"},
		{Name: "workflow_dispatch", Payload: []byte(`{"inputs":{}}`), Repo: repoName, Mode: "FLAKY", Ref: "refs/heads/main", SHA: strings.Repeat("a", 40)},
	} {
		w := newWorld(t, setup{})
		before := len(w.s.Requests())
		d, cfg, err := w.router().Route(t.Context(), ev)
		if err != nil || d.Job == nil || cfg == nil {
			t.Fatalf("%s: %+v %v", ev.Name, d, err)
		}
		j := d.Job
		if !j.Flaky || j.Refresh || j.Write != route.WritePropose || j.Branch != "main" || j.DefaultBranch != "main" || !strings.Contains(j.Trigger, "flaky") {
			t.Errorf("%s: job %+v", ev.Name, j)
		}
		for _, r := range w.s.Requests()[before:] {
			if !strings.Contains(r.Path, "/contents/") && r.Path != "/repos/"+repoName {
				t.Errorf("%s: routing made %s %s", ev.Name, r.Method, r.Path)
			}
		}
	}
	for _, name := range []string{"push", "pull_request", "workflow_run", "issue_comment"} {
		w := newWorld(t, setup{})
		before := len(w.s.Requests())
		d, _, err := w.router().Route(t.Context(), route.Event{Name: name, Payload: []byte(`{}`), Repo: repoName, Mode: "flaky"})
		if err != nil || d.Job != nil || !strings.Contains(d.Reason, "schedule or workflow_dispatch only") || d.Stage != 0 {
			t.Errorf("%s with mode flaky: %+v %v; want a stage-0 skip saying where it runs", name, d, err)
		}
		if n := len(w.s.Requests()) - before; n != 0 {
			t.Errorf("%s with mode flaky: %d requests", name, n)
		}
	}
	w := newWorld(t, setup{})
	d, _, err := w.router().Route(t.Context(), route.Event{Name: "schedule", Payload: []byte(`{}`), Repo: repoName})
	if err != nil || d.Job == nil || !d.Job.Refresh || d.Job.Flaky {
		t.Errorf("a plain schedule: %+v %v; want the CI refresh", d, err)
	}
	if _, _, err := route.Parse(route.Event{Name: "schedule", Payload: []byte(`{}`), Repo: repoName, Mode: "flakey"}); err == nil ||
		!strings.Contains(err.Error(), "auto, fix, explain or flaky") {
		t.Errorf("a misspelt mode: %v", err)
	}
}
