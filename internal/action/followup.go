package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/redact"
	"github.com/org/mini-agent/internal/route"
)

// maxContextRender bounds the failure context rendered for a PR's CI section.
const maxContextRender = 4000

// followUp handles a CI run completed on mini-agent's branch: the PR's CI
// section says its result; a failure adds its failure context (from the
// failed jobs' logs, the fixer's log path) and turns the PR draft. No agent
// runs and nothing is committed.
func (c *console) followUp(ctx context.Context, p *prepared) Result {
	job := p.job
	sig, text := c.failureOf(ctx, p, job)
	what, err := publish.FollowUp(ctx, p.gh, publish.FollowUpRequest{Owner: job.Owner, Repo: job.Repo, PR: job.PR, Branch: job.Branch,
		RunID: job.RunID, RunURL: job.RunURL, Conclusion: job.Conclusion, HeadSHA: job.HeadSHA, Signature: sig, Context: text,
		MaxAttempts: p.cfg.Config.MaxAttempts, Log: c.log()})
	if err != nil && what == "" {
		return c.fail(ctx, nil, err)
	}
	if err != nil {
		c.gha.Warningf("%v", err)
	}
	c.gha.Noticef("mini-agent follow-up on #%d: %s (%s)", job.PR, what, job.Trigger)
	return Result{Status: publish.StatusSkipped, Code: exitcode.OK, Outputs: map[string]string{"pr-url": job.PRURL, "branch": job.Branch},
		Summary: fmt.Sprintf("## mini-agent: CI follow-up\n\n%s: #%d %s. No fix was started.\n", job.Trigger, job.PR, what)}
}

// failureOf extracts the failure of job's failed jobs (signature and
// rendering, redacted); empty when there is none or it cannot be read.
func (c *console) failureOf(ctx context.Context, p *prepared, job *route.Job) (string, string) {
	if len(job.FailedJobs) == 0 {
		return "", ""
	}
	tmp, err := c.env.tempDir()
	if err != nil {
		c.gha.Warningf("%v", err)
		return "", ""
	}
	dir, err := os.MkdirTemp(tmp, "ci-")
	if err != nil {
		c.gha.Warningf("%v", err)
		return "", ""
	}
	defer os.RemoveAll(dir)
	q := *p
	q.job = job
	logs, err := c.fetchLogs(ctx, &q, dir)
	if err != nil || len(logs) == 0 {
		if err != nil {
			c.gha.Warningf("the failed run's logs: %v", err)
		}
		return "", ""
	}
	fc, err := pipeline.ExtractFailures(logs, filepath.Clean(c.env.workspace()))
	if err != nil || fc.Empty() {
		return "", ""
	}
	red := redact.FromEnv(c.env.environ(), secretInputEnv)
	return fc.Signature(), red(fc.Render(maxContextRender))
}

// reportWaitedFailure reports a dispatched run that failed while the job
// waited for it, as its completion event would.
func (c *console) reportWaitedFailure(ctx context.Context, p *prepared, res *publish.Result, ci *publish.CIResult) {
	jobs, err := p.gh.FailedJobs(ctx, p.job.Owner, p.job.Repo, ci.RunID)
	if err != nil {
		c.gha.Warningf("the failed CI run's jobs: %v", err)
	}
	j := *p.job
	j.FailedJobs, j.RunID, j.RunURL, j.Branch, j.PR = jobs, ci.RunID, ci.RunURL, res.Branch, res.PRNumber
	sig, text := c.failureOf(ctx, p, &j)
	what, err := publish.FollowUp(ctx, p.gh, publish.FollowUpRequest{Owner: j.Owner, Repo: j.Repo, PR: res.PRNumber, Branch: res.Branch,
		RunID: ci.RunID, RunURL: ci.RunURL, Conclusion: "failure", HeadSHA: res.Commit, Signature: sig, Context: text,
		MaxAttempts: p.cfg.Config.MaxAttempts, Log: c.log()})
	if err != nil {
		c.gha.Warningf("%v", err)
	}
	fmt.Fprintf(c.log(), "ci: failed run %d reported on #%d: %s\n", ci.RunID, res.PRNumber, what)
}

// refreshCI updates the CI section of mini-agent's open PRs whose
// dispatched run finished since (bounded); a failure is a warning.
func (c *console) refreshCI(ctx context.Context, p *prepared) {
	if p.gh == nil || p.job == nil || p.cfg == nil || p.cfg.Config == nil {
		return
	}
	if _, err := publish.RefreshCI(ctx, p.gh, p.job.Owner, p.job.Repo, p.cfg.Config.BranchPrefix, c.log()); err != nil {
		c.gha.Warningf("refreshing the CI of mini-agent's open PRs: %v", err)
	}
}

// iterateFromCI makes an iteration on mini-agent's PR start from the logs
// of the CI run that failed on its branch, when its body says one did:
// the harness then works on what CI saw instead of rerunning the tests
// (which pass locally when only CI fails). Without one, the job is unchanged.
func (c *console) iterateFromCI(ctx context.Context, p *prepared) {
	pr, err := p.gh.PullRequest(ctx, p.job.Owner, p.job.Repo, p.job.PR)
	if err != nil {
		c.gha.Warningf("reading #%d: %v", p.job.PR, err)
		return
	}
	id := publish.FailedCIRun(pr.Body)
	if id == 0 {
		return
	}
	jobs, err := p.gh.FailedJobs(ctx, p.job.Owner, p.job.Repo, id)
	if err != nil || len(jobs) == 0 {
		if err != nil {
			c.gha.Warningf("the failed CI run %d of #%d: %v", id, p.job.PR, err)
		}
		return
	}
	p.job.Source, p.job.FailedJobs, p.job.RunID = route.SourceRun, jobs, id
	fmt.Fprintf(c.log(), "iteration on #%d starts from CI run %d's failure\n", p.job.PR, id)
}
