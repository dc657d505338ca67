package publish_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

// stubOf is what the action knows of a failure before the model runs: its
// signature, the failing commit and the publishing context.
func stubOf(b *bundle.Bundle) *bundle.Bundle {
	return &bundle.Bundle{Signature: b.Signature, BaseSHA: b.BaseSHA, Command: b.Command, Extra: b.Extra, Branch: b.Branch}
}

// writesSince are the write requests after the first n recorded.
func writesSince(s *ghtest.Server, n int) []string {
	var out []string
	for _, r := range s.Requests()[n:] {
		if r.Method != http.MethodGet {
			out = append(out, r.Method+" "+strings.TrimPrefix(r.Path, "/repos/"+repo))
		}
	}
	return out
}

// TestRefusedPRIsPublishedLaterWithoutTheModel: each refusal GitHub gives
// after the fix is committed (the Actions PR setting off, a token without
// pull-requests: write, a secondary rate limit that does not clear) ends
// in a failed Result with the branch and commit and what to change; the
// fix branch holds the validated commit with its trailers; once the cause
// is gone, Precheck opens the PR for that very commit (no new commit: no
// model run needed) with the earlier run's report.
func TestRefusedPRIsPublishedLaterWithoutTheModel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		refuse  func(f *fixture)
		allow   func(f *fixture)
		kind    ghapi.Refusal
		fix     []string
		faulted bool
	}{
		{name: "Actions may not create PRs",
			refuse: func(f *fixture) { f.s.SetActionsCanCreatePRs(repo, false) },
			allow:  func(f *fixture) { f.s.SetActionsCanCreatePRs(repo, true) },
			kind:   ghapi.RefusalActionsCannotCreatePRs,
			fix:    []string{"403: GitHub Actions is not permitted to create or approve pull requests", ghapi.SettingActionsCreatePRs}},
		{name: "no pull-requests: write",
			refuse: func(f *fixture) { f.s.SetTokenPermissions(map[string]string{"contents": "write"}) },
			allow:  func(f *fixture) { f.s.SetTokenPermissions(nil) },
			kind:   ghapi.RefusalTokenPermission,
			fix:    []string{"403: Resource not accessible by integration", "add `pull-requests: write` to the workflow's `permissions:` block"}},
		{name: "secondary rate limit",
			// The retry transport tries 4 times; the limit outlasts them once.
			refuse: func(f *fixture) {
				ft := ghtest.SecondaryRateLimit(http.MethodPost, "/repos/"+repo+"/pulls")
				ft.Times = 4
				f.s.Inject(ft)
			},
			allow: func(f *fixture) {},
			kind:  ghapi.RefusalSecondaryRateLimit, faulted: true,
			fix: []string{"403: You have exceeded a secondary rate limit", "rerun the job in a few minutes"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			b, job := makeBundle(t, f.head, theFix), f.job(route.WritePropose)
			job.RunURL = "https://github.com/octo-org/hello-world/actions/runs/4242"
			publish.Annotate(b, job)
			tt.refuse(f)
			res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
			branch := fixBranch(b, job)
			if err == nil || res == nil || res.Status != publish.StatusFailed || res.Branch != branch || res.Commit == "" || res.Refusal == nil {
				t.Fatalf("Publish = %+v, %v", res, err)
			}
			if res.Refusal.Kind != tt.kind {
				t.Errorf("refusal %q, want %q", res.Refusal.Kind, tt.kind)
			}
			contains(t, "reason", res.Reason, append(tt.fix, "committed on branch `"+branch+"`", "without calling the model again")...)
			if f.s.Head(repo, branch) != res.Commit || len(f.s.Pulls(repo)) != 1 {
				t.Fatalf("branch head %s, %d PRs", f.s.Head(repo, branch), len(f.s.Pulls(repo)))
			}
			// The same cause, the next run: Precheck tries the PR again, fails
			// again, and never asks for a model run (no commit).
			if !tt.faulted {
				before := len(f.s.Requests())
				res2, err := publish.Precheck(t.Context(), f.gh, job, config.Default(), stubOf(b), nil)
				if err == nil || res2 == nil || res2.Status != publish.StatusFailed || res2.Refusal == nil || res2.Branch != branch {
					t.Fatalf("Precheck, still refused = %+v, %v", res2, err)
				}
				if w := writesSince(f.s, before); len(w) != 1 || w[0] != "POST /pulls" {
					t.Errorf("writes = %q, want the PR's create only", w)
				}
			}
			tt.allow(f)
			before := len(f.s.Requests())
			got, err := publish.Precheck(t.Context(), f.gh, job, config.Default(), stubOf(b), nil)
			if err != nil || got == nil || got.Status != publish.StatusFixed || !got.Recovered || got.PRNumber == 0 || got.Commit != res.Commit {
				t.Fatalf("Precheck = %+v, %v", got, err)
			}
			for _, w := range writesSince(f.s, before) {
				if strings.HasPrefix(w, "POST /git/") || strings.HasPrefix(w, "PATCH /git/") {
					t.Errorf("the recovery wrote git data: %s", w)
				}
			}
			pulls := f.s.Pulls(repo)
			pr := pulls[len(pulls)-1]
			if pr.Head != branch || pr.Base != "feature/parser" || f.s.Head(repo, branch) != res.Commit {
				t.Fatalf("PR %+v; branch at %s", pr, f.s.Head(repo, branch))
			}
			contains(t, "PR body", pr.Body, "without calling the model again", "actions/runs/4242", "Parse handles empty input",
				"### Proof", "attempts=1 failing-sha="+f.head, "<!-- mini-agent:signature="+b.Signature)
		})
	}
}

// TestRefusalsBeforeTheModel: a read-only token and a ruleset restricting
// the fix branch's creation are found before any model call, with what to
// change; a ruleset the token's actor may bypass is no refusal.
func TestRefusalsBeforeTheModel(t *testing.T) {
	t.Parallel()
	t.Run("read-only token", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		f.s.SetTokenPermissions(map[string]string{"contents": "read", "pull-requests": "write"})
		b, job := makeBundle(t, f.head, theFix), f.job(route.WritePropose)
		publish.Annotate(b, job)
		for _, stub := range []*bundle.Bundle{stubOf(b), {BaseSHA: f.head, Extra: b.Extra}} { // a known failure, and one the test command will find
			got, err := publish.Precheck(t.Context(), f.gh, job, config.Default(), stub, nil)
			if err != nil || got == nil || got.Status != publish.StatusFailed || got.Refusal == nil || got.Refusal.Kind != ghapi.RefusalTokenPermission {
				t.Fatalf("Precheck = %+v, %v", got, err)
			}
			contains(t, "reason", got.Reason, "did not run the model", "add `contents: write` to the workflow's `permissions:` block")
		}
		// Published anyway (the two-job recipe's publish): the same refusal.
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
		if err == nil || res.Refusal == nil || res.Refusal.Kind != ghapi.RefusalTokenPermission || res.Branch != "" {
			t.Errorf("Publish = %+v, %v", res, err)
		}
	})
	t.Run("ruleset", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		f.s.AddRuleset(repo, ghtest.Ruleset{ID: 9, Name: "protect everything", Include: []string{"~ALL"}, Rules: []string{"creation", "deletion"}})
		b, job := makeBundle(t, f.head, theFix), f.job(route.WritePropose)
		publish.Annotate(b, job)
		got, err := publish.Precheck(t.Context(), f.gh, job, config.Default(), stubOf(b), nil)
		if err != nil || got == nil || got.Refusal == nil || got.Refusal.Kind != ghapi.RefusalRuleset {
			t.Fatalf("Precheck = %+v, %v", got, err)
		}
		contains(t, "reason", got.Reason, `"protect everything"`, "bypass list", "set `branch-prefix:` in .github/mini-agent.yml", "creation rule")
		// Without the pre-check, GitHub's own 422 says the same.
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
		if !errors.Is(err, ghapi.ErrUnprocessable) || res.Refusal == nil || res.Refusal.Kind != ghapi.RefusalRuleset || res.Branch != "" {
			t.Fatalf("Publish = %+v, %v", res, err)
		}
		contains(t, "reason", res.Reason, "422: Repository rule violations found", "Cannot create ref due to creations being restricted.",
			"bypass list", "`branch-prefix:`")
	})
	t.Run("bypassed ruleset", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		f.s.AddRuleset(repo, ghtest.Ruleset{ID: 9, Name: "bots only", Include: []string{"refs/heads/mini-agent/**"}, Rules: []string{"creation"}, Bypass: "always"})
		b, job := makeBundle(t, f.head, theFix), f.job(route.WritePropose)
		publish.Annotate(b, job)
		if got, err := publish.Precheck(t.Context(), f.gh, job, config.Default(), stubOf(b), nil); got != nil || err != nil {
			t.Fatalf("Precheck = %+v, %v", got, err)
		}
	})
}

// TestAttemptsThatFailedToPublishCount: an attempt whose PR was refused
// counts toward max-attempts through its commit: the next attempt is 2,
// and at max-attempts 1 a new run for the same failure is skipped before
// the model (here: at another commit, so no validated fix to reuse).
func TestAttemptsThatFailedToPublishCount(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b, job := makeBundle(t, f.head, theFix), f.job(route.WritePropose)
	publish.Annotate(b, job)
	f.s.SetActionsCanCreatePRs(repo, false)
	if _, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()}); err == nil {
		t.Fatal("the PR was opened")
	}
	one := cfg(t, "max-attempts: 1\n")
	later := f.s.Push(repo, "feature/parser", map[string]string{"NOTES.md": "more\n"})
	job2 := f.job(route.WritePropose)
	job2.HeadSHA = later
	stub := stubOf(b)
	stub.BaseSHA = later
	got, err := publish.Precheck(t.Context(), f.gh, job2, one, stub, nil)
	if err != nil || got == nil || got.Status != publish.StatusSkipped || !strings.Contains(got.Reason, "already attempted 1 times (max-attempts 1)") {
		t.Fatalf("Precheck at max-attempts 1 = %+v, %v", got, err)
	}
	// With the default (3), a new attempt is made, numbered 2.
	f.s.SetActionsCanCreatePRs(repo, true)
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
	if err != nil || res.Attempt != 2 {
		t.Fatalf("Publish = %+v, %v", res, err)
	}
	pulls := f.s.Pulls(repo)
	contains(t, "PR body", pulls[len(pulls)-1].Body, "attempts=2")
}
