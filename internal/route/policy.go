package route

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/config"
)

// Authorize applies the repository policy to what is known so far: who may
// command, the configured loop-guard prefix, forks. It makes no request and
// returns why the event is refused, or "" to go on.
func (t *Trigger) Authorize(cfg *config.Config) string {
	if c := t.comment; c != nil {
		switch {
		case c.bot && !cfg.AllowsBot(c.login):
			return fmt.Sprintf("commenter %s is a bot not listed in allowed-bots", c.login)
		case !c.bot && !cfg.AllowsAssociation(c.association):
			return fmt.Sprintf("commenter %s has association %s; the policy allows %s", c.login, c.association, strings.Join(cfg.Associations, ", "))
		}
	}
	if t.fromRun {
		if why := t.settleRun(cfg.BranchPrefix); why != "" || t.kind == kindFollowUp {
			return why
		}
	}
	if t.branch != "" && strings.HasPrefix(t.branch, cfg.BranchPrefix) {
		return loopGuard(t.branch, cfg.BranchPrefix, "").Reason
	}
	if t.headRepo != "" && t.isFork() && !cfg.AllowForks {
		return fmt.Sprintf("the failing head is in the fork %s; the policy does not allow forks (allow-forks)", t.headRepo)
	}
	return ""
}

func (t *Trigger) isFork() bool {
	return !strings.EqualFold(t.headRepo, t.owner+"/"+t.repo)
}

// Resolve reads what the decision needs from the API (the run, its failed
// jobs, the PR and its labels) and applies the label policy.
func (t *Trigger) Resolve(ctx context.Context, gh GitHub, cfg *config.Config) (Decision, error) {
	job := &Job{Owner: t.owner, Repo: t.repo, Source: t.source, FailureLog: t.failureLog, RunID: t.runID,
		WorkflowID: t.workflowID, RunURL: t.runURL, Workflow: t.workflow, HeadSHA: t.headSHA, Branch: t.branch, HeadRepo: t.headRepo,
		Instructions: t.instructions, Help: t.help, UnknownVerb: t.unknownVerb, Trigger: t.describe}
	if c := t.comment; c != nil {
		job.CommentID, job.Commenter = c.id, c.login
	}
	if t.kind == kindFollowUp {
		return t.followUp(ctx, gh, cfg, job)
	}
	if t.kind == kindFlaky {
		job.Flaky, job.Mode, job.Write = true, agent.ModeFix, WritePropose
		job.Reason = "mode flaky: flaky tests are reported in issues; a proven fix, or a quarantine when the policy names a file, is proposed as a draft pull request against the default branch"
		return Decision{Job: job, Reason: job.Reason, Stage: 1}, nil
	}
	if t.kind == kindRefresh {
		job.Refresh, job.Mode, job.Write = true, agent.ModeExplain, WriteNone
		job.Reason = "scheduled run: only the CI sections of mini-agent's open pull requests are refreshed"
		return Decision{Job: job, Reason: job.Reason, Stage: 1}, nil
	}
	var pr *ghapi.PR
	var err error
	switch t.kind {
	case kindDispatchRun:
		run, err := gh.WorkflowRun(ctx, t.owner, t.repo, t.runID)
		if err != nil {
			return Decision{}, fmt.Errorf("route: %w", err)
		}
		if d := conclusionSkip(run.ID, run.Conclusion); d.Reason != "" {
			d.Stage = 2
			return d, nil
		}
		headRepo := run.HeadRepo
		if headRepo == "" {
			headRepo = deletedFork
		}
		job.RunURL, job.Workflow, job.HeadSHA, job.Branch, job.HeadRepo = run.HTMLURL, run.Name, run.HeadSHA, run.HeadBranch, headRepo
		job.WorkflowID = run.WorkflowID
		job.Trigger = fmt.Sprintf("dispatch for workflow %q run %d on %s", run.Name, run.ID, run.HeadBranch)
		t.branch, t.headRepo, t.prNumbers = run.HeadBranch, headRepo, run.PullRequests
		if why := t.Authorize(cfg); why != "" {
			return skip(2, "%s", why), nil
		}
		fallthrough
	case kindRun:
		jobs, err := gh.FailedJobs(ctx, t.owner, t.repo, t.runID)
		if err != nil {
			return Decision{}, fmt.Errorf("route: %w", err)
		}
		if len(jobs) == 0 {
			return skip(2, "workflow run %d has no failed jobs (a zero-job run, or only cancelled jobs): nothing to read a failure from", t.runID), nil
		}
		job.FailedJobs = jobs
		if pr, err = t.runPR(ctx, gh); err != nil {
			return Decision{}, err
		}
	case kindPR:
		if t.comment != nil && t.closed && !t.help {
			// The payload says closed: answer the person who asked.
			job.PR, job.PRURL = t.prNumber, t.prURL
			d := stop(job, "%s", closedReason(t.prNumber, "closed"))
			d.Stage = 1
			return d, nil
		}
		if pr, err = gh.PullRequest(ctx, t.owner, t.repo, t.prNumber); err != nil {
			return Decision{}, fmt.Errorf("route: %w", err)
		}
		if pr.State != "open" && !t.help {
			if t.comment == nil {
				return skip(2, "pull request #%d is %s", pr.Number, pr.State), nil
			}
			job.PR, job.PRURL = pr.Number, pr.HTMLURL
			return stop(job, "%s", closedReason(pr.Number, pr.State)), nil
		}
		job.HeadSHA, job.Branch, job.HeadRepo = pr.HeadSHA, pr.HeadRef, pr.HeadRepo
		t.branch, t.headRepo = pr.HeadRef, pr.HeadRepo
		if pr.HeadRepo == "" {
			t.headRepo = deletedFork
		}
		if t.comment != nil && !t.help && t.mode == agent.ModeFix && t.ownPR(pr, cfg) {
			return t.iterate(ctx, gh, cfg, job, pr)
		}
		if why := t.Authorize(cfg); why != "" {
			// The commenter was authorized before the PR was read: a
			// refusal now (a fork head, mini-agent's own branch) is
			// answered like the other refusals after reading the PR.
			job.PR, job.PRURL = pr.Number, pr.HTMLURL
			return stop(job, "%s", why), nil
		}
	case kindInJobPR:
		labels, err := gh.Labels(ctx, t.owner, t.repo, t.prNumber)
		if err != nil {
			return Decision{}, fmt.Errorf("route: %w", err)
		}
		pr = &ghapi.PR{Number: t.prNumber, Labels: labels, HeadRepo: t.headRepo, BaseRepo: t.owner + "/" + t.repo, HTMLURL: t.prURL}
	case kindBranch:
		if pr, err = gh.FindOpenPR(ctx, t.owner, t.repo, t.owner, t.branch); err != nil {
			return Decision{}, fmt.Errorf("route: %w", err)
		}
	}
	job.Fork = (job.HeadRepo != "" && !strings.EqualFold(job.HeadRepo, t.owner+"/"+t.repo)) || (pr != nil && pr.HeadRepo == "")
	if pr != nil {
		job.PR, job.PRURL, job.Labels, job.PRHead = pr.Number, pr.HTMLURL, pr.Labels, pr.HeadSHA
	}
	if job.Help {
		job.Mode, job.Write, job.Reason = agent.ModeExplain, WriteNone, "help requested"
		return Decision{Job: job, Reason: "help requested", Stage: 2}, nil
	}
	d := decide(t, cfg, job)
	d.Stage = 2
	return d, nil
}

// closedReason is the answer to a command on a pull request that is not
// open.
func closedReason(n int, state string) string {
	return fmt.Sprintf("pull request #%d is %s: mini-agent fixes and explains open pull requests only; reopen it and comment again", n, state)
}

// maxLinkedPRs bounds the PRs of a run's pull_requests list that are read.
const maxLinkedPRs = 3

// runPR finds the PR of a failing run: one GitHub linked whose head is the
// run's branch and repository, else the open PR whose head is the run's
// branch. GitHub links PRs by head SHA or branch name, so a linked PR can
// come from another branch (one at the same commit): its labels must not
// decide what is written on the run's branch.
func (t *Trigger) runPR(ctx context.Context, gh GitHub) (*ghapi.PR, error) {
	for i, n := range t.prNumbers {
		if i == maxLinkedPRs {
			break
		}
		if n <= 0 {
			continue
		}
		pr, err := gh.PullRequest(ctx, t.owner, t.repo, n)
		if errors.Is(err, ghapi.ErrNotFound) {
			// Not a PR of this repository (a fork's own PR the payload
			// lists): the branch's PR is looked up below.
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("route: %w", err)
		}
		if pr.HeadRef == t.branch && strings.EqualFold(orDeleted(pr.HeadRepo), t.runHeadRepo()) {
			return pr, nil
		}
	}
	if t.branch == "" || t.headRepo == deletedFork {
		return nil, nil
	}
	headOwner := t.owner
	if o, _, ok := strings.Cut(t.headRepo, "/"); ok {
		headOwner = o
	}
	pr, err := gh.FindOpenPR(ctx, t.owner, t.repo, headOwner, t.branch)
	if err != nil {
		return nil, fmt.Errorf("route: %w", err)
	}
	return pr, nil
}

// decide applies the label policy: off skips; read-only explains; push
// commits to the PR's branch (same repository only); no label proposes a
// new branch and PR. An explain request (mode input or command) explains
// whatever the label, except off.
func decide(t *Trigger, cfg *config.Config, job *Job) Decision {
	has := func(l string) bool {
		for _, x := range job.Labels {
			if strings.EqualFold(x, l) {
				return true
			}
		}
		return false
	}
	on := ""
	if job.PR != 0 {
		on = fmt.Sprintf(" on #%d", job.PR)
	}
	accept := func(mode agent.Mode, w Write, reason string) Decision {
		job.Mode, job.Write, job.Reason = mode, w, reason
		return Decision{Job: job, Reason: reason}
	}
	switch {
	case has(cfg.Labels.Off):
		return stop(job, "label %s%s: mini-agent is off for this pull request", cfg.Labels.Off, on)
	case has(cfg.Labels.ReadOnly):
		return accept(agent.ModeExplain, WriteNone, fmt.Sprintf("label %s%s: explain only, the agent runs read-only", cfg.Labels.ReadOnly, on))
	case t.mode == agent.ModeExplain:
		return accept(agent.ModeExplain, WriteNone, t.modeReason+": explain only, the agent runs read-only")
	case job.Fork:
		return accept(agent.ModeFix, WriteComment, fmt.Sprintf("the head is in the fork %s: mini-agent never writes to forks; the fix is posted as a comment", orDash(job.HeadRepo)))
	case has(cfg.Labels.Push):
		if job.PR == 0 {
			return accept(agent.ModeFix, WritePropose, fmt.Sprintf("label %s but no pull request: proposing a new PR", cfg.Labels.Push))
		}
		if job.PRHead != "" && job.PRHead != job.HeadSHA {
			return stop(job, "label %s%s, but the PR's head moved from %s to %s since the failure: not committing over newer work", cfg.Labels.Push, on, short(job.HeadSHA), short(job.PRHead))
		}
		return accept(agent.ModeFix, WritePush, fmt.Sprintf("label %s%s: commit directly on %s", cfg.Labels.Push, on, job.Branch))
	}
	return accept(agent.ModeFix, WritePropose, fmt.Sprintf("no mini-agent label%s: propose the fix in a new PR against %s", on, orDash(job.Branch)))
}

// stop skips an authorized job at stage 2, keeping it for a reply.
func stop(job *Job, format string, args ...any) Decision {
	d := skip(2, format, args...)
	d.About = job
	return d
}

// runHeadRepo is the run's head repository, the base one when not given.
func (t *Trigger) runHeadRepo() string {
	if t.headRepo == "" {
		return t.owner + "/" + t.repo
	}
	return t.headRepo
}

func orDeleted(repo string) string {
	if repo == "" {
		return deletedFork
	}
	return repo
}
