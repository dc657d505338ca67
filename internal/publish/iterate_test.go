package publish_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

// iterateJob is `/mini-agent fix` on mini-agent's PR n (branch at head).
func iterateJob(n int, branch, head string) *route.Job {
	return &route.Job{Mode: agent.ModeFix, Write: route.WritePush, Iterate: true, Reason: "own PR", Trigger: "`/mini-agent fix` by @alice on #" + itoa(n),
		Owner: "octo-org", Repo: "hello-world", DefaultBranch: "main", HeadSHA: head, Branch: branch, HeadRepo: repo, PR: n,
		PRURL: "https://github.com/octo-org/hello-world/pull/" + itoa(n), CommentID: 1}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestIterateCommitsOnTheOwnBranchAndKeepsAChangelog: a second round on
// mini-agent's PR commits on its branch (parent: the PR's head), rewrites
// the body with the new report, the attempts changelog and the CI section,
// and counts the attempt; the workflow the proposal dispatched is kept.
func TestIterateCommitsOnTheOwnBranchAndKeepsAChangelog(t *testing.T) {
	t.Parallel()
	f, req := proposed(t, dispatchable)
	head := f.s.Head(repo, req.Branch)
	b := makeBundle(t, head, edit{write: map[string]string{"extra.go": "package hello\n\n// Extra is what the reviewer asked for.\nfunc Extra() {}\n"}})
	b.Report.Summary = "Added Extra as asked in review."
	for round := 2; round <= 3; round++ {
		job := iterateJob(req.PR, req.Branch, head)
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
		if err != nil || res.Action != publish.ActionPRUpdated || res.Attempt != round || res.CIWorkflow != "159038" {
			t.Fatalf("round %d: %+v %v", round, res, err)
		}
		if got := f.s.Parents(repo, res.Commit); len(got) != 1 || got[0] != head {
			t.Errorf("round %d: the commit's parent is %v, want the PR head %s", round, got, head)
		}
		head = res.Commit
		b = makeBundle(t, head, edit{write: map[string]string{"extra.go": "package hello\n\n// Extra is what the reviewer asked for.\nfunc Extra() {}\n"}})
		b.Report.Summary = "Added Extra as asked in review."
	}
	body := prBody(f, req.PR)
	contains(t, "PR body", body, "Added Extra as asked in review.", "### Attempts", "- attempt 1: the proposal",
		"- attempt 2: `/mini-agent fix` by @alice", "- attempt 3: `/mini-agent fix` by @alice", "attempts=3 ", " ci=pending ci-workflow=159038")
	if strings.Count(body, "mini-agent:state") != 1 || strings.Count(body, "changelog-begin") != 1 {
		t.Errorf("duplicated sections:\n%s", body)
	}
	if len(f.s.Pulls(repo)) != 2 {
		t.Errorf("a new PR was opened")
	}
	// max-attempts (3) reached: the next round writes nothing.
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: iterateJob(req.PR, req.Branch, head), Config: config.Default()})
	if err != nil || res.Action != publish.ActionSkipped || f.s.Count("POST", "/repos/"+repo+"/git/commits") != 3 {
		t.Errorf("over max-attempts: %+v %v", res, err)
	}
}

// TestIterateRefusesAPRThatIsNotMiniAgents: no state marker, no write.
func TestIterateRefusesAPRThatIsNotMiniAgents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	job := iterateJob(7, "feature/parser", f.head)
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: makeBundle(t, f.head, theFix), Job: job, Config: config.Default()})
	if !errors.Is(err, publish.ErrRefused) || res == nil || res.Action != publish.ActionRefused {
		t.Fatalf("%+v %v", res, err)
	}
	if n := f.s.Count("POST", "/repos/"+repo+"/git/"); n != 0 {
		t.Errorf("%d git writes", n)
	}
}

// TestIterateStopsWhenTheBranchMoved: someone pushed on mini-agent's
// branch since the checkout: nothing is committed over it.
func TestIterateStopsWhenTheBranchMoved(t *testing.T) {
	t.Parallel()
	f, req := proposed(t, dispatchable)
	head := f.s.Head(repo, req.Branch)
	b := makeBundle(t, head, edit{write: map[string]string{"extra.go": "package hello\n"}})
	moved := f.s.Push(repo, req.Branch, map[string]string{"other.go": "package hello\n"})
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: iterateJob(req.PR, req.Branch, head), Config: config.Default()})
	if err != nil || res.Action != publish.ActionHeadMoved || f.s.Head(repo, req.Branch) != moved {
		t.Fatalf("%+v %v", res, err)
	}
	if strings.Contains(prBody(f, req.PR), "### Attempts") {
		t.Error("the body was rewritten for a commit that was not made")
	}
}
