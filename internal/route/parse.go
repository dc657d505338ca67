package route

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/config"
)

// CommitTrailer ends every commit message mini-agent writes; a run whose
// head commit carries it is never fixed again (loop guard).
const CommitTrailer = "Mini-Agent-Signature:"

// maxPayloadBytes bounds the event file (GitHub caps webhook payloads at 25 MB).
const maxPayloadBytes = 25 << 20

// kinds of trigger
const (
	kindRun         = "workflow_run"
	kindDispatchRun = "dispatch-run"
	kindPR          = "pr"        // a PR fetched by number (comment command, dispatch)
	kindInJobPR     = "in-job"    // pull_request, the PR is in the payload
	kindBranch      = "branch"    // push, or dispatch without a target
	kindFollowUp    = "follow-up" // a run completed on mini-agent's own branch
	kindRefresh     = "refresh"   // a scheduled run: CI sections only
	kindFlaky       = "flaky"     // mode flaky: the flaky-test scan and repair
)

// Trigger is an event that passed the payload checks. Authorize and Resolve
// finish the decision.
type Trigger struct {
	kind string
	// DefaultBranch is the repository's, from the payload ("" if absent).
	DefaultBranch string
	owner, repo   string
	describe      string

	mode       agent.Mode
	modeReason string // why the mode is explain before labels, if it is

	// workflow run
	runID            int64
	workflowID       int64
	conclusion       string
	runURL, workflow string
	headSHA, branch  string
	headRepo         string
	prNumbers        []int
	headMessage      string // the run's head commit message (workflow_run)
	fromRun          bool   // a workflow_run event: follow-up or fix, once the policy's prefix is known
	closed           bool   // the comment's pull request is closed (issue_comment)
	source           Source
	failureLog       string
	comment          *commentInfo
	instructions     string
	help             bool
	unknownVerb      string
	prNumber         int
	prURL            string
}

type commentInfo struct {
	id          int64
	login       string
	association string
	bot         bool
}

type payload struct {
	Action     string `json:"action"`
	Repository struct {
		ID            int64  `json:"id"`
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
	WorkflowRun *struct {
		ID             int64     `json:"id"`
		WorkflowID     int64     `json:"workflow_id"`
		Name           string    `json:"name"`
		HeadBranch     string    `json:"head_branch"`
		HeadSHA        string    `json:"head_sha"`
		Conclusion     string    `json:"conclusion"`
		HTMLURL        string    `json:"html_url"`
		PullRequests   []prRef   `json:"pull_requests"`
		HeadRepository *repoRef  `json:"head_repository"`
		Repository     repoRef   `json:"repository"`
		HeadCommit     *commitMs `json:"head_commit"`
	} `json:"workflow_run"`
	Issue *struct {
		Number      int             `json:"number"`
		State       string          `json:"state"`
		HTMLURL     string          `json:"html_url"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Comment *struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
		User struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
		AuthorAssociation string `json:"author_association"`
	} `json:"comment"`
	PullRequest *struct {
		Number  int    `json:"number"`
		HTMLURL string `json:"html_url"`
		Head    struct {
			Ref  string   `json:"ref"`
			SHA  string   `json:"sha"`
			Repo *repoRef `json:"repo"`
		} `json:"head"`
		Base struct {
			Repo repoRef `json:"repo"`
		} `json:"base"`
	} `json:"pull_request"`
	Inputs     map[string]any `json:"inputs"`
	Ref        string         `json:"ref"`
	After      string         `json:"after"`
	Deleted    bool           `json:"deleted"`
	HeadCommit *commitMs      `json:"head_commit"`
}

// prRef is an entry of a run's pull_requests: GitHub lists the PRs whose
// head matches the run's, which may belong to another repository (a fork's
// own PRs): only base tells.
type prRef struct {
	Number int `json:"number"`
	Base   *struct {
		Repo *struct {
			ID   int64  `json:"id"`
			URL  string `json:"url"`
			Name string `json:"name"`
		} `json:"repo"`
	} `json:"base"`
}

// inRepo reports whether the PR's base is the repository owner/name (id
// when both are known, else the API URL); an entry without a base is
// taken to be (the number is checked against the branch when read).
func (r prRef) inRepo(id int64, owner, name string) bool {
	if r.Base == nil || r.Base.Repo == nil {
		return true
	}
	b := r.Base.Repo
	switch {
	case id != 0 && b.ID != 0:
		return b.ID == id
	case b.URL != "":
		return strings.HasSuffix(strings.ToLower(b.URL), strings.ToLower("/repos/"+owner+"/"+name))
	case b.Name != "":
		return strings.EqualFold(b.Name, name)
	}
	return true
}

type repoRef struct {
	FullName string `json:"full_name"`
}

// deletedFork stands for a head repository GitHub no longer names (a
// deleted fork, a null head_repository): it is never the base repository.
const deletedFork = "(deleted fork)"

// knownHeadRepo is a run's head repository, deletedFork when the payload
// has none: an unknown head must be treated as a fork, not as the base.
func knownHeadRepo(r *repoRef) string {
	if r == nil || r.FullName == "" {
		return deletedFork
	}
	return r.FullName
}

type commitMs struct {
	Message string `json:"message"`
}

// Parse runs the checks the payload alone decides. It returns a Trigger to
// continue with, or a skip decision (Trigger nil). The error is for an
// unreadable payload or a bad mode input.
func Parse(ev Event) (*Trigger, Decision, error) {
	mode, err := parseMode(ev.Mode)
	if err != nil {
		return nil, Decision{}, err
	}
	var p payload
	if len(ev.Payload) > maxPayloadBytes {
		return nil, Decision{}, fmt.Errorf("%w: event payload larger than %d bytes", ErrEvent, maxPayloadBytes)
	}
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		return nil, Decision{}, fmt.Errorf("%w: %s payload: %v", ErrEvent, ev.Name, err)
	}
	full := p.Repository.FullName
	if full == "" {
		full = ev.Repo
	}
	owner, repo, ok := strings.Cut(full, "/")
	if !ok || owner == "" || repo == "" {
		return nil, Decision{}, fmt.Errorf("%w: no repository in the %s payload or GITHUB_REPOSITORY", ErrEvent, ev.Name)
	}
	t := &Trigger{owner: owner, repo: repo, DefaultBranch: p.Repository.DefaultBranch, mode: agent.ModeFix,
		source: SourceTest, failureLog: ev.FailureLog}
	if ev.FailureLog != "" {
		t.source = SourceLog
	}
	if mode == agent.ModeExplain {
		t.mode, t.modeReason = agent.ModeExplain, "the mode input is explain"
	}

	if isFlakyMode(ev.Mode) {
		switch ev.Name {
		case "schedule", "workflow_dispatch":
			t.kind, t.describe = kindFlaky, fmt.Sprintf("%s: scan the CI history for flaky tests, prove and fix them", ev.Name)
			return t, Decision{}, nil
		case "":
			return nil, Decision{}, fmt.Errorf("%w: GITHUB_EVENT_NAME is empty", ErrEvent)
		}
		return nil, skip(0, "mode flaky runs on schedule or workflow_dispatch only, not on %s: use a separate workflow with `on: schedule` (see docs/flaky.md, \"Flaky tests on a schedule\")", ev.Name), nil
	}
	var d Decision
	switch ev.Name {
	case "workflow_run":
		d, err = t.parseRun(&p)
	case "issue_comment":
		d, err = t.parseComment(&p)
	case "workflow_dispatch":
		d, err = t.parseDispatch(&p, ev)
	case "push":
		d, err = t.parsePush(&p, ev)
	case "pull_request":
		d, err = t.parsePullRequest(&p)
	case "schedule":
		// Nothing to fix: a scheduled run refreshes the CI sections of
		// mini-agent's open PRs (GitHub may not deliver their completions).
		t.kind, t.describe = kindRefresh, "scheduled run: refresh the CI of mini-agent's open pull requests"
	case "pull_request_target":
		return nil, skip(0, "pull_request_target is not supported: it would run the PR's code with a write token; use the workflow_run fixer (see the README)"), nil
	case "":
		return nil, Decision{}, fmt.Errorf("%w: GITHUB_EVENT_NAME is empty", ErrEvent)
	default:
		return nil, skip(0, "event %q is not one mini-agent handles (workflow_run, issue_comment, workflow_dispatch, push, pull_request, schedule)", ev.Name), nil
	}
	if err != nil || d.Reason != "" {
		return nil, d, err
	}
	return t, Decision{}, nil
}

func parseMode(m string) (agent.Mode, error) {
	switch strings.ToLower(strings.TrimSpace(m)) {
	case "", "auto", "fix", "flaky":
		return agent.ModeFix, nil
	case "explain":
		return agent.ModeExplain, nil
	}
	return "", fmt.Errorf("%w: mode input %q is not auto, fix, explain or flaky", ErrEvent, m)
}

// isFlakyMode reports the mode input `flaky`.
func isFlakyMode(m string) bool { return strings.EqualFold(strings.TrimSpace(m), "flaky") }

func (t *Trigger) parseRun(p *payload) (Decision, error) {
	r := p.WorkflowRun
	if r == nil {
		return Decision{}, fmt.Errorf("%w: workflow_run payload without workflow_run", ErrEvent)
	}
	if p.Action != "completed" {
		return skip(0, "workflow run %d is %s, not completed", r.ID, orDash(p.Action)), nil
	}
	head := knownHeadRepo(r.HeadRepository)
	t.fromRun, t.kind, t.source = true, kindRun, SourceRun
	t.runID, t.runURL, t.workflow, t.workflowID, t.conclusion = r.ID, r.HTMLURL, r.Name, r.WorkflowID, r.Conclusion
	t.headSHA, t.branch, t.headRepo, t.headMessage = r.HeadSHA, r.HeadBranch, head, commitMessage(r.HeadCommit)
	for _, pr := range r.PullRequests {
		if pr.inRepo(p.Repository.ID, t.owner, t.repo) {
			t.prNumbers = append(t.prNumbers, pr.Number)
		}
	}
	t.describe = fmt.Sprintf("workflow %q run %d failed on %s", r.Name, r.ID, r.HeadBranch)
	if t.ownBranchCandidate() {
		// Maybe CI on mini-agent's own branch (a run it dispatched, or its
		// commit): the PR it belongs to is updated, never fixed. Whether it
		// is depends on the policy's branch-prefix (Authorize): this repository's
		// branch with the default prefix, or whose head is mini-agent's commit.
		if r.Conclusion == "" {
			return skip(0, "workflow run %d on %s completed without a conclusion", r.ID, r.HeadBranch), nil
		}
		return Decision{}, nil
	}
	if d := conclusionSkip(r.ID, r.Conclusion); d.Reason != "" {
		return d, nil
	}
	if d := loopGuard(t.branch, config.DefaultBranchPrefix, t.headMessage); d.Reason != "" {
		return d, nil
	}
	return Decision{}, nil
}

// ownBranchCandidate: a run of this repository on a branch that looks like
// mini-agent's before the policy is read (the default prefix, or a head
// commit with mini-agent's trailer, whatever the prefix).
func (t *Trigger) ownBranchCandidate() bool {
	return !t.isFork() && (strings.HasPrefix(t.branch, config.DefaultBranchPrefix) || strings.Contains(t.headMessage, CommitTrailer))
}

// settleRun decides, once the policy's branch-prefix is known, whether a
// workflow_run is a follow-up on mini-agent's own branch (this repository,
// the prefix) or a failure to fix; "" to go on, else why it is refused.
func (t *Trigger) settleRun(prefix string) string {
	if !t.isFork() && t.branch != "" && strings.HasPrefix(t.branch, prefix) {
		t.kind = kindFollowUp
		t.describe = fmt.Sprintf("workflow %q run %d %s on mini-agent's branch %s", t.workflow, t.runID, t.conclusion, t.branch)
		return ""
	}
	if !t.ownBranchCandidate() {
		return ""
	}
	// Looked like mini-agent's branch, but is not under this policy.
	if d := conclusionSkip(t.runID, t.conclusion); d.Reason != "" {
		return fmt.Sprintf("branch %s does not have the policy's branch prefix %s, so it is not mini-agent's branch; %s", t.branch, prefix, d.Reason)
	}
	if d := loopGuard("", prefix, t.headMessage); d.Reason != "" {
		return d.Reason
	}
	return ""
}

// conclusionSkip says why a completed run is not fixed, "" for failures.
func conclusionSkip(id int64, conclusion string) Decision {
	switch conclusion {
	case "failure":
		return Decision{}
	case "cancelled":
		return skip(0, "workflow run %d was cancelled: nothing failed", id)
	case "action_required":
		return skip(0, "workflow run %d is waiting for approval (action_required): nothing ran", id)
	case "startup_failure":
		return skip(0, "workflow run %d failed to start (startup_failure): the workflow file is broken, not the code, and mini-agent never edits workflows", id)
	}
	return skip(0, "workflow run %d concluded %s: only failures are fixed", id, orDash(conclusion))
}

func loopGuard(branch, prefix, headMessage string) Decision {
	if branch != "" && strings.HasPrefix(branch, prefix) {
		return skip(0, "branch %s was made by mini-agent (prefix %s): not fixing its own branches (loop guard)", branch, prefix)
	}
	if strings.Contains(headMessage, CommitTrailer) {
		return skip(0, "the head commit was written by mini-agent (%s trailer): not fixing its own commit again (loop guard)", strings.TrimSuffix(CommitTrailer, ":"))
	}
	return Decision{}
}

func commitMessage(c *commitMs) string {
	if c == nil {
		return ""
	}
	return c.Message
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
