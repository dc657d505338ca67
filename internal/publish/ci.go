package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/report"
)

// CIStatus is the state of the "CI on this branch" section of a PR.
type CIStatus string

// CI statuses.
const (
	// CIPending: the PR was just written; the dispatch comes next.
	CIPending CIStatus = "pending"
	// CIOff: the workflow cannot be dispatched; the section says why.
	CIOff CIStatus = "off"
	// CIDispatched: GitHub accepted the dispatch; its run was not found yet.
	CIDispatched CIStatus = "dispatched"
	CIRunning    CIStatus = "running"
	CIPassed     CIStatus = "passed"
	CIFailed     CIStatus = "failed"
	// CIEnded: completed neither passed nor failed (cancelled, skipped...).
	CIEnded CIStatus = "ended"
)

func validCIStatus(s CIStatus) bool {
	switch s {
	case CIPending, CIOff, CIDispatched, CIRunning, CIPassed, CIFailed, CIEnded:
		return true
	}
	return false
}

// ciState is what the state marker keeps of the CI section.
type ciState struct {
	Status CIStatus
	// Workflow is the dispatched workflow (ID or file name).
	Workflow string
	RunID    int64
	// FailSig and FailSeen: the last failing run's failure signature (short
	// hex) and how many completions reported it (the follow-up cap).
	FailSig  string
	FailSeen int
}

// Section markers of the CI section in the PR body.
const (
	ciBegin = "<!-- mini-agent:ci-begin -->"
	ciEnd   = "<!-- mini-agent:ci-end -->"
)

// ciView is the section's content.
type ciView struct {
	Status        CIStatus
	Branch        string
	RunURL        string
	RunID         int64
	Conclusion    string
	Why, HowTo    string
	FailedContext string // markdown, already sanitised
}

func (v ciView) render() string {
	var w strings.Builder
	w.WriteString(ciBegin + "\n")
	run := fmt.Sprintf("[run %d](%s)", v.RunID, v.RunURL)
	switch v.Status {
	case CIPending:
		w.WriteString("**CI on this branch:** ⏳ mini-agent dispatches the failing workflow on `" + v.Branch + "` next.\n")
	case CIOff:
		w.WriteString("**CI on this branch:** not run. GitHub starts no workflows for commits made with a workflow's `GITHUB_TOKEN`, " +
			"and mini-agent could not dispatch it: " + period(v.Why) + "\n")
		if v.HowTo != "" {
			w.WriteString("To enable it: " + period(v.HowTo) + "\n")
		}
	case CIDispatched:
		w.WriteString("**CI on this branch:** ⏳ dispatched on `" + v.Branch + "`; its run was not listed yet (a later mini-agent run updates this).\n")
	case CIRunning:
		w.WriteString("**CI on this branch:** ⏳ running → " + run + " (dispatched by mini-agent on `" + v.Branch + "`).\n")
	case CIPassed:
		w.WriteString("**CI on this branch:** ✅ passed → " + run + ".\n")
	case CIFailed:
		w.WriteString("**CI on this branch:** ❌ failed → " + run + ". This PR is not ready: the maintainer's CI fails on it.\n")
		if v.FailedContext != "" {
			w.WriteString("\n" + v.FailedContext + "\n")
		}
	case CIEnded:
		w.WriteString("**CI on this branch:** ⚪ " + v.Conclusion + " → " + run + ".\n")
	}
	w.WriteString(ciEnd)
	return w.String()
}

// period ends s with a full stop.
func period(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

// withCI puts section into body (replacing the previous one, else before the
// state marker) and rewrites the state marker as st.
func withCI(body, section string, st state) string {
	if i := strings.Index(body, ciBegin); i >= 0 {
		if j := strings.Index(body[i:], ciEnd); j >= 0 {
			body = body[:i] + section + body[i+j+len(ciEnd):]
			return withMarker(body, st)
		}
	}
	if loc := stateRE.FindAllStringIndex(body, -1); len(loc) > 0 {
		at := loc[len(loc)-1][0]
		return withMarker(body[:at]+section+"\n\n"+body[at:], st)
	}
	return withMarker(strings.TrimRight(body, "\n")+"\n\n"+section+"\n", st)
}

// withMarker replaces the body's last state marker with st's (or appends it).
func withMarker(body string, st state) string {
	loc := stateRE.FindAllStringIndex(body, -1)
	if len(loc) == 0 {
		return strings.TrimRight(body, "\n") + "\n" + st.marker() + "\n"
	}
	l := loc[len(loc)-1]
	return body[:l[0]] + st.marker() + body[l[1]:]
}

// CIAPI is what proving CI on a fix branch calls (ghapi.Client implements it).
type CIAPI interface {
	GetWorkflow(ctx context.Context, owner, repo, workflow string) (*ghapi.Workflow, error)
	FileAtRef(ctx context.Context, owner, repo, path, ref string) ([]byte, error)
	DispatchWorkflow(ctx context.Context, owner, repo, workflow, ref string) error
	BranchRuns(ctx context.Context, owner, repo, workflow, branch, event string, since time.Time) ([]ghapi.BranchRun, error)
	WorkflowRun(ctx context.Context, owner, repo string, id int64) (*ghapi.Run, error)
	PullRequest(ctx context.Context, owner, repo string, number int) (*ghapi.PR, error)
	UpdatePR(ctx context.Context, owner, repo string, number int, u ghapi.PRUpdate) (*ghapi.PR, error)
}

// CIRequest is a published fix branch to run CI on.
type CIRequest struct {
	Owner, Repo string
	PR          int
	Branch      string
	// HeadSHA is the fix commit; the dispatched run must be on it.
	HeadSHA string
	// Workflow is the failing workflow (ID or file name); "" when unknown.
	Workflow string
	// Wait bounds waiting for the run to complete (0: do not wait).
	Wait time.Duration
	// Find bounds looking for the run a dispatch started (default 60s);
	// Poll is the interval between looks (default 10s).
	Find, Poll time.Duration
	Log        io.Writer
}

// CIResult is what became of the CI section.
type CIResult struct {
	Status CIStatus
	RunID  int64
	RunURL string
	// Why: for CIOff, why the workflow could not be dispatched.
	Why string
}

// ProveCI dispatches the failing workflow on the PR's fix branch when it
// can, finds the run it started, optionally waits for it within req.Wait,
// and keeps the PR body's CI section (and state marker) up to date, except
// for a failure (seen while waiting, or already when the run was found):
// the caller reports it with FollowUp. A
// workflow that cannot be dispatched is not an error: the section says why
// and how to enable it. Errors are failures to update the PR.
func ProveCI(ctx context.Context, gh CIAPI, req CIRequest) (*CIResult, error) {
	if req.Find <= 0 {
		req.Find = time.Minute
	}
	if req.Poll <= 0 {
		req.Poll = 10 * time.Second
	}
	if req.Log == nil {
		req.Log = io.Discard
	}
	v := ciView{Branch: req.Branch}
	v.Status, v.Why, v.HowTo = CIOff, "", ""
	run, why, how := dispatch(ctx, gh, req)
	switch {
	case why != "":
		v.Why, v.HowTo = why, how
	case run == nil:
		v.Status = CIDispatched
	default:
		v = viewOf(req.Branch, run)
	}
	fmt.Fprintf(req.Log, "ci: %s %s\n", v.Status, orNone(v.RunURL+v.Why))
	// A run that had already failed when it was found is the caller's to
	// report, like one that fails while waiting: written here, the
	// caller's FollowUp would see it as already recorded and leave out the
	// failure's context and the draft.
	if v.Status != CIFailed {
		if err := updateCI(ctx, gh, req, v); err != nil {
			return nil, err
		}
	}
	if v.Status == CIRunning && req.Wait > 0 {
		final, err := waitRun(ctx, gh, req, v.RunID)
		if err != nil {
			fmt.Fprintf(req.Log, "ci: stopped waiting for run %d: %v\n", v.RunID, err)
		}
		if final != nil {
			v = viewOf(req.Branch, final)
			// A failure is the caller's to report with its context
			// (FollowUp, which also turns the PR draft).
			if v.Status != CIFailed {
				if err := updateCI(ctx, gh, req, v); err != nil {
					return nil, err
				}
			}
		}
	}
	return &CIResult{Status: v.Status, RunID: v.RunID, RunURL: v.RunURL, Why: v.Why}, nil
}

// dispatch returns the run the dispatch started (nil when not found in
// time), or why the workflow cannot be dispatched and how to enable it.
func dispatch(ctx context.Context, gh CIAPI, req CIRequest) (*ghapi.BranchRun, string, string) {
	if req.Workflow == "" {
		why, how := unknownWorkflow()
		return nil, why, how
	}
	wf, err := gh.GetWorkflow(ctx, req.Owner, req.Repo, req.Workflow)
	if err != nil {
		return nil, "the workflow could not be read: " + oneLine(err.Error()), permHint(err)
	}
	src, err := gh.FileAtRef(ctx, req.Owner, req.Repo, wf.Path, req.Branch)
	if err != nil {
		return nil, fmt.Sprintf("`%s` could not be read on `%s`: %s", wf.Path, req.Branch, oneLine(err.Error())), permHint(err)
	}
	ok, err := hasDispatchTrigger(src)
	if err != nil {
		return nil, fmt.Sprintf("`%s`: %v", wf.Path, err), ""
	}
	if !ok {
		return nil, fmt.Sprintf("`%s` has no `workflow_dispatch` trigger", wf.Path),
			fmt.Sprintf("add `workflow_dispatch:` to the `on:` of `%s`, or pass a GitHub App token as `github-token` (its commits start CI)", wf.Path)
	}
	// The runner's clock and GitHub's may differ: a wide window, and the
	// runs listed before the dispatch are told apart by ID.
	since := time.Now().Add(-2 * time.Minute)
	known := map[int64]bool{}
	before, err := gh.BranchRuns(ctx, req.Owner, req.Repo, req.Workflow, req.Branch, "workflow_dispatch", since)
	if err != nil {
		return nil, "the workflow's runs could not be listed: " + oneLine(err.Error()), permHint(err)
	}
	for _, r := range before {
		known[r.ID] = true
	}
	if err := gh.DispatchWorkflow(ctx, req.Owner, req.Repo, req.Workflow, req.Branch); err != nil {
		switch {
		case errors.Is(err, ghapi.ErrForbidden):
			return nil, "the token may not dispatch workflows (it lacks `actions: write`)", permHint(err)
		case errors.Is(err, ghapi.ErrUnprocessable):
			return nil, "GitHub refused the dispatch: " + oneLine(err.Error()),
				"make sure `workflow_dispatch` needs no input without a default"
		}
		return nil, "the dispatch failed: " + oneLine(err.Error()), ""
	}
	deadline := time.Now().Add(req.Find)
	for {
		runs, err := gh.BranchRuns(ctx, req.Owner, req.Repo, req.Workflow, req.Branch, "workflow_dispatch", since)
		if err == nil {
			for _, r := range runs { // newest first
				if !known[r.ID] && (req.HeadSHA == "" || r.HeadSHA == req.HeadSHA) {
					return &r, "", ""
				}
			}
		}
		if time.Now().Add(req.Poll).After(deadline) || sleep(ctx, req.Poll) != nil {
			return nil, "", ""
		}
	}
}

// unknownWorkflow says why a run that does not know the failing workflow
// (a comment command) cannot dispatch it, and how to get CI.
func unknownWorkflow() (why, how string) {
	return "the failing workflow is not known to this run",
		"run mini-agent from the workflow_run fixer recipe (see the README), where the failing workflow is the event's"
}

// permHint says how to give the token what a 403 says it lacks.
func permHint(err error) string {
	var ae *ghapi.APIError
	if errors.As(err, &ae) && errors.Is(err, ghapi.ErrForbidden) {
		perm := ae.Permission
		if perm == "" {
			perm = "actions: write"
		}
		return fmt.Sprintf("give the job `permissions: %s` (optional: it only lets mini-agent run CI on its PRs), or pass a GitHub App token as `github-token`", perm)
	}
	return ""
}

// waitRun polls run id until it completes, ctx ends or req.Wait passes; the
// last state read, nil when none.
func waitRun(ctx context.Context, gh CIAPI, req CIRequest, id int64) (*ghapi.BranchRun, error) {
	ctx, cancel := context.WithTimeout(ctx, req.Wait)
	defer cancel()
	var last *ghapi.BranchRun
	for {
		if err := sleep(ctx, req.Poll); err != nil {
			return last, err
		}
		r, err := gh.WorkflowRun(ctx, req.Owner, req.Repo, id)
		if err != nil {
			return last, err
		}
		last = &ghapi.BranchRun{ID: r.ID, Status: r.Status, Conclusion: r.Conclusion, HeadSHA: r.HeadSHA, HTMLURL: r.HTMLURL}
		if r.Status == "completed" {
			return last, nil
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// viewOf is the section for a run's state.
func viewOf(branch string, r *ghapi.BranchRun) ciView {
	v := ciView{Branch: branch, RunID: r.ID, RunURL: r.HTMLURL, Status: CIRunning}
	if r.Status == "completed" {
		v.Status, v.Conclusion = statusOfConclusion(r.Conclusion), r.Conclusion
	}
	return v
}

func statusOfConclusion(c string) CIStatus {
	switch c {
	case "success":
		return CIPassed
	case "failure", "timed_out", "startup_failure":
		return CIFailed
	}
	return CIEnded
}

// updateCI rewrites the PR body's CI section and state marker from v,
// reading the body fresh so that nothing else in it is lost.
func updateCI(ctx context.Context, gh CIAPI, req CIRequest, v ciView) error {
	pr, err := gh.PullRequest(ctx, req.Owner, req.Repo, req.PR)
	if err != nil {
		return fmt.Errorf("publish: ci: %w", err)
	}
	st := parseState(pr.Body)
	st.CI.Status, st.CI.RunID = v.Status, v.RunID
	st.CI.Workflow = req.Workflow
	body := withCI(pr.Body, v.render(), st)
	if body == pr.Body {
		return nil
	}
	if _, err := gh.UpdatePR(ctx, req.Owner, req.Repo, req.PR, ghapi.PRUpdate{Body: &body}); err != nil {
		return fmt.Errorf("publish: ci: %w", err)
	}
	return nil
}

// oneLine keeps the first line of s, bounded and safe to embed (API
// messages are outside text).
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return report.Untrusted(cutUTF8(plain(s), 300))
}

// FailedCIRun is the CI run a PR body's state marker says failed on the
// branch (0 when none): an iteration on the PR starts from its logs.
func FailedCIRun(body string) int64 {
	st := parseState(body)
	if st.CI.Status != CIFailed {
		return 0
	}
	return st.CI.RunID
}
