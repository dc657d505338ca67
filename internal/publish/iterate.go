package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/report"
)

// Changelog markers of the attempts list in the body of mini-agent's PR.
const (
	changelogBegin = "<!-- mini-agent:changelog-begin -->"
	changelogEnd   = "<!-- mini-agent:changelog-end -->"
	// maxChangelogEntries bounds the list (the oldest entries go).
	maxChangelogEntries = 20
)

// iterate commits a validated fix on mini-agent's own PR branch (a
// `/mini-agent fix` on the PR) only if its head is still the commit the fix
// was made on, then rewrites the PR body: the new report (trace,
// validation), the changelog of attempts, a fresh CI section and the state
// marker (attempts + 1). A PR without the state marker is not mini-agent's:
// nothing is written.
func (p *publisher) iterate(ctx context.Context) (*Result, error) {
	job, b := p.job, p.b
	pr, err := p.gh.PullRequest(ctx, job.Owner, job.Repo, job.PR)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	st := parseState(pr.Body)
	switch {
	case st.Attempts == 0 || pr.HeadRef != job.Branch:
		err := fmt.Errorf("%w: #%d has no mini-agent state marker for %s: not mini-agent's pull request", ErrRefused, job.PR, job.Branch)
		return &Result{Status: StatusFailed, Action: ActionRefused, Reason: err.Error()}, err
	case st.Attempts >= p.cfg.MaxAttempts:
		return p.note(ctx, StatusSkipped, ActionSkipped, fmt.Sprintf("#%d was already attempted %d times (max-attempts %d)", job.PR, st.Attempts, p.cfg.MaxAttempts))
	}
	commit, err := p.gh.CommitFiles(ctx, job.Owner, job.Repo, ghapi.CommitRequest{
		BaseSHA: b.BaseSHA, Branch: job.Branch, ExpectedHead: b.BaseSHA, Message: p.commitMessage(false, 0, ""), Changes: changes(b), ExpectedTree: b.TreeSHA,
	})
	if errors.Is(err, ghapi.ErrHeadMoved) {
		return p.note(ctx, StatusNotFixed, ActionHeadMoved, fmt.Sprintf("%s moved since the fix was made at %s: not committing over newer work; "+
			"run `/mini-agent fix` again", job.Branch, short(b.BaseSHA)))
	}
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	workflow := p.ciWorkflow
	if workflow == "" {
		workflow = st.CI.Workflow // the failing workflow the proposal dispatched
	}
	p.ciWorkflow = workflow
	st = state{Attempts: st.Attempts + 1, FailingSHA: st.FailingSHA, CI: ciState{FailSig: st.CI.FailSig, FailSeen: st.CI.FailSeen}}
	ci := p.initialCI(job.Branch)
	st.CI.Status, st.CI.Workflow = ci.Status, workflow
	entry := fmt.Sprintf("attempt %d: %s, commit %s, validated", st.Attempts, plain(report.Untrusted(p.job.Trigger)), short(commit.SHA))
	body := report.Body(b, report.Options{}) + "\n" + changelog(pr.Body, entry) + "\n\n" + ci.render() + "\n\n" + st.marker() + "\n"
	if _, err := p.gh.UpdatePR(ctx, job.Owner, job.Repo, job.PR, ghapi.PRUpdate{Body: &body}); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	res := &Result{Status: StatusOf(b.Status, true), Action: ActionPRUpdated, Branch: job.Branch, Commit: commit.SHA, PRNumber: job.PR,
		PRURL: job.PRURL, Attempt: st.Attempts, CIWorkflow: workflow,
		Reason: fmt.Sprintf("committed %s on %s and updated #%d (attempt %d)", short(commit.SHA), job.Branch, job.PR, st.Attempts)}
	if c, err := p.tracker.Post(ctx, p.header(false)+fmt.Sprintf("**Pushed a validated fix on this PR: %s** (attempt %d). The PR body has the new report.\n", commit.SHA, st.Attempts)); err != nil {
		p.logf("publish: warning: %v", err)
	} else {
		res.CommentURL = c.HTMLURL
	}
	return res, nil
}

// changelog is the attempts section of a PR body with entry added. The
// first attempt (the proposal itself) is listed when the body had none.
func changelog(body, entry string) string {
	var entries []string
	if i := strings.Index(body, changelogBegin); i >= 0 {
		if j := strings.Index(body[i:], changelogEnd); j >= 0 {
			for _, l := range strings.Split(body[i+len(changelogBegin):i+j], "\n") {
				if e, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
					entries = append(entries, e)
				}
			}
		}
	}
	if len(entries) == 0 {
		entries = append(entries, "attempt 1: the proposal")
	}
	entries = append(entries, entry)
	if len(entries) > maxChangelogEntries {
		entries = entries[len(entries)-maxChangelogEntries:]
	}
	var w strings.Builder
	w.WriteString(changelogBegin + "\n### Attempts\n\n")
	for _, e := range entries {
		w.WriteString("- " + e + "\n")
	}
	w.WriteString(changelogEnd)
	return w.String()
}
