package ghapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/go-github/v62/github"
)

// MaxFilteredRuns is how many runs GitHub lists for a filtered query (the
// `created` filter included): a day with more runs than this cannot be read
// completely and is reported as truncated.
const MaxFilteredRuns = 1000

// ListedRun is a workflow run as the repository's run listing shows it.
type ListedRun struct {
	Run
	// CreatedAt is when the run (its first attempt) was created.
	CreatedAt time.Time
	// StartedAt is when the latest attempt started (run_started_at).
	StartedAt time.Time
	// UpdatedAt is the last change of the run, e.g. its latest attempt's end.
	UpdatedAt time.Time
}

// DayRuns are the runs created on one UTC day.
type DayRuns struct {
	// Day is midnight UTC of the day listed.
	Day time.Time
	// Runs are the runs listed, newest first as GitHub returns them; nil
	// when Truncated.
	Runs []ListedRun
	// TotalCount is GitHub's count of the day's runs.
	TotalCount int
	// Truncated says the day has more runs than a filtered listing can
	// return (MaxFilteredRuns) or the listing ended before TotalCount runs
	// were read: its runs are not returned, so nothing is concluded from a
	// partial day.
	Truncated bool
	// Requests is how many API requests the listing made (pages).
	Requests int
}

// RunsOnDay lists the repository's workflow runs created on day (its UTC
// date; the time of day is ignored) with `created=YYYY-MM-DD`, page by page.
// A day GitHub cannot list completely comes back with Truncated set and no
// runs, never as a silently partial list.
func (c *Client) RunsOnDay(ctx context.Context, owner, repo string, day time.Time) (*DayRuns, error) {
	day = day.UTC()
	day = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	date := day.Format(time.DateOnly)
	out := &DayRuns{Day: day}
	op := fmt.Sprintf("list workflow runs created %s", date)
	seen := map[int64]bool{}
	opts := &github.ListWorkflowRunsOptions{Created: date, ListOptions: github.ListOptions{PerPage: perPage}}
	for {
		if out.Requests >= MaxFilteredRuns/perPage+1 {
			// GitHub serves at most MaxFilteredRuns; more pages mean the
			// server misbehaves: refuse rather than loop.
			out.Truncated = true
			break
		}
		rs, resp, err := c.gh.Actions.ListRepositoryWorkflowRuns(ctx, owner, repo, opts)
		out.Requests++
		if err != nil {
			return nil, c.fail(op, permActionsRead, resp, err)
		}
		if rs == nil {
			return nil, &APIError{Op: op, Message: "empty answer"}
		}
		if out.Requests == 1 {
			out.TotalCount = rs.GetTotalCount()
			if out.TotalCount > MaxFilteredRuns {
				out.Truncated = true
				break
			}
		}
		for _, r := range rs.WorkflowRuns {
			if r == nil || seen[r.GetID()] {
				continue
			}
			seen[r.GetID()] = true
			out.Runs = append(out.Runs, toListedRun(r))
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(out.Runs) < out.TotalCount {
		out.Truncated = true
	}
	if out.Truncated {
		out.Runs = nil
	}
	return out, nil
}

// RunsByDay lists the runs of the days days ending with end's UTC date,
// oldest day first (see RunsOnDay). It stops at the first error.
func (c *Client) RunsByDay(ctx context.Context, owner, repo string, end time.Time, days int) ([]*DayRuns, error) {
	if days <= 0 {
		return nil, errors.New("ghapi: list runs by day: the window must be at least one day")
	}
	end = end.UTC()
	var out []*DayRuns
	for i := days - 1; i >= 0; i-- {
		d, err := c.RunsOnDay(ctx, owner, repo, end.AddDate(0, 0, -i))
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
	return out, nil
}

func toListedRun(r *github.WorkflowRun) ListedRun {
	lr := ListedRun{
		Run:       runFrom(r),
		CreatedAt: r.GetCreatedAt().Time,
		StartedAt: r.GetRunStartedAt().Time,
		UpdatedAt: r.GetUpdatedAt().Time,
	}
	if lr.RunAttempt < 1 {
		lr.RunAttempt = 1
	}
	return lr
}

// Step is one step of a job.
type Step struct {
	Name       string
	Number     int64
	Conclusion string
}

// AttemptJob is a job of one attempt of a run, whatever its conclusion.
type AttemptJob struct {
	ID          int64
	RunID       int64
	RunAttempt  int64
	Name        string
	Status      string
	Conclusion  string
	HTMLURL     string
	StartedAt   time.Time
	CompletedAt time.Time
	Steps       []Step
}

// Duration is how long the job ran; 0 when a time is missing.
func (j AttemptJob) Duration() time.Duration {
	if j.StartedAt.IsZero() || j.CompletedAt.Before(j.StartedAt) {
		return 0
	}
	return j.CompletedAt.Sub(j.StartedAt)
}

// Failed reports whether the job failed or timed out.
func (j AttemptJob) Failed() bool { return failed(j.Conclusion) }

// FailedSteps are the names of the steps that failed or timed out.
func (j AttemptJob) FailedSteps() []string {
	var out []string
	for _, s := range j.Steps {
		if failed(s.Conclusion) {
			out = append(out, s.Name)
		}
	}
	return out
}

// AttemptJobs is the job listing of one attempt.
type AttemptJobs struct {
	Jobs []AttemptJob
	// Requests is how many API requests the listing made (pages).
	Requests int
}

// JobsOfAttempt lists every job of attempt n (1-based) of run runID with its
// conclusion, times and steps
// (GET /repos/{o}/{r}/actions/runs/{id}/attempts/{n}/jobs), page by page.
func (c *Client) JobsOfAttempt(ctx context.Context, owner, repo string, runID int64, attempt int) (*AttemptJobs, error) {
	op := fmt.Sprintf("list jobs of run %d attempt %d", runID, attempt)
	if runID <= 0 || attempt <= 0 {
		return nil, fmt.Errorf("ghapi: %s: run ID and attempt must be positive", op)
	}
	out := &AttemptJobs{}
	jobs, resp, err := paginate(func(o github.ListOptions) ([]*github.WorkflowJob, *github.Response, error) {
		out.Requests++
		js, resp, err := c.gh.Actions.ListWorkflowJobsAttempt(ctx, owner, repo, runID, int64(attempt), &o)
		if js == nil {
			return nil, resp, err
		}
		return js.Jobs, resp, err
	})
	if err != nil {
		return nil, c.fail(op, permActionsRead, resp, err)
	}
	for _, j := range jobs {
		if j == nil {
			continue
		}
		aj := AttemptJob{
			ID: j.GetID(), RunID: j.GetRunID(), RunAttempt: j.GetRunAttempt(), Name: j.GetName(),
			Status: j.GetStatus(), Conclusion: j.GetConclusion(), HTMLURL: j.GetHTMLURL(),
			StartedAt: j.GetStartedAt().Time, CompletedAt: j.GetCompletedAt().Time,
		}
		if aj.RunAttempt == 0 {
			aj.RunAttempt = int64(attempt)
		}
		for _, s := range j.Steps {
			aj.Steps = append(aj.Steps, Step{Name: s.GetName(), Number: s.GetNumber(), Conclusion: s.GetConclusion()})
		}
		out.Jobs = append(out.Jobs, aj)
	}
	return out, nil
}
