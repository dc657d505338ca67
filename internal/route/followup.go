package route

import (
	"context"
	"fmt"
	"strings"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/config"
)

// followUp resolves a run completed on mini-agent's branch: the open PR of
// the branch (none: skip), the off label (skip), and for a failure the
// failed jobs whose logs give the PR its new failure context. The job never
// runs the agent (FollowUp, read-only).
func (t *Trigger) followUp(ctx context.Context, gh GitHub, cfg *config.Config, job *Job) (Decision, error) {
	pr, err := gh.FindOpenPR(ctx, t.owner, t.repo, t.owner, t.branch)
	if err != nil {
		return Decision{}, fmt.Errorf("route: %w", err)
	}
	if pr == nil {
		return skip(2, "%s: no open pull request for it, nothing to update", t.describe), nil
	}
	job.PR, job.PRURL, job.Labels, job.PRHead = pr.Number, pr.HTMLURL, pr.Labels, pr.HeadSHA
	for _, l := range pr.Labels {
		if strings.EqualFold(l, cfg.Labels.Off) {
			return skip(2, "label %s on #%d: mini-agent is off for this pull request", cfg.Labels.Off, pr.Number), nil
		}
	}
	job.FollowUp, job.Conclusion, job.Source = true, t.conclusion, SourceRun
	job.Mode, job.Write = agent.ModeExplain, WriteNone
	job.Reason = fmt.Sprintf("CI completed on mini-agent's branch: #%d's CI section is updated; no fix is started", pr.Number)
	if t.conclusion == "failure" || t.conclusion == "timed_out" {
		if job.FailedJobs, err = gh.FailedJobs(ctx, t.owner, t.repo, t.runID); err != nil {
			return Decision{}, fmt.Errorf("route: %w", err)
		}
	}
	return Decision{Job: job, Reason: job.Reason, Stage: 2}, nil
}
