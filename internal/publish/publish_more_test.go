package publish_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

func TestNoValidatedFix(t *testing.T) {
	t.Parallel()
	failed := func(b *bundle.Bundle) *bundle.Bundle {
		b.Status = bundle.StatusValidationFailed
		b.Validation[1].Passed, b.Validation[1].ExitCode = false, 1
		return b
	}
	budget := func(b *bundle.Bundle) *bundle.Bundle {
		b.Status, b.Validation = bundle.StatusNotFixed, nil
		b.Run.StopReason, b.Run.Detail = "cost_budget", "cost $0.51 reached the $0.50 budget"
		return b
	}

	t.Run("comment by default", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: failed(makeBundle(t, f.head, theFix)), Job: f.job(route.WritePropose), Config: config.Default()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != publish.StatusNotFixed || res.Action != publish.ActionCommented || !strings.Contains(res.Reason, "full test command (exit 1)") {
			t.Errorf("result = %+v", res)
		}
		if n := f.count("POST", "/repos/octo-org/hello-world/pulls") + f.s.Count("POST", "/repos/octo-org/hello-world/git/"); n != 0 {
			t.Errorf("%d PR/git writes for a failed validation", n)
		}
		contains(t, "comment", f.s.Comments(repo, 7)[0].Body, "No validated fix", "Diff so far (not validated)", "```diff", "+\tif s == \"\" {", "**failed**")
	})

	t.Run("budget ran out", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: budget(makeBundle(t, f.head, theFix)), Job: f.job(route.WritePush), Config: config.Default()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != publish.StatusNotFixed || !strings.Contains(res.Reason, "cost_budget") {
			t.Errorf("result = %+v", res)
		}
		contains(t, "comment", f.s.Comments(repo, 7)[0].Body, "cost $0.51 reached the $0.50 budget", "Why it stopped")
		if f.s.Head(repo, "feature/parser") != f.head {
			t.Error("an unvalidated change was pushed")
		}
	})

	t.Run("draft per config", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: failed(makeBundle(t, f.head, theFix)), Job: f.job(route.WritePropose), Config: cfg(t, "on-failure: draft\n")})
		if err != nil {
			t.Fatal(err)
		}
		pulls := f.s.Pulls(repo)
		pr := pulls[len(pulls)-1]
		if res.Status != publish.StatusNotFixed || res.Action != publish.ActionDraftPR || !pr.Draft || !strings.HasPrefix(pr.Title, "[not validated]") {
			t.Errorf("result = %+v, PR = %+v", res, pr)
		}
		contains(t, "draft body", pr.Body, "No validated fix", "attempted fix, NOT validated")
	})

	t.Run("no PR to comment on", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		job := f.job(route.WritePropose)
		job.PR, job.PRURL = 0, ""
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: failed(makeBundle(t, f.head, theFix)), Job: job, Config: config.Default()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != publish.StatusNotFixed || !strings.Contains(res.Reason, "job summary") || f.writes() != 0 {
			t.Errorf("result = %+v, %d writes", res, f.writes())
		}
	})

	t.Run("too large", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: makeBundle(t, f.head, theFix), Job: f.job(route.WritePropose), Config: cfg(t, "max-diff: {files: 2}\n")})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != publish.StatusNotFixed || !strings.Contains(res.Reason, "max-diff allows 2 files") || res.Size.Files != 4 {
			t.Errorf("result = %+v", res)
		}
		if n := f.s.Count("POST", "/repos/octo-org/hello-world/git/"); n != 0 {
			t.Errorf("%d git writes for a too-large change", n)
		}
	})
}

func TestExplainKeepsOneTrackingComment(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "mini-agent:read-only")
	f.s.AddComment(repo, 7, "hubot", "MEMBER", "/mini-agent explain")
	b := makeBundle(t, f.head, edit{})
	b.Mode, b.Status, b.Diff, b.Files, b.Validation = "explain", bundle.StatusExplained, "", nil, nil
	job := f.job(route.WriteNone)
	for i := range 2 {
		if i == 1 {
			// A later comment carrying the marker does not capture the tracking comment.
			f.s.AddComment(repo, 7, "mallory", "NONE", publish.TrackingMarker+"\nfake tracking comment")
		}
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != publish.StatusExplained || res.Action != publish.ActionCommented {
			t.Errorf("result = %+v", res)
		}
	}
	var ours []ghtest.Comment
	for _, c := range f.s.Comments(repo, 7) {
		if c.Author == ghtest.BotLogin {
			ours = append(ours, c)
		}
	}
	if len(ours) != 1 {
		t.Fatalf("%d bot comments, want one tracking comment updated in place", len(ours))
	}
	contains(t, "explanation", ours[0].Body, publish.TrackingMarker, "parser.go:3 returned len(s).", "diagnosis (read-only)")
	if n := f.s.Count("PATCH", "/repos/octo-org/hello-world/issues/comments/"); n != 1 {
		t.Errorf("%d comment edits, want 1 (the second run)", n)
	}
}

func TestForkFixIsACommentWithTheDiff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	job := f.job(route.WriteComment)
	job.Fork, job.HeadRepo = true, "mallory/hello-world"
	b := makeBundle(t, f.head, edit{write: map[string]string{"parser.go": "package hello\n\n// ```\nfunc Parse(s string) int { return 0 }\n"}})
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != publish.StatusFixed || res.Action != publish.ActionCommented {
		t.Errorf("result = %+v", res)
	}
	body := f.s.Comments(repo, 7)[0].Body
	contains(t, "comment", body, "````diff", "+// ```", "does not push")
	if n := f.s.Count("POST", "/repos/octo-org/hello-world/git/"); n != 0 {
		t.Errorf("%d git writes for a fork", n)
	}
}

// closePR closes a PR through the API, as a maintainer would.
func closePR(t *testing.T, f *fixture, n int) {
	t.Helper()
	closed := "closed"
	_, _, err := f.gh.GitHub().PullRequests.Edit(t.Context(), "octo-org", "hello-world", n, &github.PullRequest{State: &closed})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPrecheckAndAnnotate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	job := f.job(route.WritePropose)
	job.RunURL, job.Workflow = "https://github.com/octo-org/hello-world/actions/runs/1", "CI"
	job.FailedJobs = []ghapi.Job{{Name: "test"}, {Name: "race"}, {Name: "test"}}
	b := makeBundle(t, f.head, theFix)
	publish.Annotate(b, job)
	if b.Extra.Job != "race, test" || b.Extra.Workflow != "CI" || b.Extra.Policy != "propose" || b.Extra.RunURL != job.RunURL || b.Branch != "feature/parser" {
		t.Errorf("Extra = %+v, branch %q", b.Extra, b.Branch)
	}
	stub := &bundle.Bundle{Signature: b.Signature, BaseSHA: f.head, Extra: b.Extra}
	if res, err := publish.Precheck(t.Context(), f.gh, job, config.Default(), stub, nil); res != nil || err != nil {
		t.Fatalf("fresh failure: %+v, %v", res, err)
	}
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := publish.Precheck(t.Context(), f.gh, job, config.Default(), stub, nil); res != nil || err != nil {
		t.Errorf("open PR (a rerun updates it): %+v, %v", res, err)
	}
	closePR(t, f, res.PRNumber)
	before := len(f.s.Requests())
	got, err := publish.Precheck(t.Context(), f.gh, job, config.Default(), stub, nil)
	if err != nil || got == nil || got.Status != publish.StatusSkipped || !strings.Contains(got.Reason, "closed without merging") {
		t.Errorf("closed PR: %+v, %v", got, err)
	}
	for _, r := range f.s.Requests()[before:] {
		if r.Method != "GET" {
			t.Errorf("Precheck wrote: %s %s", r.Method, r.Path)
		}
	}
	if res, _ := publish.Precheck(t.Context(), f.gh, f.job(route.WritePush), config.Default(), stub, nil); res != nil {
		t.Errorf("push policy pre-checked: %+v", res)
	}
	// A run on a tag is skipped before any model call.
	tagJob := f.job(route.WritePropose)
	tagJob.Branch = "v1.2.3"
	if got, err := publish.Precheck(t.Context(), f.gh, tagJob, config.Default(), stub, nil); err != nil || got == nil || !strings.Contains(got.Reason, "not a branch") {
		t.Errorf("tag run: %+v, %v", got, err)
	}
}

// TestPushReportedWhenTheCommentFails: a token without pull-requests: write
// can push but not comment. The push happened, so the result must say so
// (status fixed, the commit) instead of failing as if nothing was written.
func TestPushReportedWhenTheCommentFails(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "mini-agent:push")
	target, err := url.Parse(f.s.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && strings.Contains(r.URL.Path, "/issues/") && strings.Contains(r.URL.Path, "/comments") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	gh, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: front.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	b := makeBundle(t, f.head, theFix)
	res, err := publish.Publish(t.Context(), gh, publish.Request{Bundle: b, Job: f.job(route.WritePush), Config: config.Default(), Log: &log})
	head := f.s.Head(repo, "feature/parser")
	if head == f.head {
		t.Fatal("nothing was pushed; the test needs the push to succeed")
	}
	if err != nil || res == nil {
		t.Fatalf("the fix was pushed (%s) but Publish says: %v", head, err)
	}
	if res.Status != publish.StatusFixed || res.Action != publish.ActionPushed || res.Commit != head {
		t.Errorf("result = %+v, want fixed/pushed at %s", res, head)
	}
	contains(t, "log", log.String(), "tracking comment")
}

// TestProposeNeedsTheTargetBranch: a run on a tag (head_branch is the tag's
// name) or on a branch deleted since has nothing to propose against. Finding
// out after the fix branch is written leaves a branch without a PR.
func TestProposeNeedsTheTargetBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := makeBundle(t, f.head, theFix)
	for _, target := range []string{"v1.2.3", "deleted-branch"} {
		job := f.job(route.WritePropose)
		job.Branch, job.PR, job.PRURL = target, 0, ""
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		if res.Status != publish.StatusSkipped || !strings.Contains(res.Reason, target) || !strings.Contains(res.Reason, "not a branch") {
			t.Errorf("%s: result = %+v", target, res)
		}
	}
	if n := f.writes(); n != 0 {
		t.Errorf("%d writes for a target that is not a branch", n)
	}
}

// TestProposeAfterALostCreateAnswer: GitHub opened the PR but the answer was
// lost (a 502); the retry gets "A pull request already exists". The PR is
// there, so the result must be that PR, not a failure (and never a second
// PR).
func TestProposeAfterALostCreateAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	target, err := url.Parse(f.s.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var lost bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/pulls") && !lost {
			lost = true
			proxy.ServeHTTP(httptest.NewRecorder(), r) // GitHub creates it...
			w.WriteHeader(http.StatusBadGateway)       // ...and the answer is lost
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	gh, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: front.URL, WriteInterval: -1,
		Retry: ghapi.RetryPolicy{BaseBackoff: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	b := makeBundle(t, f.head, theFix)
	res, err := publish.Publish(t.Context(), gh, publish.Request{Bundle: b, Job: f.job(route.WritePropose), Config: config.Default()})
	if err != nil {
		t.Fatalf("the PR was opened but Publish says: %v", err)
	}
	pulls := f.s.Pulls(repo)
	if len(pulls) != 2 {
		t.Fatalf("%d PRs, want #7 and one proposal", len(pulls))
	}
	if res.Status != publish.StatusFixed || res.PRNumber != 8 || !strings.Contains(pulls[1].Body, "Step trace") {
		t.Errorf("result = %+v; PR body:\n%s", res, pulls[1].Body)
	}
}

// TestCRLFCheckoutCommitsTheDiffsContent: on a checkout with CRLF line
// endings the files read from disk differ from the diff git made only in
// line endings; the commit must carry the repository's LF content (what the
// diff shows), not turn every line of the file into a change.
func TestCRLFCheckoutCommitsTheDiffsContent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := makeBundle(t, f.head, edit{write: map[string]string{"parser.go": "package hello\n\nfunc Parse(s string) int { return 0 }\n"}})
	b.Files[0].Content = bytes.ReplaceAll(b.Files[0].Content, []byte("\n"), []byte("\r\n"))
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: f.job(route.WritePropose), Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.s.Files(repo, res.Branch)["parser.go"].Content; got != "package hello\n\nfunc Parse(s string) int { return 0 }\n" {
		t.Errorf("committed parser.go = %q", got)
	}
}

// A policy whose protected globs do not parse (a Config built by hand;
// Parse refuses them) refuses every bundle instead of protecting nothing.
func TestCheckRefusesBadProtectedGlob(t *testing.T) {
	t.Parallel()
	c := config.Default()
	c.Protected = []string{"["}
	_, err := publish.Check(&bundle.Bundle{Version: bundle.Version, Mode: "fix", Status: bundle.StatusNotFixed}, c)
	if !errors.Is(err, publish.ErrRefused) || !strings.Contains(err.Error(), `"["`) {
		t.Fatalf("Check = %v, want ErrRefused naming the glob", err)
	}
}
