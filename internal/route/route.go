// Package route turns a GitHub event into a decision: skip (with a reason)
// or a Job (what to fix or explain, where the failure comes from, and the
// label-gated write policy). It runs its checks cheapest first: everything
// the event payload alone decides (event kind, conclusion, commenter
// association, command syntax, loop guards) is checked before any API
// request, so an ignored event costs nothing; then the repository policy
// (one request); then the PR, labels and run (a few more).
//
// Job level: uses the GitHub client and config; knows no model and no tool.
package route

import (
	"context"
	"errors"
	"fmt"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/config"
)

// Write is what publishing may do for a job.
type Write string

// Write policies.
const (
	// WriteNone: explain only (read-only label, explain command or mode).
	WriteNone Write = "read-only"
	// WritePropose: a new branch and a PR targeting the failing branch.
	WritePropose Write = "propose"
	// WritePush: a commit on the PR's own branch (same repository only).
	WritePush Write = "push"
	// WriteComment: the fix is posted as a comment, nothing is pushed (fork heads).
	WriteComment Write = "comment"
)

// Source says where the failure comes from.
type Source string

// Failure sources.
const (
	// SourceRun: the failed jobs' logs of workflow run Job.RunID.
	SourceRun Source = "workflow-run"
	// SourceLog: the failure-log input file.
	SourceLog Source = "failure-log"
	// SourceTest: run the test command in the workspace first.
	SourceTest Source = "test-command"
)

// Event is what GitHub handed the action.
type Event struct {
	// Name is GITHUB_EVENT_NAME.
	Name string
	// Payload is the content of GITHUB_EVENT_PATH.
	Payload []byte
	// Repo is GITHUB_REPOSITORY ("owner/name").
	Repo string
	// SHA and Ref are GITHUB_SHA and GITHUB_REF.
	SHA, Ref string
	// Mode is the mode input: "auto" (or empty), "fix", "explain" or "flaky".
	Mode string
	// FailureLog is the failure-log input (a file path), if any.
	FailureLog string
}

// Job is an accepted event: what to run and what publishing may do.
type Job struct {
	Mode  agent.Mode
	Write Write
	// Reason explains the write policy, for the log, summary and PR body.
	Reason string
	// Trigger describes the event in one line.
	Trigger string

	Owner, Repo   string
	DefaultBranch string
	// HeadSHA is the commit to fix; the workspace must be checked out at it.
	HeadSHA string
	// Branch is the failing branch (the PR's head branch, if any).
	Branch string
	// HeadRepo is "owner/name" of Branch; it differs from the repository for forks.
	HeadRepo string
	Fork     bool
	// PR is the pull request concerned (0 when none) and its labels.
	PR     int
	PRURL  string
	Labels []string
	// PRHead is the PR's head SHA when it was read ("" when not read).
	PRHead string

	Source     Source
	FailureLog string
	RunID      int64
	RunURL     string
	Workflow   string
	// WorkflowID is the failing run's workflow (0 when not known).
	WorkflowID int64
	// FailedJobs are the run's failed jobs (SourceRun).
	FailedJobs []ghapi.Job

	// Instructions is comment text, sanitized and framed as data.
	Instructions string
	// CommentID is the command comment (for the reaction), 0 otherwise.
	CommentID int64
	Commenter string
	// FollowUp: a run (RunID) completed with Conclusion on mini-agent's
	// branch; the PR's CI section is updated and no agent runs.
	FollowUp   bool
	Conclusion string
	// Refresh: a scheduled run; only the CI sections of mini-agent's open
	// PRs are refreshed, no agent runs.
	Refresh bool
	// Flaky: mode flaky on a schedule or dispatch: the flaky-test scan and
	// repair of the default branch (Branch) runs instead of a fix.
	Flaky bool
	// Iterate: a fix command on mini-agent's own PR (Write is push); the
	// Instructions carry the PR's allowed unresolved review comments.
	Iterate bool

	// Help asks for the help reply instead of a run.
	Help        bool
	UnknownVerb string
}

// Decision is the outcome of routing.
type Decision struct {
	// Job is nil when the event is skipped.
	Job *Job
	// Reason says why the event was skipped, or why it was accepted.
	Reason string
	// Stage is how far routing got: 0 payload only (no request), 1 the
	// policy file was read, 2 the PR, labels or run were read.
	Stage int
	// About is set on a skip that stops a job already authorized (stage 2:
	// the off label, a PR head that moved), so that a person who asked with
	// a comment command gets an answer instead of silence.
	About *Job
}

// Skipped reports whether the event is ignored.
func (d Decision) Skipped() bool { return d.Job == nil }

func skip(stage int, format string, args ...any) Decision {
	return Decision{Reason: fmt.Sprintf(format, args...), Stage: stage}
}

// GitHub is what routing reads from the API (ghapi.Client implements it).
type GitHub interface {
	PullRequest(ctx context.Context, owner, repo string, number int) (*ghapi.PR, error)
	FindOpenPR(ctx context.Context, owner, repo, headOwner, branch string) (*ghapi.PR, error)
	Labels(ctx context.Context, owner, repo string, number int) ([]string, error)
	WorkflowRun(ctx context.Context, owner, repo string, id int64) (*ghapi.Run, error)
	FailedJobs(ctx context.Context, owner, repo string, runID int64) ([]ghapi.Job, error)
	UnresolvedReviewComments(ctx context.Context, owner, repo string, number int) ([]ghapi.ReviewComment, error)
}

// Router routes events. LoadConfig is called at most once, only for events
// that pass the payload checks; defaultBranch is the payload's, if known.
type Router struct {
	GitHub     GitHub
	LoadConfig func(ctx context.Context, defaultBranch string) (*config.Loaded, error)
}

// ErrEvent marks an event payload that cannot be read (a configuration or
// runner problem, not a reason to skip silently).
var ErrEvent = errors.New("bad event")

// Route decides. The returned policy is nil when the event was skipped
// before it was needed. Errors are API or configuration failures; a skip is
// not an error.
func (r *Router) Route(ctx context.Context, ev Event) (Decision, *config.Loaded, error) {
	t, d, err := Parse(ev)
	if err != nil || t == nil {
		return d, nil, err
	}
	cfg, err := r.LoadConfig(ctx, t.DefaultBranch)
	if err != nil {
		return Decision{}, nil, err
	}
	if why := t.Authorize(cfg.Config); why != "" {
		return skip(1, "%s", why), cfg, nil
	}
	d, err = t.Resolve(ctx, r.GitHub, cfg.Config)
	if err == nil && d.Job != nil {
		d.Job.DefaultBranch = cfg.DefaultBranch
		if d.Job.Flaky {
			d.Job.Branch = cfg.DefaultBranch
		}
	}
	return d, cfg, err
}
