package publish

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/route"
)

// Annotate records the job's publishing context in the bundle: the failing
// run, the workflow and failed jobs (part of the failure's key), the branch
// and the write policy with its reason (shown in the PR body and summary).
// The action and the publish command both call it, so a bundle published
// later gets the same branch as one published at once.
func Annotate(b *bundle.Bundle, job *route.Job) {
	var names []string
	for _, j := range job.FailedJobs {
		if !contains(names, j.Name) {
			names = append(names, j.Name)
		}
	}
	sort.Strings(names)
	b.Extra = bundle.ExtraContext{RunURL: job.RunURL, Workflow: job.Workflow, Job: strings.Join(names, ", "),
		Policy: string(job.Write), Reason: job.Reason}
	b.Branch = job.Branch
}

// Precheck tells, before any model call, whether a proposal for this failure
// would be refused anyway (closed without merging at this commit, or
// max-attempts reached). b needs the signature, base SHA and Extra (see
// Annotate). It returns nil when the run should go ahead.
func Precheck(ctx context.Context, gh GitHub, job *route.Job, cfg *config.Config, b *bundle.Bundle) (*Result, error) {
	if job.Write != route.WritePropose || job.Branch == "" {
		return nil, nil
	}
	if why, err := notABranch(ctx, gh, job); why != "" || err != nil {
		if err != nil {
			return nil, err
		}
		return &Result{Status: StatusSkipped, Action: ActionSkipped, Reason: why, PRNumber: job.PR, PRURL: job.PRURL}, nil
	}
	branch := FixBranch(cfg.BranchPrefix, Key(job.Branch, b))
	found, err := lookup(ctx, gh, job.Owner, job.Repo, branch)
	if err != nil {
		return nil, err
	}
	if no := found.refusal(b.BaseSHA, cfg.MaxAttempts, branch); no != "" {
		return &Result{Status: StatusSkipped, Action: ActionSkipped, Reason: no, Branch: branch, PRNumber: job.PR, PRURL: job.PRURL}, nil
	}
	return nil, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// notABranch says why the job's failing ref cannot be a PR's base (a tag:
// a run's head_branch is the tag's name; or a branch deleted since), or "".
func notABranch(ctx context.Context, gh GitHub, job *route.Job) (string, error) {
	_, err := gh.BranchHead(ctx, job.Owner, job.Repo, job.Branch)
	switch {
	case errors.Is(err, ghapi.ErrNotFound):
		return fmt.Sprintf("%s is not a branch (a tag, or a branch deleted since): no pull request can target it", job.Branch), nil
	case err != nil:
		return "", fmt.Errorf("publish: %w", err)
	}
	return "", nil
}
