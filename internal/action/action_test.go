package action

import (
	"github.com/org/mini-agent/internal/exitcode"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/internal/bundle"

	"github.com/google/go-github/v62/github"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
)

func TestActionWorkflowRunFixer(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc := newScene(t, "")
	sc.s.AddRun(testRepo, ghtest.Run{ID: 101, HeadBranch: "main", HeadSHA: sc.fake, Jobs: []ghtest.Job{
		{ID: 7001, Name: "test", FailedStep: "Run go test ./...", Log: sc.failingLog(t)},
		{ID: 7002, Name: "lint", Conclusion: "success"},
	}})
	env, vars, stdout := sc.env(t, "workflow_run", workflowRunPayload(101, sc.head, "main", nil), nil)

	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	out := outputs(t, vars["GITHUB_OUTPUT"])
	if out["status"] != "fixed" || !strings.HasPrefix(out["branch"], "mini-agent/fix-") ||
		out["pr-url"] != "https://github.com/octo-org/shop/pull/1" || out["steps"] == "" || out["tokens"] == "" {
		t.Errorf("outputs = %v", out)
	}
	for _, k := range outputNames {
		if _, ok := out[k]; !ok {
			t.Errorf("output %s not set", k)
		}
	}
	for _, f := range []string{out["bundle"], out["trace"]} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("output file: %v", err)
		}
	}

	pulls := sc.s.Pulls(testRepo)
	if len(pulls) != 1 || pulls[0].Base != "main" || pulls[0].Head != out["branch"] {
		t.Fatalf("pulls = %+v", pulls)
	}
	for _, want := range []string{"Step trace", "apply_patch", "Prices are in cents", "full test command",
		"Failing run: https://github.com/octo-org/shop/actions/runs/101", "Write policy: **propose**", "GITHUB_TOKEN", "attempts=1",
		"<sub>Written by mini-agent " + testVersion + ".</sub>"} {
		if !strings.Contains(pulls[0].Body, want) {
			t.Errorf("PR body lacks %q", want)
		}
	}
	if got := sc.s.Files(testRepo, out["branch"])["cart.go"].Content; !strings.Contains(got, "for i := 0; i < len(items); i++") {
		t.Errorf("fix branch cart.go:\n%s", got)
	}
	if sc.s.LogAuthViolations() != 0 {
		t.Error("the job log was downloaded with a credential")
	}

	log := stdout.String()
	for _, want := range []string{"::add-mask::" + testToken, "::add-mask::" + testAPIKey, "::group::step 1: search", "::endgroup::", "::notice::mini-agent fixed"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	for _, line := range strings.Split(log, "\n") {
		if (strings.Contains(line, testToken) || strings.Contains(line, testAPIKey)) && !strings.HasPrefix(line, "::add-mask::") {
			t.Errorf("secret printed outside a mask command: %q", line)
		}
	}
	summary, _ := os.ReadFile(vars["GITHUB_STEP_SUMMARY"])
	for _, want := range []string{"## mini-agent: fixed", "Pull request: https://github.com/octo-org/shop/pull/1", "Unverified assumptions"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary lacks %q", want)
		}
	}

	// A rerun of the same failure (a fresh checkout) updates the PR.
	git(t, sc.ws, "reset", "-q", "--hard")
	git(t, sc.ws, "clean", "-qfd")
	env2, vars2, stdout2 := sc.env(t, "workflow_run", workflowRunPayload(101, sc.head, "main", nil), nil)
	if code := actionMain(t.Context(), env2); code != 0 {
		t.Fatalf("rerun: exit %d\n%s", code, stdout2)
	}
	out2 := outputs(t, vars2["GITHUB_OUTPUT"])
	if out2["status"] != "fixed" || out2["pr-url"] != out["pr-url"] || out2["branch"] != out["branch"] {
		t.Errorf("rerun outputs = %v, want the same PR", out2)
	}
	if pulls := sc.s.Pulls(testRepo); len(pulls) != 1 || !strings.Contains(pulls[0].Body, "attempts=2") {
		t.Errorf("after rerun: %d PRs (body has attempts=2: %v)", len(pulls), len(pulls) > 0 && strings.Contains(pulls[0].Body, "attempts=2"))
	}

	// The maintainer closes the PR: the same failure at the same commit is
	// skipped before any model call.
	closed := "closed"
	if _, _, err := newTestClient(t, sc).GitHub().PullRequests.Edit(t.Context(), "octo-org", "shop", 1, &github.PullRequest{State: &closed}); err != nil {
		t.Fatal(err)
	}
	git(t, sc.ws, "reset", "-q", "--hard")
	env3, vars3, stdout3 := sc.env(t, "workflow_run", workflowRunPayload(101, sc.head, "main", nil), nil)
	if code := actionMain(t.Context(), env3); code != 0 {
		t.Fatalf("after close: exit %d\n%s", code, stdout3)
	}
	if out := outputs(t, vars3["GITHUB_OUTPUT"]); out["status"] != "skipped" || out["steps"] != "" {
		t.Errorf("after close: outputs = %v", out)
	}
	if strings.Contains(stdout3.String(), "::group::") || !strings.Contains(stdout3.String(), "closed without merging") {
		t.Errorf("after close: the model ran or the reason is missing:\n%s", stdout3)
	}
}

func newTestClient(t *testing.T, sc *scene) *ghapi.Client {
	t.Helper()
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: testToken, BaseURL: sc.s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// prScene adds PR #1 from branch feature (one commit past main) and checks
// the workspace out at its head.
func prScene(t *testing.T, policy string, labels ...string) (*scene, int) {
	t.Helper()
	sc := newScene(t, policy)
	fake := sc.s.Push(testRepo, "feature", map[string]string{"NOTES.md": "notes\n"})
	writeFile(t, filepath.Join(sc.ws, "NOTES.md"), "notes\n")
	git(t, sc.ws, "add", "-A")
	git(t, sc.ws, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "notes")
	sc.head, sc.fake = strings.TrimSpace(git(t, sc.ws, "rev-parse", "HEAD")), fake
	sc.proxy.Alias(sc.head, sc.fake)
	n := sc.s.AddPR(testRepo, ghtest.PR{Title: "Cart totals", Head: "feature", Base: "main", Labels: labels})
	return sc, n
}

func commentPayload(pr int, id int64, login, userType, association, body string) map[string]any {
	return map[string]any{
		"action": "created",
		"issue": map[string]any{"number": pr, "state": "open",
			"pull_request": map[string]any{"url": "https://api.github.com/repos/" + testRepo + "/pulls/1"}},
		"comment": map[string]any{"id": id, "body": body, "author_association": association,
			"user": map[string]any{"login": login, "type": userType}},
		"repository": map[string]any{"full_name": testRepo, "name": "shop", "default_branch": "main"},
	}
}

func TestActionCommentCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc, pr := prScene(t, "")
	id := sc.s.AddComment(testRepo, pr, "hubot", "MEMBER", "/mini-agent fix keep the change small")
	env, vars, stdout := sc.env(t, "issue_comment", commentPayload(pr, id, "hubot", "User", "MEMBER", "/mini-agent fix keep the change small"), nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	out := outputs(t, vars["GITHUB_OUTPUT"])
	if out["status"] != "fixed" || out["pr-url"] != "https://github.com/octo-org/shop/pull/2" {
		t.Errorf("outputs = %v", out)
	}
	pulls := sc.s.Pulls(testRepo)
	if len(pulls) != 2 || pulls[1].Base != "feature" {
		t.Fatalf("pulls = %+v, want a proposal against feature", pulls)
	}
	comments := sc.s.Comments(testRepo, pr)
	if len(comments) != 2 {
		t.Fatalf("comments = %+v, want the command and one tracking comment", comments)
	}
	if len(comments[0].Reactions) != 1 || comments[0].Reactions[0] != "eyes" {
		t.Errorf("reactions on the command = %v, want eyes", comments[0].Reactions)
	}
	if !strings.Contains(comments[1].Body, "Proposed a fix in https://github.com/octo-org/shop/pull/2") {
		t.Errorf("tracking comment:\n%s", comments[1].Body)
	}
	if n := sc.s.Count("PATCH", "/repos/octo-org/shop/issues/comments/"); n != 1 {
		t.Errorf("tracking comment edited %d times, want 1 (progress, then result)", n)
	}
	// The failing run of a comment command is not known: no link to
	// mini-agent's own run (4242), and the PR body says so.
	if body := pulls[1].Body; strings.Contains(body, "/actions/runs/4242") || strings.Contains(body, "Failing run: https://") ||
		!strings.Contains(body, "Failing run: none known") {
		t.Errorf("the PR body links a failing run it does not know:\n%s", body)
	}
	trace, _ := os.ReadFile(out["trace"])
	if !strings.Contains(string(trace), "turn.start") {
		t.Error("no trace written")
	}
}

func TestActionReadOnlyLabelExplains(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc, pr := prScene(t, "", "mini-agent:read-only")
	sc.s.AddRun(testRepo, ghtest.Run{ID: 202, HeadBranch: "feature", HeadSHA: sc.fake, PRs: []int{pr}, Jobs: []ghtest.Job{
		{ID: 8001, Name: "test", FailedStep: "Run go test ./...", Log: sc.failingLog(t)}}})
	env, vars, stdout := sc.env(t, "workflow_run", workflowRunPayload(202, sc.head, "feature", []int{pr}), nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	out := outputs(t, vars["GITHUB_OUTPUT"])
	if out["status"] != "explained" || out["pr-url"] == "" {
		t.Errorf("outputs = %v", out)
	}
	if n := len(sc.s.Pulls(testRepo)); n != 1 {
		t.Errorf("%d PRs: a read-only run opened one", n)
	}
	if n := sc.s.Count("POST", "/repos/octo-org/shop/git/"); n != 0 {
		t.Errorf("%d git writes in a read-only run", n)
	}
	c := sc.s.Comments(testRepo, pr)
	if len(c) != 1 || !strings.Contains(c[0].Body, "diagnosis (read-only)") || !strings.Contains(c[0].Body, "Write policy: **read-only**") {
		t.Errorf("comments = %+v", c)
	}
	if !strings.Contains(stdout.String(), "DENIED") && !strings.Contains(stdout.String(), "denied") {
		t.Errorf("the read-only policy did not deny the patch:\n%s", stdout)
	}
}

func TestActionSkipsAndFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		event    string
		payload  func(sc *scene) any
		policy   string
		inputs   map[string]string
		wantCode int
		status   string
		want     string // in the log
		requests bool   // whether any API request is expected
	}{
		{name: "outsider comment", event: "issue_comment", status: "skipped", want: "association NONE",
			payload: func(sc *scene) any { return commentPayload(1, 5, "stranger", "User", "NONE", "/mini-agent fix") }},
		{name: "chatter", event: "issue_comment", status: "skipped", want: "not a /mini-agent command",
			payload: func(sc *scene) any { return commentPayload(1, 5, "hubot", "User", "MEMBER", "LGTM") }},
		{name: "cancelled run", event: "workflow_run", status: "skipped", want: "was cancelled",
			payload: func(sc *scene) any {
				p := workflowRunPayload(9, sc.head, "main", nil)
				p["workflow_run"].(map[string]any)["conclusion"] = "cancelled"
				return p
			}},
		{name: "bad policy", event: "workflow_run", policy: "labels:\n  of: x\n", status: "failed", wantCode: 2, requests: true,
			want: `unknown key "of"`, payload: func(sc *scene) any { return workflowRunPayload(9, sc.head, "main", nil) }},
		{name: "bad input", event: "workflow_run", inputs: map[string]string{"max-steps": "lots"}, status: "failed", wantCode: 2,
			want: "max-steps", payload: func(sc *scene) any { return workflowRunPayload(9, sc.head, "main", nil) }},
		{name: "unknown run", event: "workflow_run", status: "failed", wantCode: exitcode.Failed, requests: true, want: "jobs of run 9",
			payload: func(sc *scene) any {
				p := workflowRunPayload(9, sc.head, "main", nil)
				p["workflow_run"].(map[string]any)["pull_requests"] = []map[string]any{{"number": 77}}
				return p
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc := newScene(t, tt.policy)
			env, vars, stdout := sc.env(t, tt.event, tt.payload(sc), tt.inputs)
			code := actionMain(t.Context(), env)
			out := outputs(t, vars["GITHUB_OUTPUT"])
			if code != tt.wantCode || out["status"] != tt.status {
				t.Errorf("exit %d status %q, want %d %q\n%s", code, out["status"], tt.wantCode, tt.status, stdout)
			}
			if !strings.Contains(stdout.String(), tt.want) {
				t.Errorf("log lacks %q:\n%s", tt.want, stdout)
			}
			if n := len(sc.s.Requests()); (n > 0) != tt.requests {
				t.Errorf("%d API requests", n)
			}
			for _, r := range sc.s.Requests() {
				if r.Method != "GET" {
					t.Errorf("a skipped or failed event wrote: %s %s", r.Method, r.Path)
				}
			}
		})
	}
}

func TestActionMergesIdenticalFailuresAcrossMatrixLegs(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc := newScene(t, "")
	sc.s.AddRun(testRepo, ghtest.Run{ID: 303, HeadBranch: "main", HeadSHA: sc.fake, Jobs: []ghtest.Job{
		{ID: 9001, Name: "test (ubuntu, 1.25)", FailedStep: "Run go test ./...", Log: sc.failingLog(t)},
		{ID: 9002, Name: "test (ubuntu, 1.26)", FailedStep: "Run go test ./...", Log: sc.failingLog(t)},
	}})
	env, vars, stdout := sc.env(t, "workflow_run", workflowRunPayload(303, sc.head, "main", nil), nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	b, err := bundle.Read(outputs(t, vars["GITHUB_OUTPUT"])["bundle"])
	if err != nil {
		t.Fatal(err)
	}
	if len(b.FailingTests) != 1 || !strings.Contains(b.Failure, "(seen 2 times)") {
		t.Fatalf("failing %v, failure context:\n%s", b.FailingTests, b.Failure)
	}
	if !strings.Contains(stdout.String(), "read 2 failed job log(s)") {
		t.Errorf("log:\n%s", stdout)
	}
}

// stallingLogs answers the log host with headers, then a body that never
// comes (a trickling or hung blob host) until the request is cancelled.
type stallingLogs struct {
	host string
	next http.RoundTripper
}

func (s stallingLogs) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != s.host {
		return s.next.RoundTrip(r)
	}
	pr, pw := io.Pipe()
	go func() {
		<-r.Context().Done()
		pw.CloseWithError(r.Context().Err())
	}()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: pr, Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

// TestActionHungLogDownloadHasADeadline: every GitHub call of the action,
// the log download included, ends by a deadline instead of hanging the job
// until GitHub's 6-hour limit.
func TestActionHungLogDownloadHasADeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc := newScene(t, "")
	sc.s.AddRun(testRepo, ghtest.Run{ID: 111, HeadBranch: "main", HeadSHA: sc.fake, Jobs: []ghtest.Job{
		{ID: 7101, Name: "test", FailedStep: "Run go test ./...", Log: sc.failingLog(t)},
	}})
	env, vars, stdout := sc.env(t, "workflow_run", workflowRunPayload(111, sc.head, "main", nil), nil)
	logURL, err := url.Parse(sc.s.LogURL)
	if err != nil {
		t.Fatal(err)
	}
	env.HTTPClient = &http.Client{Transport: stallingLogs{host: logURL.Host, next: http.DefaultTransport}}
	env.CallTimeout = 500 * time.Millisecond
	done := make(chan int, 1)
	go func() { done <- actionMain(t.Context(), env) }()
	select {
	case code := <-done:
		out := outputs(t, vars["GITHUB_OUTPUT"])
		if code != exitcode.Failed || out["status"] != "failed" {
			t.Errorf("exit %d status %q, want %d failed\n%s", code, out["status"], exitcode.Failed, stdout)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the action hangs on a log download that never ends")
	}
}

// TestActionRefusedPublishUpdatesTheTrackingComment: when publishing refuses
// the result (here the checkout's cart.go differs from GitHub's at the same
// commit, so the diff does not bind to what would be committed), a command's
// tracking comment must say so, not keep "Working on it" forever.
func TestActionRefusedPublishUpdatesTheTrackingComment(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc := newScene(t, "")
	cart, err := os.ReadFile(filepath.Join(sc.ws, "cart.go"))
	if err != nil {
		t.Fatal(err)
	}
	crlf := strings.ReplaceAll(string(cart), "\n", "\r\n")
	fake := sc.s.Push(testRepo, "feature", map[string]string{"NOTES.md": "notes\n", "cart.go": crlf})
	writeFile(t, filepath.Join(sc.ws, "NOTES.md"), "notes\n")
	git(t, sc.ws, "add", "-A")
	git(t, sc.ws, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "notes")
	sc.head, sc.fake = strings.TrimSpace(git(t, sc.ws, "rev-parse", "HEAD")), fake
	sc.proxy.Alias(sc.head, sc.fake)
	pr := sc.s.AddPR(testRepo, ghtest.PR{Title: "Cart totals", Head: "feature", Base: "main"})
	id := sc.s.AddComment(testRepo, pr, "hubot", "MEMBER", "/mini-agent fix")
	env, vars, stdout := sc.env(t, "issue_comment", commentPayload(pr, id, "hubot", "User", "MEMBER", "/mini-agent fix"), nil)
	code := actionMain(t.Context(), env)
	if out := outputs(t, vars["GITHUB_OUTPUT"]); code != exitcode.Failed || out["status"] != "failed" {
		t.Fatalf("exit %d status %q, want %d failed\n%s", code, out["status"], exitcode.Failed, stdout)
	}
	comments := sc.s.Comments(testRepo, pr)
	if len(comments) != 2 {
		t.Fatalf("comments = %+v, want the command and one tracking comment", comments)
	}
	if body := comments[1].Body; strings.Contains(body, "Working on it") || !strings.Contains(body, "does not match the diff") && !strings.Contains(body, "does not apply") {
		t.Errorf("tracking comment after a refused publish:\n%s", body)
	}
	for _, r := range sc.s.Requests() {
		if r.Method == "POST" && strings.HasPrefix(r.Path, "/repos/octo-org/shop/git/") && !isPreflightBlob(r) {
			t.Errorf("a git write for a refused result: %s %s", r.Method, r.Path)
		}
	}
}

func TestActionCommentOnAnOffPRGetsAnAnswer(t *testing.T) {
	t.Parallel()
	sc, pr := prScene(t, "", "mini-agent:off")
	id := sc.s.AddComment(testRepo, pr, "hubot", "MEMBER", "/mini-agent fix")
	env, vars, stdout := sc.env(t, "issue_comment", commentPayload(pr, id, "hubot", "User", "MEMBER", "/mini-agent fix"), nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if out := outputs(t, vars["GITHUB_OUTPUT"]); out["status"] != "skipped" {
		t.Errorf("outputs = %v", out)
	}
	comments := sc.s.Comments(testRepo, pr)
	if len(comments) != 2 || !strings.Contains(comments[1].Body, "**Skipped:** label mini-agent:off") {
		t.Fatalf("comments = %+v, want the command and an answer saying it is off", comments)
	}
	if n := len(sc.s.Pulls(testRepo)); n != 1 {
		t.Errorf("%d PRs: a skipped command opened one", n)
	}
}

// TestActionCommentOnAForkPRGetsAnAnswer: a member's `/mini-agent fix` on a
// fork PR the policy does not allow is refused after the PR is read, and
// the refusal is answered on the tracking comment like the other refusals.
func TestActionCommentOnAForkPRGetsAnAnswer(t *testing.T) {
	t.Parallel()
	sc := newScene(t, "")
	pr := sc.s.AddPR(testRepo, ghtest.PR{Title: "From a fork", Head: "patch-1", HeadRepo: "someone/shop",
		HeadSHA: strings.Repeat("f", 40), Base: "main"})
	id := sc.s.AddComment(testRepo, pr, "hubot", "MEMBER", "/mini-agent fix")
	env, vars, stdout := sc.env(t, "issue_comment", commentPayload(pr, id, "hubot", "User", "MEMBER", "/mini-agent fix"), nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if out := outputs(t, vars["GITHUB_OUTPUT"]); out["status"] != "skipped" {
		t.Errorf("outputs = %v", out)
	}
	comments := sc.s.Comments(testRepo, pr)
	if len(comments) != 2 || !strings.Contains(comments[1].Body, "**Skipped:** the failing head is in the fork someone/shop") {
		t.Fatalf("comments = %+v, want the command and an answer naming the fork", comments)
	}
	if n := len(sc.s.Pulls(testRepo)); n != 1 {
		t.Errorf("%d PRs: a refused command opened one", n)
	}
}

// TestActionExplainCommandStatesThePolicyOnce: the tracking comment that
// carries the report names the write policy once (the report says it; the
// comment's header does not repeat it), and links no failing run.
func TestActionExplainCommandStatesThePolicyOnce(t *testing.T) {
	t.Parallel()
	sc, pr := prScene(t, "")
	id := sc.s.AddComment(testRepo, pr, "hubot", "MEMBER", "/mini-agent explain")
	env, vars, stdout := sc.env(t, "issue_comment", commentPayload(pr, id, "hubot", "User", "MEMBER", "/mini-agent explain"),
		map[string]string{"script": filepath.Join("testdata", "explain.jsonl")})
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if out := outputs(t, vars["GITHUB_OUTPUT"]); out["status"] != "explained" {
		t.Errorf("outputs = %v", out)
	}
	comments := sc.s.Comments(testRepo, pr)
	if len(comments) != 2 || !strings.Contains(comments[1].Body, "### Root cause") {
		t.Fatalf("comments = %+v, want the command and the report", comments)
	}
	body := comments[1].Body
	if n := strings.Count(body, "Write policy:"); n != 1 {
		t.Errorf("the tracking comment states the write policy %d times:\n%s", n, body)
	}
	if strings.Contains(body, "/actions/runs/4242") || !strings.Contains(body, "Failing run: none known") {
		t.Errorf("the tracking comment links a failing run it does not know:\n%s", body)
	}
}
