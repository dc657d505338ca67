package ghapi

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strconv"

	"github.com/google/go-github/v62/github"
)

const permActionsRead = "actions: read"

// Run is the part of a workflow run mini-agent decides on.
type Run struct {
	ID         int64
	Name       string // workflow name
	WorkflowID int64
	Event      string
	Status     string
	Conclusion string
	RunAttempt int
	HeadSHA    string
	HeadBranch string
	// HeadRepo and Repo are "owner/name"; they differ for runs on forks.
	HeadRepo string
	Repo     string
	HTMLURL  string
	// PullRequests are the numbers GitHub links to the run (empty for forks).
	PullRequests []int
}

// Job is a failed job of a workflow run.
type Job struct {
	ID          int64
	RunID       int64
	RunAttempt  int64
	Name        string
	Conclusion  string
	HTMLURL     string
	CheckRunID  int64
	CheckRunURL string
	// FailedSteps are the names of the steps that failed or timed out.
	FailedSteps []string
}

// WorkflowRun fetches run id.
func (c *Client) WorkflowRun(ctx context.Context, owner, repo string, id int64) (*Run, error) {
	r, resp, err := c.gh.Actions.GetWorkflowRunByID(ctx, owner, repo, id)
	if err != nil {
		return nil, c.fail(fmt.Sprintf("get workflow run %d", id), permActionsRead, resp, err)
	}
	run := runFrom(r)
	return &run, nil
}

// runFrom is the run as go-github decodes it.
func runFrom(r *github.WorkflowRun) Run {
	run := Run{
		ID:         r.GetID(),
		Name:       r.GetName(),
		WorkflowID: r.GetWorkflowID(),
		Event:      r.GetEvent(),
		Status:     r.GetStatus(),
		Conclusion: r.GetConclusion(),
		RunAttempt: r.GetRunAttempt(),
		HeadSHA:    r.GetHeadSHA(),
		HeadBranch: r.GetHeadBranch(),
		HeadRepo:   r.GetHeadRepository().GetFullName(),
		Repo:       r.GetRepository().GetFullName(),
		HTMLURL:    r.GetHTMLURL(),
	}
	for _, pr := range r.PullRequests {
		run.PullRequests = append(run.PullRequests, pr.GetNumber())
	}
	return run
}

// FailedJobs lists the jobs of the run's latest attempt that failed or timed
// out, with their failed steps and check-run IDs (for annotations).
func (c *Client) FailedJobs(ctx context.Context, owner, repo string, runID int64) ([]Job, error) {
	jobs, resp, err := paginate(func(o github.ListOptions) ([]*github.WorkflowJob, *github.Response, error) {
		js, resp, err := c.gh.Actions.ListWorkflowJobs(ctx, owner, repo, runID,
			&github.ListWorkflowJobsOptions{Filter: "latest", ListOptions: o})
		if js == nil {
			return nil, resp, err
		}
		return js.Jobs, resp, err
	})
	if err != nil {
		return nil, c.fail(fmt.Sprintf("list jobs of run %d", runID), permActionsRead, resp, err)
	}
	var out []Job
	for _, j := range jobs {
		if !failed(j.GetConclusion()) {
			continue
		}
		job := Job{
			ID:          j.GetID(),
			RunID:       j.GetRunID(),
			RunAttempt:  j.GetRunAttempt(),
			Name:        j.GetName(),
			Conclusion:  j.GetConclusion(),
			HTMLURL:     j.GetHTMLURL(),
			CheckRunURL: j.GetCheckRunURL(),
			CheckRunID:  lastPathID(j.GetCheckRunURL()),
		}
		for _, s := range j.Steps {
			if failed(s.GetConclusion()) {
				job.FailedSteps = append(job.FailedSteps, s.GetName())
			}
		}
		out = append(out, job)
	}
	return out, nil
}

func failed(conclusion string) bool {
	return conclusion == "failure" || conclusion == "timed_out"
}

// lastPathID parses the numeric last segment of an API URL such as
// https://api.github.com/repos/o/r/check-runs/123; 0 when absent.
func lastPathID(raw string) int64 {
	u, err := url.Parse(raw)
	if err != nil {
		return 0
	}
	id, err := strconv.ParseInt(path.Base(u.Path), 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}
