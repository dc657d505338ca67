package publish

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/report"
	"github.com/org/mini-agent/internal/route"
)

// recoverFix opens the pull request for a validated fix an earlier run
// committed on the fix branch for this failure and could not open a PR for
// (GitHub refused it, a rate limit): no model runs again. found is the
// look-up of branch, whose head validatedFix accepted. A refusal of the PR
// is a Result of status failed with the branch, and the error.
func recoverFix(ctx context.Context, gh GitHub, job *route.Job, cfg *config.Config, stub *bundle.Bundle, branch string, found *proposals, log func(string, ...any)) (*Result, error) {
	head, tr := found.head, found.trailers
	p := &publisher{gh: gh, b: stub, job: job, cfg: cfg, log: nopWriter{}, tracker: &Tracker{GH: gh, Owner: job.Owner, Repo: job.Repo, PR: job.PR}}
	reportText := ""
	if tr.Report != "" {
		if data, err := gh.Blob(ctx, job.Owner, job.Repo, tr.Report); err == nil {
			// mini-agent's own report, but read back from the repository:
			// no hidden markers of its but the signature's.
			reportText = report.Untrusted(string(data))
			if safeValue.MatchString(tr.Signature) {
				reportText = strings.TrimRight(reportText, "\n") + "\n" + report.Marker(tr.Signature) + "\n"
			}
		} else {
			log("publish: the earlier run's report (blob %s) could not be read, the PR body is made from the commit message: %v", short(tr.Report), err)
		}
	}
	if reportText == "" {
		reportText = fromCommitMessage(head.Message)
	}
	run := "an earlier run"
	if tr.RunURL != "" {
		run = fmt.Sprintf("[an earlier run](%s)", tr.RunURL)
	}
	st := state{Attempts: max(found.state.Attempts, tr.Attempt, 1), FailingSHA: head.Parents[0]}
	ci := p.initialCI(branch)
	st.CI.Status = ci.Status
	body := fmt.Sprintf("> [!NOTE]\n> mini-agent validated and committed this fix (`%s`, tree `%s`) in %s, which could not open its pull "+
		"request. This run opened it for that commit, without calling the model again; the report below is the earlier run's.\n\n",
		short(head.SHA), short(head.Tree), run) + reportText + "\n\n" + ci.render() + "\n\n" + st.marker() + "\n"
	title := cutUTF8(plain(strings.TrimSpace(firstLine(head.Message))), maxTitleBytes)
	if title == "" {
		title = "mini-agent: fix failing tests on " + job.Branch
	}
	res := &Result{Status: StatusFixed, Action: ActionPRCreated, Branch: branch, Commit: head.SHA, Attempt: st.Attempts, Recovered: true}
	pr, err := gh.CreatePR(ctx, job.Owner, job.Repo, ghapi.NewPR{Title: title, Body: body, Head: branch, Base: job.Branch, Draft: cfg.Draft})
	if errors.Is(err, ghapi.ErrUnprocessable) {
		pr, err = p.existingPR(ctx, branch, title, body, err)
	}
	if err != nil {
		res.Status, res.Action = StatusFailed, ActionFailed
		res.Refusal = Explain(err, cfg, branch)
		res.Reason = failureReason(res, err)
		return res, fmt.Errorf("publish: %w", err)
	}
	res.PRNumber, res.PRURL = pr.Number, pr.HTMLURL
	res.Reason = fmt.Sprintf("opened #%d for the validated commit %s an earlier run left on %s (no model call)", pr.Number, short(head.SHA), branch)
	if err := p.requestReviewers(ctx, pr.Number); err != nil {
		log("publish: warning: %v", err)
	}
	if job.PR != 0 && job.PR != pr.Number {
		if c, err := p.tracker.Post(ctx, p.header(false)+fmt.Sprintf("**Proposed a fix in %s** (%s).\n", pr.HTMLURL, res.Reason)); err != nil {
			log("publish: warning: %v", err)
		} else {
			res.CommentURL = c.HTMLURL
		}
	}
	return res, nil
}

// fromCommitMessage is the part of mini-agent's commit message a PR body
// can show when the report blob is gone: the summary and the validation
// line, without the title and trailers.
func fromCommitMessage(msg string) string {
	var keep []string
	for i, l := range strings.Split(msg, "\n") {
		if i == 0 || strings.HasPrefix(strings.TrimSpace(l), "Mini-Agent-") {
			continue
		}
		keep = append(keep, l)
	}
	return "### Summary (from the commit message)\n\n" + report.Untrusted(strings.TrimSpace(strings.Join(keep, "\n"))) + "\n"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

var safeValue = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
