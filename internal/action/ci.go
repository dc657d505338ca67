package action

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

// ciWorkflow is the failing workflow to dispatch on a fix branch: the
// failing run's (workflow_run, dispatch of a run), or this run's own for an
// in-job step (GITHUB_WORKFLOW_REF); "" when not known (a comment command).
func (c *console) ciWorkflow(job *route.Job) string {
	if job.WorkflowID > 0 {
		return strconv.FormatInt(job.WorkflowID, 10)
	}
	if job.CommentID != 0 || job.Source == route.SourceRun {
		return ""
	}
	// owner/repo/.github/workflows/ci.yml@refs/heads/main
	ref, _, _ := strings.Cut(c.env.Getenv("GITHUB_WORKFLOW_REF"), "@")
	prefix := job.Owner + "/" + job.Repo + "/.github/workflows/"
	if len(ref) <= len(prefix) || !strings.EqualFold(ref[:len(prefix)], prefix) {
		return ""
	}
	file := ref[len(prefix):]
	if strings.ContainsAny(file, "/\\") || !(strings.HasSuffix(file, ".yml") || strings.HasSuffix(file, ".yaml")) {
		return ""
	}
	return file
}

// proveCI runs the failing workflow on a proposal's branch (publish.ProveCI)
// once the PR is written. What it cannot do is said in the PR body; an
// API failure here is a warning, never the job's failure: the PR stands.
func (c *console) proveCI(ctx context.Context, p *prepared, res *publish.Result, workflow string) {
	if res != nil && res.CIWorkflow != "" {
		workflow = res.CIWorkflow // an iteration keeps the proposal's
	}
	if res == nil || workflow == "" || res.PRNumber == 0 || res.Branch == "" {
		return
	}
	switch res.Action {
	case publish.ActionPRCreated, publish.ActionPRUpdated, publish.ActionDraftPR:
	default:
		return
	}
	ci, err := publish.ProveCI(ctx, p.gh, publish.CIRequest{Owner: p.job.Owner, Repo: p.job.Repo, PR: res.PRNumber,
		Branch: res.Branch, HeadSHA: res.Commit, Workflow: workflow, Wait: time.Duration(p.in.CIWaitMinutes) * time.Minute,
		Poll: c.env.CIPoll, Log: c.log()})
	if err != nil {
		c.gha.Warningf("CI on %s: %v", res.Branch, err)
		return
	}
	switch ci.Status {
	case publish.CIOff:
		c.gha.Noticef("CI was not dispatched on %s: %s", res.Branch, ci.Why)
	case publish.CIFailed:
		c.gha.Warningf("CI failed on %s: %s", res.Branch, ci.RunURL)
		c.reportWaitedFailure(ctx, p, res, ci)
	}
}
