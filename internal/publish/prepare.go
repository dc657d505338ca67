package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// Precheck tells, before any model call, whether the run should go ahead:
// a proposal for this failure would be refused anyway (closed without
// merging at this commit, max-attempts reached: a skip), publishing would
// be refused (a read-only token, a ruleset: a Result of status failed with
// its Refusal), or an earlier run left a validated fix for this failure on
// the fix branch without a PR (the PR is opened for it: status fixed,
// Recovered; a refusal again is status failed and the error). b needs the
// base SHA and Extra (see Annotate), and the signature when the failure is
// known before the run ("" when the test command is to find it). It
// returns nil when the run should go ahead.
func Precheck(ctx context.Context, gh GitHub, job *route.Job, cfg *config.Config, b *bundle.Bundle, log io.Writer) (*Result, error) {
	if log == nil {
		log = io.Discard
	}
	logf := func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }
	switch {
	case job.Write == route.WritePush && job.Branch != "":
		return preflight(ctx, gh, job, cfg, job.Branch, true, false)
	case job.Write != route.WritePropose || job.Branch == "":
		return nil, nil
	}
	if why, err := notABranch(ctx, gh, job); why != "" || err != nil {
		if err != nil {
			return nil, err
		}
		return &Result{Status: StatusSkipped, Action: ActionSkipped, Reason: why, PRNumber: job.PR, PRURL: job.PRURL}, nil
	}
	if b.Signature == "" {
		// The branch is named after the failure the run will find; the
		// rulesets are read for the policy's prefix.
		return preflight(ctx, gh, job, cfg, FixBranch(cfg.BranchPrefix, strings.Repeat("0", keyLen)), false, false)
	}
	branch := FixBranch(cfg.BranchPrefix, Key(job.Branch, b))
	found, err := lookup(ctx, gh, job.Owner, job.Repo, branch)
	if err != nil {
		return nil, err
	}
	if found.open == nil && found.latest != nil && !found.latest.Merged && found.state.FailingSHA == b.BaseSHA {
		return &Result{Status: StatusSkipped, Action: ActionSkipped, Reason: found.refusal(b.BaseSHA, cfg.MaxAttempts, branch), Branch: branch,
			PRNumber: job.PR, PRURL: job.PRURL}, nil
	}
	if found.open == nil && validatedFix(found.head, found.trailers, b.Signature, b.BaseSHA) {
		logf("publish: %s holds a validated fix for this failure (%s) without a pull request: opening one for it, no model call",
			branch, short(found.head.SHA))
		return recoverFix(ctx, gh, job, cfg, b, branch, found, logf)
	}
	if no := found.refusal(b.BaseSHA, cfg.MaxAttempts, branch); no != "" {
		return &Result{Status: StatusSkipped, Action: ActionSkipped, Reason: no, Branch: branch, PRNumber: job.PR, PRURL: job.PRURL}, nil
	}
	exists := found.open != nil || found.head != nil
	return preflight(ctx, gh, job, cfg, branch, exists, exists)
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
