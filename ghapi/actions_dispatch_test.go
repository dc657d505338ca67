package ghapi

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
)

// TestDispatchAgainstTheFake: a dispatch on a branch whose workflow file has
// the trigger creates a run the branch listing finds; a missing trigger is a
// 422 and a token without actions: write a 403, both classified.
func TestDispatchAgainstTheFake(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, "tok")
	s.AddRepo("o/r", "main", map[string]string{".github/workflows/ci.yml": "on: [push]\n", "a.go": "package a\n"})
	s.Push("o/r", "fix", map[string]string{".github/workflows/ci.yml": "on: [push, workflow_dispatch]\n"})
	wf := s.AddWorkflow("o/r", ghtest.Workflow{})
	c, err := New(t.Context(), Options{Token: "tok", BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	got, err := c.GetWorkflow(ctx, "o", "r", "ci.yml")
	if err != nil || got.ID != wf || got.Path != ".github/workflows/ci.yml" {
		t.Fatalf("GetWorkflow by file = %+v, %v", got, err)
	}
	before := time.Now().Add(-time.Second)
	if err := c.DispatchWorkflow(ctx, "o", "r", "ci.yml", "main"); !errors.Is(err, ErrUnprocessable) {
		t.Errorf("dispatch on a branch without the trigger: %v, want ErrUnprocessable", err)
	}
	if err := c.DispatchWorkflow(ctx, "o", "r", itoa(wf), "fix"); err != nil {
		t.Fatalf("dispatch: %v", err)
	}
	runs, err := c.BranchRuns(ctx, "o", "r", itoa(wf), "fix", "workflow_dispatch", before)
	if err != nil || len(runs) != 1 || runs[0].ID != s.Dispatched("o/r")[0] || runs[0].Status != "queued" || runs[0].HeadSHA != s.Head("o/r", "fix") {
		t.Fatalf("BranchRuns = %+v, %v", runs, err)
	}
	if runs, _ := c.BranchRuns(ctx, "o", "r", itoa(wf), "fix", "workflow_dispatch", time.Now().Add(time.Hour)); len(runs) != 0 {
		t.Errorf("runs created before since were listed: %+v", runs)
	}
	s.Inject(ghtest.Fault{Method: "POST", Path: "/repos/o/r/actions/workflows/*", Status: http.StatusForbidden})
	err = c.DispatchWorkflow(ctx, "o", "r", "ci.yml", "fix")
	var ae *APIError
	if !errors.Is(err, ErrForbidden) || !errors.As(err, &ae) || ae.Permission != "actions: write" {
		t.Errorf("403 dispatch: %v", err)
	}
	for _, bad := range []string{"", "../x.yml", "ci", "0", "a/b.yml"} {
		if err := c.DispatchWorkflow(ctx, "o", "r", bad, "fix"); err == nil {
			t.Errorf("workflow %q accepted", bad)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestConvertPRToDraft goes through the fake's GraphQL endpoint: the PR
// becomes a draft, a draft costs one query and no mutation, a missing PR is
// ErrNotFound.
func TestConvertPRToDraft(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, "tok")
	s.AddRepo("o/r", "main", map[string]string{"a": "a"})
	s.Push("o/r", "fix", map[string]string{"a": "b"})
	n := s.AddPR("o/r", ghtest.PR{Title: "t", Head: "fix", Base: "main"})
	c, err := New(t.Context(), Options{Token: "tok", BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ConvertPRToDraft(t.Context(), "o", "r", n); err != nil || !s.Pulls("o/r")[0].Draft {
		t.Fatalf("convert: %v, pulls %+v", err, s.Pulls("o/r"))
	}
	before := s.Count("POST", "/graphql")
	if err := c.ConvertPRToDraft(t.Context(), "o", "r", n); err != nil || s.Count("POST", "/graphql") != before+1 {
		t.Errorf("a draft again: %v, %d calls", err, s.Count("POST", "/graphql")-before)
	}
	if err := c.ConvertPRToDraft(t.Context(), "o", "r", 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing PR: %v", err)
	}
}
