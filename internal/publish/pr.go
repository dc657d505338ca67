package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/report"
	"github.com/org/mini-agent/internal/route"
)

// Title and message bounds.
const (
	maxTitleBytes   = 200
	maxSummaryBytes = 2000
)

// propose commits the change on the failure's own branch and opens a PR
// against the failing branch, or updates the PR already open for it. A
// closed, unmerged PR for the same failure at the same commit means the
// maintainer said no; max-attempts bounds reruns. draft marks a run without
// a validated fix (on-failure: draft); why says why.
func (p *publisher) propose(ctx context.Context, draft bool, why string) (*Result, error) {
	job, b := p.job, p.b
	target := job.Branch
	if target == "" {
		return nil, errors.New("publish: no failing branch to propose a fix against")
	}
	// A run on a tag (its head_branch is the tag's name) or on a branch
	// deleted since has no base for a PR: find out before anything is written.
	if why, err := notABranch(ctx, p.gh, job); why != "" || err != nil {
		if err != nil {
			return nil, err
		}
		return p.note(ctx, StatusSkipped, ActionSkipped, why)
	}
	branch := FixBranch(p.cfg.BranchPrefix, Key(target, b))
	found, err := lookup(ctx, p.gh, job.Owner, job.Repo, branch)
	if err != nil {
		return nil, err
	}
	open, st := found.open, found.state
	if no := found.refusal(b.BaseSHA, p.cfg.MaxAttempts, branch); no != "" {
		return p.note(ctx, StatusSkipped, ActionSkipped, no)
	}
	if draft && open != nil {
		// Never push an unvalidated change over an open proposal: say so on it.
		p.job = withPR(p.job, open.Number, open.HTMLURL)
		p.tracker = &Tracker{GH: p.gh, Owner: job.Owner, Repo: job.Repo, PR: open.Number}
		return p.noFix(ctx, ActionNoFixFound, why, false)
	}
	// The follow-up cap (ci.go) counts per failure across attempts; an
	// attempt whose PR could not be opened counts through its commit.
	st = state{Attempts: st.Attempts + 1, FailingSHA: b.BaseSHA, CI: ciState{FailSig: st.CI.FailSig, FailSeen: st.CI.FailSeen}}

	exists := open != nil || found.head != nil
	headline := ""
	if draft {
		headline = "attempted fix, NOT validated (draft)"
	}
	body := report.Body(b, report.Options{Headline: headline})
	if draft {
		body = "> [!WARNING]\n> No validated fix: " + why + ". This draft shows what was tried.\n\n" + body
	}
	// The report goes beside the commit (a blob its message names), so a
	// later run can open the PR for this commit with the same report if
	// this one cannot: nothing paid for is lost.
	reportBlob := ""
	if !draft {
		if reportBlob, err = p.gh.CreateBlob(ctx, job.Owner, job.Repo, []byte(cutUTF8(body, maxReportBlobBytes))); err != nil {
			return p.failed(nil, fmt.Errorf("publish: %w", err))
		}
	}
	// The fix branch is mini-agent's own: each attempt replaces it with one
	// commit on the failing commit (force), never a contributor's branch.
	// A branch that appears between the look-up and the create (a create
	// whose answer was lost, a concurrent run) is taken over only if its
	// head is mini-agent's commit for this failure.
	commit, err := p.gh.CommitFiles(ctx, job.Owner, job.Repo, ghapi.CommitRequest{
		BaseSHA: b.BaseSHA, Branch: branch, Message: p.commitMessage(draft, st.Attempts, reportBlob), Changes: changes(b), ExpectedTree: b.TreeSHA,
		CreateBranch: !exists, Force: exists, AdoptMarker: p.trailer(),
	})
	if errors.Is(err, ghapi.ErrBranchExists) {
		return nil, fmt.Errorf("publish: %s exists and is not mini-agent's branch for this failure (its head commit has no %q): "+
			"not overwriting it; delete or rename it for mini-agent to propose a fix: %w", branch, p.trailer(), err)
	}
	if err != nil {
		return p.failed(nil, fmt.Errorf("publish: %w", err))
	}
	ci := p.initialCI(branch)
	st.CI.Status, st.CI.Workflow = ci.Status, p.ciWorkflow
	body += "\n" + ci.render() + "\n\n" + st.marker() + "\n"
	title := p.title(draft)
	res := &Result{Status: StatusOf(b.Status, !draft), Branch: branch, Commit: commit.SHA, Attempt: st.Attempts, CIWorkflow: p.ciWorkflow}
	if open != nil {
		pr, err := p.gh.UpdatePR(ctx, job.Owner, job.Repo, open.Number, ghapi.PRUpdate{Title: &title, Body: &body})
		if err != nil {
			return p.failed(res, fmt.Errorf("publish: %w", err))
		}
		res.Action, res.PRNumber, res.PRURL = ActionPRUpdated, pr.Number, pr.HTMLURL
		res.Reason = fmt.Sprintf("updated #%d with a new commit (attempt %d)", pr.Number, st.Attempts)
	} else {
		pr, err := p.gh.CreatePR(ctx, job.Owner, job.Repo, ghapi.NewPR{Title: title, Body: body, Head: branch, Base: target, Draft: draft || p.cfg.Draft})
		if errors.Is(err, ghapi.ErrUnprocessable) {
			// A retried create whose first answer was lost, or a concurrent
			// run: the PR for this branch may exist now. Use it, never a second.
			pr, err = p.existingPR(ctx, branch, title, body, err)
		}
		if err != nil {
			return p.failed(res, fmt.Errorf("publish: %w", err))
		}
		res.Action, res.PRNumber, res.PRURL = ActionPRCreated, pr.Number, pr.HTMLURL
		res.Reason = fmt.Sprintf("opened #%d from %s into %s", pr.Number, branch, target)
		if draft {
			res.Action = ActionDraftPR
		}
		if err := p.requestReviewers(ctx, pr.Number); err != nil {
			p.logf("publish: warning: %v", err) // a bad reviewer must not lose the PR
		}
	}
	if draft {
		res.Reason = "no validated fix (" + why + "); " + res.Reason + " as a draft"
	}
	if job.PR != 0 && job.PR != res.PRNumber {
		msg := fmt.Sprintf("**Proposed a fix in %s** (%s).\n", res.PRURL, res.Reason)
		if c, err := p.tracker.Post(ctx, p.header(false)+msg); err != nil {
			p.logf("publish: warning: %v", err)
		} else {
			res.CommentURL = c.HTMLURL
		}
	}
	return res, nil
}

// initialCI is the CI section a new commit starts with: pending when the
// caller will dispatch the failing workflow (ProveCI), else why it cannot.
func (p *publisher) initialCI(branch string) ciView {
	if p.ciWorkflow != "" {
		return ciView{Status: CIPending, Branch: branch}
	}
	why, how := unknownWorkflow()
	return ciView{Status: CIOff, Branch: branch, Why: why, HowTo: how}
}

// existingPR returns the open PR of branch, updated with title and body,
// after a create was refused with createErr; createErr when there is none.
func (p *publisher) existingPR(ctx context.Context, branch, title, body string, createErr error) (*ghapi.PR, error) {
	found, err := lookup(ctx, p.gh, p.job.Owner, p.job.Repo, branch)
	if err != nil || found.open == nil {
		return nil, createErr
	}
	return p.gh.UpdatePR(ctx, p.job.Owner, p.job.Repo, found.open.Number, ghapi.PRUpdate{Title: &title, Body: &body})
}

// proposals is what exists for a fix branch.
type proposals struct {
	open, latest *ghapi.PR
	state        state
	// head is the branch's head commit when the branch exists and has no
	// open PR, and trailers what its message says.
	head     *ghapi.CommitInfo
	trailers commitTrailers
}

func lookup(ctx context.Context, gh GitHub, owner, repo, branch string) (*proposals, error) {
	prs, err := gh.PRsForBranch(ctx, owner, repo, owner, branch, "all")
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	p := &proposals{}
	for _, pr := range prs { // newest first
		if p.latest == nil {
			p.latest = pr
		}
		if p.open == nil && pr.State == "open" {
			p.open = pr
		}
	}
	switch {
	case p.open != nil:
		p.state = parseState(p.open.Body)
		return p, nil
	case p.latest != nil && !p.latest.Merged:
		p.state = parseState(p.latest.Body)
	case p.latest != nil:
		// A merged fix ends the story: a recurrence starts counting again.
		return p, nil
	}
	// No open PR: the branch may hold a commit whose PR could not be
	// opened; its trailers count that attempt (and may hold a validated fix).
	head, err := gh.BranchHead(ctx, owner, repo, branch)
	switch {
	case errors.Is(err, ghapi.ErrNotFound):
		return p, nil
	case err != nil:
		return nil, fmt.Errorf("publish: %w", err)
	}
	if p.head, err = gh.Commit(ctx, owner, repo, head); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	p.trailers = parseTrailers(p.head.Message)
	if p.trailers.Attempt > p.state.Attempts {
		p.state.Attempts = p.trailers.Attempt
	}
	return p, nil
}

// refusal says why no new attempt may be made, or "".
func (p *proposals) refusal(failingSHA string, maxAttempts int, branch string) string {
	switch {
	case p.open == nil && p.latest != nil && !p.latest.Merged && p.state.FailingSHA == failingSHA:
		return fmt.Sprintf("#%d proposed a fix for this failure at %s and was closed without merging: not proposing it again",
			p.latest.Number, short(failingSHA))
	case p.state.Attempts >= maxAttempts:
		return fmt.Sprintf("this failure was already attempted %d times (max-attempts %d) on %s", p.state.Attempts, maxAttempts, branch)
	}
	return ""
}

func withPR(j *route.Job, pr int, url string) *route.Job {
	c := *j
	c.PR, c.PRURL = pr, url
	return &c
}

// push commits the change on the PR's own branch, only if its head is still
// the commit the fix was made on.
func (p *publisher) push(ctx context.Context) (*Result, error) {
	job, b := p.job, p.b
	if job.PR == 0 || job.Fork || job.Branch == "" {
		return nil, errors.New("publish: the push policy needs a same-repository pull request")
	}
	commit, err := p.gh.CommitFiles(ctx, job.Owner, job.Repo, ghapi.CommitRequest{
		BaseSHA: b.BaseSHA, Branch: job.Branch, ExpectedHead: b.BaseSHA, Message: p.commitMessage(false, 0, ""), Changes: changes(b), ExpectedTree: b.TreeSHA,
	})
	if errors.Is(err, ghapi.ErrHeadMoved) {
		why := fmt.Sprintf("%s moved since the fix was made at %s: not committing over newer work; run `/mini-agent fix` again", job.Branch, short(b.BaseSHA))
		body := p.header(true) + "**" + sentence(why) + "** The validated fix for the older head is below.\n\n"
		res := &Result{Status: StatusNotFixed, Action: ActionHeadMoved, Reason: why, PRNumber: job.PR, PRURL: job.PRURL}
		c, cerr := p.tracker.Post(ctx, withDiff(body+report.Body(b, report.Options{}), b.Diff, "The fix (validated on the older head)"))
		if cerr != nil {
			return nil, cerr
		}
		res.CommentURL = c.HTMLURL
		return res, nil
	}
	if err != nil {
		return p.failed(nil, fmt.Errorf("publish: %w", err))
	}
	res := &Result{Status: StatusOf(b.Status, true), Action: ActionPushed, Branch: job.Branch, Commit: commit.SHA, PRNumber: job.PR, PRURL: job.PRURL,
		Reason: fmt.Sprintf("committed %s on %s (#%d)", short(commit.SHA), job.Branch, job.PR)}
	// The commit is on the branch: a comment that cannot be written must not
	// turn that into a failure (as in propose, it is a warning).
	c, err := p.tracker.Post(ctx, p.header(true)+fmt.Sprintf("**Pushed a validated fix: %s.**\n\n", commit.SHA)+report.Body(b, report.Options{CINote: CINote}))
	if err != nil {
		p.logf("publish: warning: pushed %s but could not write the tracking comment: %v", short(commit.SHA), err)
		return res, nil
	}
	res.CommentURL = c.HTMLURL
	return res, nil
}

func (p *publisher) requestReviewers(ctx context.Context, pr int) error {
	var users, teams []string
	for _, r := range p.cfg.Reviewers {
		if _, team, ok := strings.Cut(r, "/"); ok {
			teams = append(teams, team)
		} else {
			users = append(users, r)
		}
	}
	return p.gh.RequestReviewers(ctx, p.job.Owner, p.job.Repo, pr, users, teams)
}

// title names the failing tests (log text: sanitized and bounded).
func (p *publisher) title(draft bool) string {
	what := "failing tests"
	if ids := p.b.FailingTests; len(ids) > 0 {
		what = ids[0]
		if len(ids) > 1 {
			what += fmt.Sprintf(" and %d more", len(ids)-1)
		}
	}
	t := fmt.Sprintf("mini-agent: fix %s on %s", what, p.job.Branch)
	if draft {
		t = "[not validated] " + t
	}
	return cutUTF8(plain(t), maxTitleBytes)
}

// commitMessage ends with the trailer the router's loop guard looks for,
// then (for a proposal's attempt) the attempt number, the validated tree
// (not for a draft), the report blob and the run: what a later run needs to
// publish this commit without a new model run.
func (p *publisher) commitMessage(draft bool, attempt int, reportBlob string) string {
	var w strings.Builder
	w.WriteString(p.title(draft))
	w.WriteString("\n\n")
	if s := strings.TrimSpace(report.Untrusted(p.b.Report.Summary)); s != "" {
		w.WriteString(cutUTF8(s, maxSummaryBytes))
		w.WriteString("\n\n")
	}
	if draft {
		w.WriteString("NOT validated by the harness.\n\n")
	} else {
		w.WriteString("Validated by the harness:")
		for _, c := range p.b.Validation {
			fmt.Fprintf(&w, " %s exit %d;", c.Name, c.ExitCode)
		}
		w.WriteString("\n\n")
	}
	w.WriteString(p.trailer() + "\n")
	if attempt > 0 {
		fmt.Fprintf(&w, "%s %d\n", trailerAttempt, attempt)
		if !draft && ghapi.IsSHA(p.b.TreeSHA) {
			fmt.Fprintf(&w, "%s %s\n", trailerValidated, p.b.TreeSHA)
		}
		if reportBlob != "" {
			fmt.Fprintf(&w, "%s %s\n", trailerReport, reportBlob)
		}
		if u := p.b.Extra.RunURL; strings.HasPrefix(u, "https://") && !strings.ContainsAny(u, " \n") {
			fmt.Fprintf(&w, "%s %s\n", trailerRun, u)
		}
	}
	return w.String()
}

// maxReportBlobBytes bounds the report stored beside a commit (GitHub's PR
// body limit is 65,536 characters; the CI section and marker are added).
const maxReportBlobBytes = 60_000

// failed is a publishing failure: res (the branch and commit, when the
// commit landed) with status failed and err; Publish explains the refusal.
func (p *publisher) failed(res *Result, err error) (*Result, error) {
	if res == nil {
		res = &Result{}
	}
	res.Status, res.Action = StatusFailed, ActionFailed
	return res, err
}

// trailer is the commit message's last line: it names the failure, so the
// router's loop guard and a later run recognize mini-agent's commits.
func (p *publisher) trailer() string {
	sig := p.b.Signature
	if sig == "" {
		sig = Key(p.job.Branch, p.b)
	}
	return route.CommitTrailer + " " + sig
}

// plain keeps one line of printable text.
func plain(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
}
