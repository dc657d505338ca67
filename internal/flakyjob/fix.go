package flakyjob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyfix"
	"github.com/org/mini-agent/internal/flakyscan"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

// signature names a test across runs (its workflow, job, package and
// name): it keys the fix and quarantine branches.
func signature(t flakyscan.TestRef) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%s\x00%s", t.WorkflowID, t.Job, t.Package, t.Test)))
	return "flaky-" + hex.EncodeToString(h[:8])
}

// stub is the bundle fields that key a branch for test t (publish.Key).
func (r *runner) stub(t flakyscan.TestRef, kind string) *bundle.Bundle {
	return &bundle.Bundle{Signature: kind + signature(t), BaseSHA: r.head,
		Extra: bundle.ExtraContext{Workflow: t.Workflow, Job: t.Job}}
}

// routeJob is the publishing job of the flaky mode: a proposal against the
// default branch at the checked-out commit.
func (r *runner) routeJob() *route.Job {
	return &route.Job{Mode: agent.ModeFix, Write: route.WritePropose, Owner: r.job.Owner, Repo: r.job.Repo,
		DefaultBranch: r.job.DefaultBranch, Branch: r.job.DefaultBranch, HeadSHA: r.head, HeadRepo: r.job.Owner + "/" + r.job.Repo,
		Trigger: r.job.Trigger, Reason: "scheduled flaky-test repair: a proven fix is proposed as a draft pull request against " + r.job.DefaultBranch}
}

// existing looks for an earlier run's PR on branch. It returns the open one
// (found), or a note when a closed, unmerged one means the maintainer
// declined it.
func (r *runner) existing(ctx context.Context, branch, what string) (*PR, string, error) {
	prs, err := r.gh.PRsForBranch(ctx, r.job.Owner, r.job.Repo, r.job.Owner, branch, "all")
	if err != nil {
		return nil, "", fmt.Errorf("flakyjob: %w", err)
	}
	for _, pr := range prs {
		if pr.State == "open" {
			return &PR{Number: pr.Number, URL: pr.HTMLURL, Existing: true}, "", nil
		}
	}
	for _, pr := range prs {
		if !pr.Merged {
			return nil, fmt.Sprintf("#%d proposed %s and was closed without merging: not proposing it again", pr.Number, what), nil
		}
	}
	return nil, "", nil
}

// pendingFix reports whether an earlier run's fix PR for one of the
// candidate's tests is still open: then it is not examined or fixed again
// (the PR is the next step, and the issue keeps collecting CI evidence).
func (r *runner) pendingFix(ctx context.Context, c *Candidate) (bool, error) {
	for _, t := range c.Candidate.Tests {
		branch := publish.FixBranch(r.job.Config.BranchPrefix, publish.Key(r.job.DefaultBranch, r.stub(t, "")))
		pr, _, err := r.existing(ctx, branch, "")
		if err != nil {
			return false, err
		}
		if pr != nil {
			c.PR = pr
			c.Notes = append(c.Notes, fmt.Sprintf("a fix for %s is proposed in #%d: not examined or fixed again", code(t.Test), pr.Number))
			return true, nil
		}
	}
	return false, nil
}

// fix runs the fix job on the candidate's flakiest test and publishes a
// proven fix as a draft PR. opened reports a new PR.
func (r *runner) fix(ctx context.Context, c *Candidate, target *TestResult) (opened bool, err error) {
	if c.Issue == 0 {
		c.Notes = append(c.Notes, "no fix attempted: the candidate has no issue yet (new-issue budget); a later run will try")
		return false, nil
	}
	cfg := r.job.Config
	branch := publish.FixBranch(cfg.BranchPrefix, publish.Key(r.job.DefaultBranch, r.stub(target.Ref, "")))
	pr, declined, err := r.existing(ctx, branch, "a fix for this test")
	if err != nil {
		return false, err
	}
	if pr != nil {
		c.PR = pr
		c.Notes = append(c.Notes, fmt.Sprintf("a fix is already proposed in #%d: not fixing again", pr.Number))
		return false, nil
	}
	if declined != "" {
		c.Notes = append(c.Notes, declined)
		return false, nil
	}
	ev := c.local.res.Test(target.LocalID)
	logPath := c.local.res.FailureLogs[target.LocalID]
	if ev == nil || logPath == "" {
		c.Notes = append(c.Notes, "no fix attempted: no failing run's output was kept for "+target.LocalID)
		return false, nil
	}
	job := r.job.Fix
	dir := filepath.Join(r.job.OutDir, signature(target.Ref))
	job.TracePath, job.BundlePath, job.SummaryPath = filepath.Join(dir, "trace.jsonl"), filepath.Join(dir, "bundle.json"), ""
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("flakyjob: %w", err)
	}
	r.logf("flaky: fixing %s (%d of %d local runs failed)", target.LocalID, ev.Failures, ev.Runs)
	fr, err := flakyfix.Fix(ctx, flakyfix.FixConfig{Detect: c.local.cfg, Target: ev, FailureLog: logPath, Job: job, Deps: r.job.Deps})
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		c.Fix = flaky.NewFixReport(flaky.Result{Status: flaky.FixUnproven, Reason: "the fix could not be judged: " + err.Error()}, nil)
	} else {
		c.Fix = fr.Report
	}
	c.FixTest = target.LocalID
	defer func() {
		if rerr := r.reset(ctx); err == nil {
			err = rerr
		}
	}()
	if c.Fix.Status != flaky.FixProven {
		return false, r.noteOnIssue(ctx, c, target, string(c.Fix.Status), fixNote(c, target))
	}
	b := fr.Outcome.Bundle
	b.Signature = signature(target.Ref)
	b.Branch = r.job.DefaultBranch
	rj := r.routeJob()
	b.Extra = bundle.ExtraContext{RunURL: c.Failures[len(c.Failures)-1].RunURL, Workflow: target.Ref.Workflow, Job: target.Ref.Job,
		Policy: string(rj.Write), Reason: rj.Reason}
	draft := *cfg
	draft.Draft = true
	pres, perr := publish.Publish(ctx, r.gh, publish.Request{Bundle: b, Job: rj, Config: &draft, Log: r.log})
	if perr != nil {
		if pres != nil && pres.Action == publish.ActionRefused {
			c.Notes = append(c.Notes, "the proven fix was not published: "+pres.Reason)
			return false, r.noteOnIssue(ctx, c, target, "refused", fixNote(c, target)+"\n\nThe change was proven but not published: "+inline(pres.Reason)+".")
		}
		return false, fmt.Errorf("flakyjob: %w", perr)
	}
	if pres.PRNumber == 0 {
		c.Notes = append(c.Notes, "the proven fix was not published: "+pres.Reason)
		return false, nil
	}
	c.PR = &PR{Number: pres.PRNumber, URL: pres.PRURL}
	if err := r.trackedBy(ctx, c, target, pres.PRNumber); err != nil {
		return true, err
	}
	msg := fmt.Sprintf("**A fix is proposed in #%d** (draft): it passed the rerun bar (%d clean runs of %d needed after the fix; %d of %d failed before).",
		pres.PRNumber, c.Fix.RunsAfter, c.Fix.Need, target.Report.Failures, target.Report.Runs)
	return pres.Action == publish.ActionPRCreated || pres.Action == publish.ActionDraftPR,
		r.noteOnIssue(ctx, c, target, "proposed", msg)
}

// trackedBy rewrites the PR's title and body: "Tracked by #N", the
// before/after table and the anti-pattern checks before publish's report.
func (r *runner) trackedBy(ctx context.Context, c *Candidate, target *TestResult, number int) error {
	pr, err := r.gh.PullRequest(ctx, r.job.Owner, r.job.Repo, number)
	if err != nil {
		return fmt.Errorf("flakyjob: %w", err)
	}
	if strings.Contains(pr.Body, trackedMarker) {
		return nil
	}
	title := cut(fmt.Sprintf("mini-agent: fix flaky %s (Tracked by #%d)", plainID(target.Ref.Test), c.Issue), 200)
	body := fixSection(c, target) + "\n" + pr.Body
	if len(body) > ghapi.MaxCommentBytes {
		body = body[:ghapi.MaxCommentBytes-200] + "\n\n_…cut to fit GitHub's limit._\n"
	}
	if _, err := r.gh.UpdatePR(ctx, r.job.Owner, r.job.Repo, number, ghapi.PRUpdate{Title: &title, Body: &body}); err != nil {
		return fmt.Errorf("flakyjob: %w", err)
	}
	return nil
}

// regressionNote says on the issue, once per commit, that a test of the
// candidate failed every local run: a regression, never quarantined.
func (r *runner) regressionNote(ctx context.Context, c *Candidate) error {
	for i := range c.Tests {
		t := &c.Tests[i]
		if t.Report == nil || t.Report.Verdict != flaky.VerdictFailing {
			continue
		}
		c.Notes = append(c.Notes, fmt.Sprintf("%s failed all %d local runs: a regression, not a flake (no flaky fix, never quarantined)", t.LocalID, t.Report.Runs))
		msg := fmt.Sprintf("**%s failed every local run (%d of %d) at %s:** this is a regression on the default branch, not a flake. "+
			"mini-agent does not treat it as flaky (no flaky fix, no quarantine); fix it like any failing test (for example `mini-agent fix`).",
			code(t.LocalID), t.Report.Failures, t.Report.Runs, shortSHA(r.head))
		if err := r.noteOnIssue(ctx, c, t, "failing", msg); err != nil {
			return err
		}
	}
	return nil
}

// noteOnIssue comments msg on the candidate's issue unless a comment with
// the same status for this test and commit is there already.
func (r *runner) noteOnIssue(ctx context.Context, c *Candidate, t *TestResult, status, msg string) error {
	if c.Issue == 0 {
		return nil
	}
	marker := fmt.Sprintf("<!-- mini-agent:flaky-note %s status=%s head=%s -->", signature(t.Ref), status, r.head)
	cs, err := r.gh.ListComments(ctx, r.job.Owner, r.job.Repo, c.Issue)
	if err != nil {
		return fmt.Errorf("flakyjob: %w", err)
	}
	for _, cm := range cs {
		if cm.AuthorType == "Bot" && strings.Contains(cm.Body, marker) {
			return nil
		}
	}
	if _, err := r.gh.CreateComment(ctx, r.job.Owner, r.job.Repo, c.Issue, msg+"\n\n"+marker+"\n"); err != nil {
		return fmt.Errorf("flakyjob: %w", err)
	}
	return nil
}
