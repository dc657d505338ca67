// Package publish takes a run's bundle to GitHub under the write policy the
// router decided: a proposal branch and PR (one per failure, updated on
// reruns), a verified commit on the PR's own branch, or a comment. It
// re-checks the bundle against the policy before the first write and never
// writes a refused bundle. It knows GitHub (through ghapi), never the model.
//
// Job level: uses the GitHub client, config, report and bundle; knows no model.
package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/report"
	"github.com/org/mini-agent/internal/route"
)

// Status is the action's `status` output: what became of a run once
// published. The JSON and output values are the plain strings.
type Status string

// Statuses reported by the action.
const (
	StatusFixed     Status = "fixed"
	StatusNotFixed  Status = "not-fixed"
	StatusExplained Status = "explained"
	StatusSkipped   Status = "skipped"
	StatusFailed    Status = "failed"
	// StatusAnswered: a person's `/mini-agent help` (or an unknown
	// command) was answered on the PR; no job ran.
	StatusAnswered Status = "answered"
	// StatusNotReproduced: the failing tests passed at the base on a clean
	// checkout here: no fix can be proven, none is claimed (no branch, no
	// PR; a comment on the PR thread, if any).
	StatusNotReproduced Status = "not-reproduced"
)

// StatusOf is the one mapping from a run's status (the bundle's) to the
// action's: "fixed" only for a validated change publishing delivered
// (pushed, proposed in a ready PR, or posted on a fork's PR), "explained"
// for a diagnosis, "skipped" for a run that found nothing to fix, and
// "not-fixed" for every other run, whatever stopped it (validation failed,
// cancelled, a limit, a change publishing did not deliver). "failed" is
// never a run's status: publishing says it when it refuses or breaks.
func StatusOf(s bundle.Status, delivered bool) Status {
	switch s {
	case bundle.StatusFixed:
		if delivered {
			return StatusFixed
		}
	case bundle.StatusExplained:
		return StatusExplained
	case bundle.StatusNothingToFix:
		return StatusSkipped
	case bundle.StatusNotReproduced:
		return StatusNotReproduced
	}
	return StatusNotFixed
}

// What publishing did.
const (
	ActionNone       = "none"
	ActionPRCreated  = "pr-created"
	ActionPRUpdated  = "pr-updated"
	ActionDraftPR    = "draft-pr"
	ActionPushed     = "pushed"
	ActionCommented  = "commented"
	ActionRefused    = "refused"
	ActionSkipped    = "skipped"
	ActionHeadMoved  = "head-moved"
	ActionTooLarge   = "too-large"
	ActionNoFixFound = "no-fix"
	// ActionNotReproduced: the failure did not reproduce; the report was
	// posted on the PR thread (if any); no branch, no PR.
	ActionNotReproduced = "not-reproduced"
)

// CINote is the PR note on CI: GitHub does not start workflows for pushes
// made with the workflow's GITHUB_TOKEN, so the harness's own validation is
// what the PR can show.
const CINote = "CI may not run on this pull request: GitHub starts no workflows for commits and PRs made with a workflow's " +
	"`GITHUB_TOKEN`. The validation above was run by mini-agent's harness in the job itself. To get CI on mini-agent's PRs, " +
	"pass a GitHub App installation token as `github-token` (for example from `actions/create-github-app-token`)."

// GitHub is what publishing calls (ghapi.Client implements it).
type GitHub interface {
	CommitFiles(ctx context.Context, owner, repo string, req ghapi.CommitRequest) (*ghapi.CommitResult, error)
	BranchHead(ctx context.Context, owner, repo, branch string) (string, error)
	PRsForBranch(ctx context.Context, owner, repo, headOwner, branch, state string) ([]*ghapi.PR, error)
	PullRequest(ctx context.Context, owner, repo string, number int) (*ghapi.PR, error)
	CreatePR(ctx context.Context, owner, repo string, np ghapi.NewPR) (*ghapi.PR, error)
	UpdatePR(ctx context.Context, owner, repo string, number int, u ghapi.PRUpdate) (*ghapi.PR, error)
	RequestReviewers(ctx context.Context, owner, repo string, number int, users, teams []string) error
	FileAtRef(ctx context.Context, owner, repo, path, ref string) ([]byte, error)
	Commit(ctx context.Context, owner, repo, sha string) (*ghapi.CommitInfo, error)
	CreateBlob(ctx context.Context, owner, repo string, content []byte) (string, error)
	Blob(ctx context.Context, owner, repo, sha string) ([]byte, error)
	BranchRules(ctx context.Context, owner, repo, branch string) ([]ghapi.BranchRule, error)
	GetRuleset(ctx context.Context, owner, repo string, id int64) (*ghapi.Ruleset, error)
	CommentAPI
}

// Request is one bundle to publish.
type Request struct {
	Bundle *bundle.Bundle
	Job    *route.Job
	Config *config.Config
	// Log receives one line per decision and write; nil discards.
	Log io.Writer
	// Tracker is the job's tracking comment, shared with the caller's own
	// replies; nil makes one for the job's PR.
	Tracker *Tracker
	// CIWorkflow is the failing workflow (ID or file name) the caller will
	// dispatch on a proposal's branch with ProveCI; "" when it will not,
	// and the PR's CI section says why.
	CIWorkflow string
}

// Result is what publishing did.
type Result struct {
	// Status is the action's status output.
	Status Status
	// Action is one of the Action* constants.
	Action string
	// Reason explains Status and Action in one sentence.
	Reason   string
	PRNumber int
	PRURL    string
	Branch   string
	Commit   string
	// CommentURL is the tracking comment, when one was written.
	CommentURL string
	Size       Size
	Attempt    int
	// CIWorkflow is the workflow to dispatch on Branch (ProveCI), "" when
	// none is known.
	CIWorkflow string
	// Refusal is set when GitHub refused a write for a reason a maintainer
	// can change (Status failed): what to change, and where.
	Refusal *Refusal
	// Recovered: the PR was opened for a validated commit an earlier run
	// left on the fix branch; no model ran for it.
	Recovered bool
	// BeforeModel: Precheck found the refusal before any model call.
	BeforeModel bool
}

type publisher struct {
	gh      GitHub
	b       *bundle.Bundle
	job     *route.Job
	cfg     *config.Config
	log     io.Writer
	tracker *Tracker
	// ciWorkflow: Request.CIWorkflow.
	ciWorkflow string
}

// Publish writes the bundle to GitHub as the job's write policy allows. A
// bundle the policy refuses gives an error wrapping ErrRefused and writes
// nothing. API failures are errors too, with a Result of status failed that
// keeps what was written (the branch and commit of a fix whose PR could not
// be opened) and, for a refusal a maintainer can fix, its Refusal; every
// other outcome (skips, head moved, no validated fix) is a Result.
func Publish(ctx context.Context, gh GitHub, req Request) (*Result, error) {
	res, err := publish(ctx, gh, req)
	if err == nil {
		if res != nil && req.Log != nil {
			fmt.Fprintf(req.Log, "publish: %s (%s): %s\n", res.Status, res.Action, res.Reason)
		}
		return res, nil
	}
	if res == nil {
		res = &Result{Status: StatusFailed, Action: ActionFailed}
	}
	res.Status = StatusFailed
	if req.Config != nil {
		// The branch the failed write was for (the ruleset advice).
		branch := res.Branch
		if branch == "" && req.Job != nil && req.Bundle != nil && req.Job.Write == route.WritePropose {
			branch = FixBranch(req.Config.BranchPrefix, Key(req.Job.Branch, req.Bundle))
		}
		res.Refusal = Explain(err, req.Config, branch)
	}
	res.Reason = failureReason(res, err)
	if req.Log != nil {
		fmt.Fprintf(req.Log, "publish: %s (%s): %s\n", res.Status, res.Action, res.Reason)
	}
	return res, err
}

// failureReason says what failed, what GitHub answered and what to change,
// and where the validated fix is when it was committed.
func failureReason(res *Result, err error) string {
	var w strings.Builder
	if res.Refusal != nil {
		w.WriteString(res.Refusal.Line())
	} else {
		w.WriteString(err.Error())
	}
	if res.Branch != "" && res.Commit != "" {
		fmt.Fprintf(&w, " The validated fix is committed on branch `%s` (%s): once this is fixed, rerun the job, and it opens the "+
			"pull request for that commit without calling the model again.", res.Branch, short(res.Commit))
	}
	return w.String()
}

func publish(ctx context.Context, gh GitHub, req Request) (*Result, error) {
	b, job, cfg := req.Bundle, req.Job, req.Config
	if b == nil || job == nil || cfg == nil {
		return nil, errors.New("publish: bundle, job and config are required")
	}
	p := &publisher{gh: gh, b: b, job: job, cfg: cfg, log: req.Log, tracker: req.Tracker, ciWorkflow: req.CIWorkflow}
	if p.tracker == nil {
		p.tracker = &Tracker{GH: gh, Owner: job.Owner, Repo: job.Repo, PR: job.PR}
	}
	if p.log == nil {
		p.log = io.Discard
	}
	size, err := Check(b, cfg)
	if errors.Is(err, ErrRefused) {
		return &Result{Status: StatusFailed, Action: ActionRefused, Reason: err.Error()}, err
	}
	writes := job.Write != route.WriteNone && !b.ReadOnly()
	if writes && len(b.Files) > 0 && job.HeadSHA != "" && b.BaseSHA != job.HeadSHA {
		err := fmt.Errorf("%w: the bundle was made at commit %s but the failure is at %s", ErrRefused, orNone(b.BaseSHA), job.HeadSHA)
		return &Result{Status: StatusFailed, Action: ActionRefused, Reason: err.Error()}, err
	}
	commits := !errors.Is(err, ErrTooLarge) && len(b.Files) > 0 && b.Status != bundle.StatusNotReproduced && (job.Write == route.WritePush && fixed(b) ||
		job.Write == route.WritePropose && (fixed(b) || cfg.OnFailure == config.OnFailureDraft))
	if writes && commits {
		if verr := verifyFiles(ctx, gh, job.Owner, job.Repo, b); verr != nil {
			if errors.Is(verr, ErrRefused) {
				return &Result{Status: StatusFailed, Action: ActionRefused, Reason: verr.Error()}, verr
			}
			return nil, verr
		}
	}
	var res *Result
	switch {
	case !writes:
		res, err = p.explain(ctx)
	case b.Status == bundle.StatusNothingToFix:
		res, err = p.note(ctx, StatusOf(b.Status, false), ActionSkipped, fmt.Sprintf("the test command passes at %s: nothing to fix (a flaky test?)", short(b.BaseSHA)))
	case b.Status == bundle.StatusNotReproduced:
		res, err = p.notReproduced(ctx)
	case errors.Is(err, ErrTooLarge):
		res, err = p.noFix(ctx, ActionTooLarge, err.Error(), false)
	case !fixed(b):
		res, err = p.noFix(ctx, ActionNoFixFound, whyStopped(b), true)
	case job.Write == route.WriteComment:
		res, err = p.commentFix(ctx)
	case job.Write == route.WritePush && job.Iterate:
		res, err = p.iterate(ctx)
	case job.Write == route.WritePush:
		res, err = p.push(ctx)
	case job.Write == route.WritePropose:
		res, err = p.propose(ctx, false, "")
	default:
		return nil, fmt.Errorf("publish: unknown write policy %q", job.Write)
	}
	if errors.Is(err, ghapi.ErrTreeMismatch) {
		// The files would publish another tree than the one validated:
		// nothing was committed.
		err = fmt.Errorf("%w: the published tree would not be the validated one: %v", ErrRefused, err)
		return &Result{Status: StatusFailed, Action: ActionRefused, Reason: err.Error()}, err
	}
	if res != nil {
		res.Size = size
	}
	return res, err
}

func (p *publisher) logf(format string, args ...any) { fmt.Fprintf(p.log, format+"\n", args...) }

// fixed: validated by the harness, with a change.
func fixed(b *bundle.Bundle) bool {
	return b.Status == bundle.StatusFixed && b.Validated() && len(b.Files) > 0
}

// whyStopped says in one sentence why a run has no validated fix.
func whyStopped(b *bundle.Bundle) string {
	switch {
	case b.Status == bundle.StatusCancelled:
		return "the run was cancelled before it finished"
	case b.Status == bundle.StatusValidationFailed || (len(b.Validation) > 0 && !b.Validated()):
		var failed []string
		for _, c := range b.Validation {
			if !c.Passed {
				failed = append(failed, fmt.Sprintf("%s (exit %d)", c.Name, c.ExitCode))
			}
		}
		return "the harness's validation failed: " + strings.Join(failed, ", ")
	case b.Run.StoppedEarly():
		return fmt.Sprintf("the run stopped before a validated fix (%s): %s", b.Run.StopReason, b.Run.Detail)
	case len(b.Files) == 0:
		return "the model made no change"
	}
	return "the change was not validated"
}

// explain posts the diagnosis on the PR, if there is one.
func (p *publisher) explain(ctx context.Context) (*Result, error) {
	status := StatusOf(p.b.Status, false)
	if p.job.PR == 0 {
		return &Result{Status: status, Action: ActionNone, Reason: "no pull request to comment on: the explanation is in the job summary"}, nil
	}
	c, err := p.tracker.Post(ctx, p.header(true)+report.Body(p.b, report.Options{}))
	if err != nil {
		return nil, err
	}
	return &Result{Status: status, Action: ActionCommented, CommentURL: c.HTMLURL, PRNumber: p.job.PR, PRURL: p.job.PRURL,
		Reason: "diagnosis posted on #" + fmt.Sprint(p.job.PR)}, nil
}

// notReproduced posts the report of a failure that did not reproduce on
// the PR thread (if any): which tests CI saw fail, that they pass here, what
// this machine is. No branch, no PR: nothing can be proven.
func (p *publisher) notReproduced(ctx context.Context) (*Result, error) {
	why := report.Why(p.b)
	res := &Result{Status: StatusNotReproduced, Action: ActionNotReproduced, Reason: why, PRNumber: p.job.PR, PRURL: p.job.PRURL}
	if p.job.PR == 0 {
		return res, nil
	}
	c, err := p.tracker.Post(ctx, p.header(false)+report.Body(p.b, report.Options{}))
	if err != nil {
		return nil, err
	}
	res.CommentURL = c.HTMLURL
	return res, nil
}

// note ends without a change: a line on the tracking comment, if any PR.
func (p *publisher) note(ctx context.Context, status Status, action, why string) (*Result, error) {
	res := &Result{Status: status, Action: action, Reason: why, PRNumber: p.job.PR, PRURL: p.job.PRURL}
	if p.job.PR == 0 {
		return res, nil
	}
	c, err := p.tracker.Post(ctx, p.header(false)+"**"+sentence(why)+"**\n")
	if err != nil {
		return nil, err
	}
	res.CommentURL = c.HTMLURL
	return res, nil
}

// noFix reports a run without a validated fix: a comment (default) or, when
// the policy says so and draftOK, a draft PR, with what was tried, the diff
// so far and why it stopped.
func (p *publisher) noFix(ctx context.Context, action, why string, draftOK bool) (*Result, error) {
	if draftOK && p.cfg.OnFailure == config.OnFailureDraft && p.job.Write == route.WritePropose && len(p.b.Files) > 0 {
		return p.propose(ctx, true, why)
	}
	res := &Result{Status: StatusOf(p.b.Status, false), Action: action, Reason: why, PRNumber: p.job.PR, PRURL: p.job.PRURL}
	if p.job.PR == 0 {
		res.Reason += "; no pull request to comment on: the report is in the job summary"
		return res, nil
	}
	body := p.header(true) + "**No validated fix: " + why + ".** Nothing was pushed.\n\n"
	c, err := p.tracker.Post(ctx, withDiff(body+report.Body(p.b, report.Options{Headline: "no validated fix"}), p.b.Diff, "Diff so far (not validated)"))
	if err != nil {
		return nil, err
	}
	res.Action, res.CommentURL = ActionCommented, c.HTMLURL
	return res, nil
}

// commentFix posts a validated fix as a comment (fork heads: mini-agent
// never writes to forks).
func (p *publisher) commentFix(ctx context.Context) (*Result, error) {
	res := &Result{Status: StatusOf(p.b.Status, true), Action: ActionNone, PRNumber: p.job.PR, PRURL: p.job.PRURL,
		Reason: "validated fix for a fork head; no pull request to comment on: the diff is in the job summary"}
	if p.job.PR == 0 {
		return res, nil
	}
	body := p.header(true) + "**Validated fix.** The head is in a fork, so mini-agent does not push; apply the diff below " +
		"(`git apply`) or allow edits from maintainers and push it yourself.\n\n"
	c, err := p.tracker.Post(ctx, withDiff(body+report.Body(p.b, report.Options{}), p.b.Diff, "The fix (validated)"))
	if err != nil {
		return nil, err
	}
	res.Action, res.CommentURL, res.Reason = ActionCommented, c.HTMLURL, fmt.Sprintf("validated fix posted as a comment on #%d (fork head)", p.job.PR)
	return res, nil
}

// header starts every tracking comment: what triggered the run and the
// policy; withReport: the report that follows says the policy itself.
func (p *publisher) header(withReport bool) string {
	var w strings.Builder
	fmt.Fprintf(&w, "**mini-agent** · %s\n\n", p.job.Trigger)
	// The report states the write policy itself: say it once.
	if p.job.Reason != "" && !(withReport && p.b.Extra.Policy != "") {
		fmt.Fprintf(&w, "Write policy: **%s**. %s\n\n", p.job.Write, sentence(p.job.Reason))
	}
	return w.String()
}

func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return orNone(sha)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
