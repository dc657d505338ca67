package ghtest_test

import (
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
)

const token = "ghs_fake_token_for_tests"

func newClient(t *testing.T, s *ghtest.Server) *ghapi.Client {
	t.Helper()
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s =\n%#v\nwant\n%#v", what, got, want)
	}
}

func TestFailureSources(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	head := s.AddRepo("octo/app", "main", map[string]string{"go.mod": "module app\n"})
	s.AddRun("octo/app", ghtest.Run{ID: 77, HeadBranch: "main", HeadSHA: head, RunAttempt: 2, Jobs: []ghtest.Job{
		{ID: 1, Name: "lint", Conclusion: "success"},
		{ID: 2, Name: "test", FailedStep: "go test ./...", Log: "--- FAIL: TestX (0.00s)\n",
			Annotations: []ghtest.Annotation{{Path: "x_test.go", StartLine: 9, Level: "failure", Message: "boom"}}},
		{ID: 3, Name: "test", RunAttempt: 1, FailedStep: "go test ./...", Log: "old attempt"},
		{ID: 4, Name: "race", LogStatus: http.StatusGone},
	}})
	c := newClient(t, s)
	ctx := t.Context()

	run, err := c.WorkflowRun(ctx, "octo", "app", 77)
	if err != nil || run.HeadSHA != head || run.Conclusion != "failure" || run.RunAttempt != 2 {
		t.Fatalf("WorkflowRun = %+v, %v", run, err)
	}
	jobs, err := c.FailedJobs(ctx, "octo", "app", 77)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	equal(t, "failed jobs", names, []string{"test", "race"})
	equal(t, "failed steps", jobs[0].FailedSteps, []string{"go test ./..."})

	rc, err := c.JobLog(ctx, "octo", "app", jobs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "--- FAIL: TestX (0.00s)\n" {
		t.Errorf("log = %q", b)
	}
	if n := s.LogAuthViolations(); n != 0 {
		t.Errorf("%d log downloads carried a credential", n)
	}
	if _, err := c.JobLog(ctx, "octo", "app", jobs[1].ID); !errors.Is(err, ghapi.ErrGone) {
		t.Errorf("expired log: err = %v, want ErrGone", err)
	}

	anns, err := c.Annotations(ctx, "octo", "app", jobs[0].CheckRunID)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "annotations", anns, []ghapi.Annotation{{Path: "x_test.go", StartLine: 9, EndLine: 9, Level: "failure", Message: "boom"}})
}

func TestPublishFlow(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	base := s.AddRepo("octo/app", "main", map[string]string{
		"parse.go": "package app // bug\n", "old.go": "package app\n", ".github/mini-agent.yml": "draft: true\n",
	})
	c := newClient(t, s)
	ctx := t.Context()

	def, err := c.DefaultBranch(ctx, "octo", "app")
	if err != nil || def != "main" {
		t.Fatalf("DefaultBranch = %q, %v", def, err)
	}
	cfg, err := c.FileAtRef(ctx, "octo", "app", ".github/mini-agent.yml", def)
	if err != nil || string(cfg) != "draft: true\n" {
		t.Fatalf("FileAtRef = %q, %v", cfg, err)
	}
	if _, err := c.FileAtRef(ctx, "octo", "app", "nope.yml", def); !errors.Is(err, ghapi.ErrNotFound) {
		t.Fatalf("missing file: err = %v", err)
	}

	const branch = "mini-agent/fix-0a1b2c3d"
	req := ghapi.CommitRequest{BaseSHA: base, Branch: branch, Message: "fix parse", CreateBranch: true,
		Changes: []ghapi.FileChange{
			{Path: "parse.go", Content: []byte("package app // fixed\n")},
			{Path: "scripts/gen.sh", Content: []byte("#!/bin/sh\n"), Mode: ghapi.ModeExecutable},
			{Path: "old.go", Delete: true},
			{Path: "new.go", Content: []byte("package app\n")}, // rename old.go -> new.go
		}}
	res, err := c.CommitFiles(ctx, "octo", "app", req)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "files", s.Files("octo/app", branch), map[string]ghtest.File{
		"parse.go":               {Content: "package app // fixed\n", Mode: "100644"},
		"scripts/gen.sh":         {Content: "#!/bin/sh\n", Mode: "100755"},
		"new.go":                 {Content: "package app\n", Mode: "100644"},
		".github/mini-agent.yml": {Content: "draft: true\n", Mode: "100644"},
	})
	equal(t, "parents", s.Parents("octo/app", res.SHA), []string{base})
	if s.Head("octo/app", "main") != base {
		t.Error("main moved")
	}

	if pr, err := c.FindOpenPR(ctx, "octo", "app", "octo", branch); err != nil || pr != nil {
		t.Fatalf("FindOpenPR before create = %+v, %v", pr, err)
	}
	pr, err := c.CreatePR(ctx, "octo", "app", ghapi.NewPR{Title: "fix", Body: "<!-- sig -->", Head: branch, Base: "main", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreatePR(ctx, "octo", "app", ghapi.NewPR{Title: "fix", Head: branch, Base: "main"}); !errors.Is(err, ghapi.ErrUnprocessable) {
		t.Errorf("duplicate PR: err = %v", err)
	}

	// A rerun rebuilds the fix on main: not a fast-forward of the old fix.
	req.CreateBranch = false
	req.Message = "fix parse, take 2"
	if _, err := c.CommitFiles(ctx, "octo", "app", req); !errors.Is(err, ghapi.ErrHeadMoved) {
		t.Fatalf("non-fast-forward without force: err = %v", err)
	}
	req.Force = true
	res2, err := c.CommitFiles(ctx, "octo", "app", req)
	if err != nil {
		t.Fatal(err)
	}
	found, err := c.FindOpenPR(ctx, "octo", "app", "octo", branch)
	if err != nil || found == nil || found.Number != pr.Number || found.HeadSHA != res2.SHA || !found.Draft {
		t.Fatalf("FindOpenPR = %+v, %v; want #%d at %s", found, err, pr.Number, res2.SHA)
	}
	body := "updated"
	if up, err := c.UpdatePR(ctx, "octo", "app", pr.Number, ghapi.PRUpdate{Body: &body}); err != nil || up.Body != body {
		t.Fatalf("UpdatePR = %+v, %v", up, err)
	}
	if err := c.RequestReviewers(ctx, "octo", "app", pr.Number, []string{"alice"}, nil); err != nil {
		t.Fatal(err)
	}
	equal(t, "reviewers", s.Reviewers("octo/app", pr.Number), []string{"alice"})
	if err := c.AddLabels(ctx, "octo", "app", pr.Number, "mini-agent"); err != nil {
		t.Fatal(err)
	}
	if ls, err := c.Labels(ctx, "octo", "app", pr.Number); err != nil || !reflect.DeepEqual(ls, []string{"mini-agent"}) {
		t.Fatalf("Labels = %v, %v", ls, err)
	}
	// 3 per attempt: the refused non-fast-forward attempt left orphan objects.
	if got := s.Count("POST", "/repos/octo/app/git/blobs"); got != 9 {
		t.Errorf("%d blobs posted, want 9", got)
	}
}

func TestTrackingComment(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	s.AddRepo("octo/app", "main", map[string]string{"a": "a"})
	n := s.AddPR("octo/app", ghtest.PR{Title: "feature", Head: "main", Base: "main"})
	cmd := s.AddComment("octo/app", n, "alice", "MEMBER", "/mini-agent fix")
	for range 3 { // push the tracking comment past the first page
		s.AddComment("octo/app", n, "bob", "NONE", "> <!-- mini-agent:track -->\n> quoting")
	}
	c := newClient(t, s)
	ctx := t.Context()
	if err := c.ReactToComment(ctx, "octo", "app", cmd, "eyes"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.FindCommentWithMarker(ctx, "octo", "app", n, "<!-- mini-agent:track -->"); err != nil || got != nil {
		t.Fatalf("before: %+v, %v", got, err)
	}
	mine, err := c.CreateComment(ctx, "octo", "app", n, "<!-- mini-agent:track -->\nworking")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.FindCommentWithMarker(ctx, "octo", "app", n, "<!-- mini-agent:track -->")
	if err != nil || got == nil || got.ID != mine.ID || got.AuthorType != "Bot" {
		t.Fatalf("FindCommentWithMarker = %+v, %v; want %d", got, err, mine.ID)
	}
	if _, err := c.UpdateComment(ctx, "octo", "app", mine.ID, "<!-- mini-agent:track -->\ndone"); err != nil {
		t.Fatal(err)
	}
	cs := s.Comments("octo/app", n)
	equal(t, "reactions", cs[0].Reactions, []string{"eyes"})
	equal(t, "last body", cs[len(cs)-1].Body, "<!-- mini-agent:track -->\ndone")
	if _, err := c.UpdateComment(ctx, "octo", "app", cmd, "hijack"); !errors.Is(err, ghapi.ErrForbidden) {
		t.Errorf("editing a user's comment: err = %v, want ErrForbidden", err)
	}
}

func TestPushModeHeadMoved(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	s.AddRepo("octo/app", "main", map[string]string{"a.go": "package a\n"})
	head := s.Push("octo/app", "feature", map[string]string{"b.go": "package a\n"})
	n := s.AddPR("octo/app", ghtest.PR{Title: "feature", Head: "feature", Base: "main", Labels: []string{"mini-agent:push"}})
	c := newClient(t, s)
	ctx := t.Context()
	pr, err := c.PullRequest(ctx, "octo", "app", n)
	if err != nil || pr.HeadSHA != head || pr.IsFork() || !pr.HasLabel("mini-agent:push") {
		t.Fatalf("PullRequest = %+v, %v", pr, err)
	}
	moved := s.Push("octo/app", "feature", map[string]string{"c.go": "package a\n"}) // the author pushes meanwhile
	_, err = c.CommitFiles(ctx, "octo", "app", ghapi.CommitRequest{
		BaseSHA: pr.HeadSHA, Branch: "feature", ExpectedHead: pr.HeadSHA, Message: "fix",
		Changes: []ghapi.FileChange{{Path: "a.go", Content: []byte("package a // fixed\n")}},
	})
	if !errors.Is(err, ghapi.ErrHeadMoved) {
		t.Fatalf("err = %v, want ErrHeadMoved", err)
	}
	if s.Head("octo/app", "feature") != moved || s.Count("POST", "/repos/octo/app/git/") != 0 {
		t.Error("a write happened although the head moved")
	}

	closedSHA := "1234567890123456789012345678901234567890"
	s.AddPR("octo/app", ghtest.PR{Title: "old fix", Head: "mini-agent/fix-1", Base: "main", State: "closed", HeadSHA: closedSHA})
	s.AddPR("octo/app", ghtest.PR{Title: "merged fix", Head: "mini-agent/fix-1", Base: "main", State: "closed", Merged: true})
	cl, err := c.FindClosedPR(ctx, "octo", "app", "octo", "mini-agent/fix-1")
	if err != nil || cl == nil || cl.HeadSHA != closedSHA || cl.Merged {
		t.Fatalf("FindClosedPR = %+v, %v", cl, err)
	}
}

func TestServerRejections(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	s.AddRepo("octo/app", "main", map[string]string{"a": "a"})
	s.AddRun("octo/app", ghtest.Run{ID: 5, Jobs: []ghtest.Job{{ID: 6, Name: "t", Log: "log"}}})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(url, auth string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get(s.URL+"repos/octo/app", "Bearer wrong"); r.StatusCode != 401 {
		t.Errorf("bad token: %d, want 401", r.StatusCode)
	}
	r := get(s.URL+"repos/octo/app/actions/jobs/6/logs", "Bearer "+token)
	loc := r.Header.Get("Location")
	if r.StatusCode != 302 || !strings.HasPrefix(loc, s.LogURL) {
		t.Fatalf("logs: %d to %q, want 302 to the log host", r.StatusCode, loc)
	}
	if r := get(loc, "Bearer "+token); r.StatusCode != 400 {
		t.Errorf("log host with a token: %d, want 400", r.StatusCode)
	}
	if r := get(strings.Split(loc, "?")[0]+"?sig=forged", ""); r.StatusCode != 403 {
		t.Errorf("log host with a forged signature: %d, want 403", r.StatusCode)
	}
	if r := get(loc, ""); r.StatusCode != 200 {
		t.Errorf("log host: %d, want 200", r.StatusCode)
	}
	if n := s.LogAuthViolations(); n != 1 {
		t.Errorf("LogAuthViolations = %d, want 1", n)
	}
	if n := len(s.Requests()); n != 5 {
		t.Errorf("%d requests recorded, want 5", n)
	}
}

func TestPaginationLinks(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, "")
	s.AddRepo("octo/app", "main", map[string]string{"a": "a"})
	n := s.AddPR("octo/app", ghtest.PR{Title: "x", Head: "main", Base: "main"})
	for range 5 {
		s.AddComment("octo/app", n, "u", "NONE", "c")
	}
	resp, err := http.Get(s.URL + "repos/octo/app/issues/1/comments?per_page=2&page=2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	link := resp.Header.Get("Link")
	if !strings.Contains(link, "page=3&per_page=2>; rel=\"next\"") || !strings.Contains(link, "rel=\"last\"") {
		t.Errorf("Link = %q", link)
	}
}
