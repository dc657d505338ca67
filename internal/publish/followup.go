package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/report"
)

// FollowUpCap is how many completions failing with one signature update a
// PR; later ones change nothing (the hard stop against any loop).
const FollowUpCap = 3

// maxContextBytes bounds the failure context shown in the CI section.
const maxContextBytes = 6000

// FollowUpAPI is what a follow-up calls (ghapi.Client implements it).
type FollowUpAPI interface {
	PullRequest(ctx context.Context, owner, repo string, number int) (*ghapi.PR, error)
	UpdatePR(ctx context.Context, owner, repo string, number int, u ghapi.PRUpdate) (*ghapi.PR, error)
	ConvertPRToDraft(ctx context.Context, owner, repo string, number int) error
}

// FollowUpRequest is a CI run that completed on mini-agent's fix branch.
type FollowUpRequest struct {
	Owner, Repo string
	PR          int
	Branch      string
	RunID       int64
	RunURL      string
	Conclusion  string
	// HeadSHA is the run's commit: a run on an older commit of the branch
	// (an earlier attempt) changes nothing. "" skips the check.
	HeadSHA string
	// Signature identifies the failure (failure.FailureContext.Signature);
	// Context is its rendering (log text: untrusted), both "" when unknown.
	Signature, Context string
	// MaxAttempts is the policy's max-attempts: while the PR has attempts
	// left, a failure says how to iterate (0: not said).
	MaxAttempts int
	Log         io.Writer
}

// Follow-up outcomes.
const (
	FollowUpUpdated   = "updated"   // the CI section says the run's result
	FollowUpDrafted   = "drafted"   // updated, and the PR turned draft
	FollowUpUnchanged = "unchanged" // the section already says it
	FollowUpCapped    = "capped"    // FollowUpCap reached for the signature
	FollowUpNotOurs   = "not-ours"  // the PR has no mini-agent state marker
	FollowUpStale     = "stale"     // the run is not on the PR's head commit
)

// FollowUp updates the PR's CI section with a completed run. On failure the
// section shows the failure context and the PR turns draft. It never starts
// a fix, and writes nothing for a completion it already recorded or once a
// failure signature was reported FollowUpCap times.
func FollowUp(ctx context.Context, gh FollowUpAPI, req FollowUpRequest) (string, error) {
	log := req.Log
	if log == nil {
		log = io.Discard
	}
	pr, err := gh.PullRequest(ctx, req.Owner, req.Repo, req.PR)
	if err != nil {
		return "", fmt.Errorf("publish: follow-up: %w", err)
	}
	st := parseState(pr.Body)
	if st.Attempts == 0 || pr.HeadRef != req.Branch {
		return FollowUpNotOurs, nil
	}
	if req.HeadSHA != "" && pr.HeadSHA != "" && req.HeadSHA != pr.HeadSHA {
		return FollowUpStale, nil
	}
	status := statusOfConclusion(req.Conclusion)
	if st.CI.RunID == req.RunID && st.CI.Status == status {
		return FollowUpUnchanged, nil
	}
	v := ciView{Status: status, Branch: req.Branch, RunID: req.RunID, RunURL: req.RunURL, Conclusion: plain(req.Conclusion)}
	if status == CIFailed {
		sig := signatureKey(req.Signature, req.Conclusion)
		if st.CI.FailSig == sig {
			if st.CI.FailSeen >= FollowUpCap {
				fmt.Fprintf(log, "follow-up: failure %s already reported %d times on #%d: nothing written\n", sig, st.CI.FailSeen, req.PR)
				return FollowUpCapped, nil
			}
			st.CI.FailSeen++
		} else {
			st.CI.FailSig, st.CI.FailSeen = sig, 1
		}
		v.FailedContext = failureBlock(req.Context)
		if req.MaxAttempts > st.Attempts {
			// A follow-up never starts a fix itself: say how to.
			v.FailedContext = strings.TrimSpace(v.FailedContext + fmt.Sprintf("\n\nComment `/mini-agent fix [instructions]` on this PR "+
				"to try again from this failure on the same branch (attempt %d of %d).", st.Attempts+1, req.MaxAttempts))
		}
	}
	st.CI.Status, st.CI.RunID = status, req.RunID
	body := withCI(pr.Body, v.render(), st)
	if _, err := gh.UpdatePR(ctx, req.Owner, req.Repo, req.PR, ghapi.PRUpdate{Body: &body}); err != nil {
		return "", fmt.Errorf("publish: follow-up: %w", err)
	}
	if status != CIFailed || pr.Draft {
		return FollowUpUpdated, nil
	}
	if err := gh.ConvertPRToDraft(ctx, req.Owner, req.Repo, req.PR); err != nil {
		return FollowUpUpdated, fmt.Errorf("publish: follow-up: the CI section says the run failed, but #%d could not turn draft: %w", req.PR, err)
	}
	return FollowUpDrafted, nil
}

// signatureKey is a failure signature as the state marker can hold it.
func signatureKey(sig, conclusion string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(sig) {
		if (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "run-" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r == '_' {
				return r
			}
			return -1
		}, conclusion)
	}
	return cutUTF8(b.String(), 16)
}

// failureBlock shows the log-derived failure context as a collapsed code
// block it cannot break out of.
func failureBlock(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	text = cutUTF8(strings.ToValidUTF8(text, "?"), maxContextBytes)
	// No line of log text may read as one of mini-agent's markers.
	text = strings.ReplaceAll(text, "<!--", "<!\u200b--")
	f := report.Fence(text, 3)
	return "<details><summary>Failure context of the run</summary>\n\n" + f + "text\n" + text + "\n" + f + "\n\n</details>"
}

// RefreshAPI is what refreshing CI sections calls.
type RefreshAPI interface {
	OpenPRs(ctx context.Context, owner, repo string, limit int) ([]*ghapi.PR, error)
	WorkflowRun(ctx context.Context, owner, repo string, id int64) (*ghapi.Run, error)
	FollowUpAPI
}

// Refresh bounds: open PRs listed, and PRs whose run is looked at.
const (
	refreshList = 30
	refreshMax  = 3
)

// RefreshCI brings the CI section of mini-agent's open PRs (head branch
// with prefix, same repository) whose dispatched run was still running up
// to date: at most refreshMax runs are read, in one listing and two or
// three calls each. It returns how many PRs it updated; errors stop it.
func RefreshCI(ctx context.Context, gh RefreshAPI, owner, repo, prefix string, log io.Writer) (int, error) {
	if log == nil {
		log = io.Discard
	}
	prs, err := gh.OpenPRs(ctx, owner, repo, refreshList)
	if err != nil {
		return 0, fmt.Errorf("publish: refresh: %w", err)
	}
	looked, updated := 0, 0
	for _, pr := range prs {
		if looked == refreshMax {
			break
		}
		st := parseState(pr.Body)
		if !strings.HasPrefix(pr.HeadRef, prefix) || !strings.EqualFold(pr.HeadRepo, owner+"/"+repo) ||
			st.Attempts == 0 || st.CI.Status != CIRunning || st.CI.RunID == 0 {
			continue
		}
		looked++
		run, err := gh.WorkflowRun(ctx, owner, repo, st.CI.RunID)
		if errors.Is(err, ghapi.ErrNotFound) {
			continue
		}
		if err != nil {
			return updated, fmt.Errorf("publish: refresh: %w", err)
		}
		if run.Status != "completed" {
			continue
		}
		// The refresh has no log: a failure is shown without its context
		// (the run's link has it).
		what, err := FollowUp(ctx, gh, FollowUpRequest{Owner: owner, Repo: repo, PR: pr.Number, Branch: pr.HeadRef,
			RunID: run.ID, RunURL: run.HTMLURL, Conclusion: run.Conclusion, HeadSHA: run.HeadSHA, Log: log})
		if err != nil {
			return updated, err
		}
		if what == FollowUpUpdated || what == FollowUpDrafted {
			updated++
			fmt.Fprintf(log, "refresh: #%d: CI run %d %s\n", pr.Number, run.ID, run.Conclusion)
		}
	}
	return updated, nil
}
