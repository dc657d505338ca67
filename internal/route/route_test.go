package route_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/route"
)

const (
	token    = "ghs_route_test"
	repoName = "octo-org/hello-world"
	// fixtureSHA is the head SHA written in the payload fixtures; tests
	// replace it with the fake repository's real head.
	fixtureSHA = "9f4c3a1e2b7d6c5f8e0a1b2c3d4e5f6a7b8c9d0e"
	runID      = 30433642
)

// world is a fake GitHub holding the repository the fixtures talk about:
// PR #7 from feature/parser, and run 30433642 that failed on it.
type world struct {
	s    *ghtest.Server
	gh   *ghapi.Client
	head string
	pr   int
}

type setup struct {
	labels     []string
	policy     string // .github/mini-agent.yml on main; "" = none
	forkPR     bool   // PR #7 comes from mallory/hello-world
	runJobs    []ghtest.Job
	runOutcome string
	prState    string
	// pushAfterRun moves the PR's branch after the run failed.
	pushAfterRun bool
}

func newWorld(t *testing.T, su setup) *world {
	t.Helper()
	s := ghtest.NewServer(t, token)
	files := map[string]string{"go.mod": "module hello\n", "parser.go": "package hello\n"}
	if su.policy != "" {
		files[config.DefaultPath] = su.policy
	}
	s.AddRepo(repoName, "main", files)
	head := s.Push(repoName, "feature/parser", map[string]string{"parser.go": "package hello // changed\n"})
	for range 6 {
		s.AddPR(repoName, ghtest.PR{Title: "an issue"})
	}
	pr := ghtest.PR{Title: "Handle empty input in the parser", Head: "feature/parser", Base: "main", Labels: su.labels, State: su.prState}
	if su.forkPR {
		pr.Head, pr.HeadRepo, pr.HeadSHA = "patch-1", "mallory/hello-world", head
	}
	n := s.AddPR(repoName, pr)
	if n != 7 {
		t.Fatalf("PR number %d, want 7", n)
	}
	jobs := su.runJobs
	if jobs == nil {
		jobs = []ghtest.Job{{ID: 501, Name: "test", FailedStep: "go test ./...", Log: "--- FAIL: TestParseEmpty (0.00s)\n"}}
	}
	s.AddRun(repoName, ghtest.Run{ID: runID, HeadBranch: "feature/parser", HeadSHA: head, PRs: []int{7}, Jobs: jobs, Conclusion: su.runOutcome})
	if su.pushAfterRun {
		s.Push(repoName, "feature/parser", map[string]string{"more.go": "package hello\n"})
	}
	gh, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return &world{s: s, gh: gh, head: head, pr: n}
}

func (w *world) router() *route.Router {
	return &route.Router{GitHub: w.gh, LoadConfig: func(ctx context.Context, defaultBranch string) (*config.Loaded, error) {
		return config.Load(ctx, w.gh, "octo-org", "hello-world", defaultBranch, "")
	}}
}

func (w *world) event(t *testing.T, name, fixture string) route.Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.ReplaceAll(string(b), fixtureSHA, w.head)
	return route.Event{Name: name, Payload: []byte(payload), Repo: repoName, SHA: w.head, Ref: "refs/heads/main"}
}

// wantFields fails t with a cmp diff when got differs from want in the
// named top-level fields; the other fields are not compared.
func wantFields(t *testing.T, got, want *route.Job, fields ...string) {
	t.Helper()
	keep := map[string]bool{}
	for _, f := range fields {
		keep[f] = true
	}
	topLevelOther := cmp.FilterPath(func(p cmp.Path) bool {
		for _, step := range p {
			if sf, ok := step.(cmp.StructField); ok {
				return !keep[sf.Name()]
			}
		}
		return false
	}, cmp.Ignore())
	if diff := cmp.Diff(want, got, topLevelOther); diff != "" {
		t.Errorf("job fields %v (-want +got):\n%s", fields, diff)
	}
}

func TestRouteEvents(t *testing.T) {
	t.Parallel()
	const allowBots = "allowed-bots: [\"renovate[bot]\"]\n"
	tests := []struct {
		name    string
		event   string
		fixture string
		setup   setup
		mode    string
		failLog string

		wantSkip   string // substring of the skip reason; "" = accepted
		wantStage  int    // routing stage reached (0 = no API request at all)
		wantMode   agent.Mode
		wantWrite  route.Write
		wantSource route.Source
		check      func(t *testing.T, j *route.Job)
	}{
		{name: "run failure", event: "workflow_run", fixture: "workflow_run_failure.json",
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePropose, wantSource: route.SourceRun,
			check: func(t *testing.T, j *route.Job) {
				wantFields(t, j, &route.Job{RunID: runID, PR: 7, Branch: "feature/parser", Workflow: "CI", WorkflowID: 159038, DefaultBranch: "main"},
					"RunID", "PR", "Branch", "Workflow", "WorkflowID", "DefaultBranch")
				if len(j.FailedJobs) != 1 || !strings.Contains(j.RunURL, "/actions/runs/30433642") {
					t.Errorf("job = %+v", j)
				}
			}},
		{name: "run cancelled", event: "workflow_run", fixture: "workflow_run_cancelled.json", wantSkip: "was cancelled"},
		{name: "run in progress", event: "workflow_run", fixture: "workflow_run_in_progress.json", wantSkip: "not completed"},
		{name: "run startup failure", event: "workflow_run", fixture: "workflow_run_startup_failure.json", wantSkip: "startup_failure"},
		{name: "run awaiting approval", event: "workflow_run", fixture: "workflow_run_action_required.json", wantSkip: "action_required"},
		{name: "run success", event: "workflow_run", fixture: "workflow_run_success.json", wantSkip: "concluded success"},
		// A run on mini-agent's own branch is a follow-up (its PR is updated),
		// never a fix; without an open PR there is nothing to update.
		{name: "run on own branch", event: "workflow_run", fixture: "workflow_run_own_branch.json", wantSkip: "no open pull request", wantStage: 2},
		// A head commit with mini-agent's trailer may be a custom-prefix branch
		// of mini-agent's (a follow-up) or its push on a PR's branch: the policy
		// tells; here the branch is not mini-agent's, so the loop guard holds.
		{name: "run on own commit", event: "workflow_run", fixture: "workflow_run_own_commit.json", wantSkip: "loop guard", wantStage: 1},
		// With branch-prefix feature/, feature/parser is mini-agent's branch: a
		// failure there updates its PR (a follow-up), never starts a fix.
		{name: "run on custom prefix", event: "workflow_run", fixture: "workflow_run_failure.json",
			setup: setup{policy: "branch-prefix: feature/\n"}, wantStage: 2, wantMode: agent.ModeExplain, wantWrite: route.WriteNone, wantSource: route.SourceRun,
			check: func(t *testing.T, j *route.Job) {
				wantFields(t, j, &route.Job{FollowUp: true, PR: 7, Conclusion: "failure"}, "FollowUp", "PR", "Conclusion")
			}},
		// GitHub lists in pull_requests the PRs whose head matches the run's,
		// including a fork's own PRs (base: the fork). #3 here is not this
		// repository's PR: the branch's PR (#7, from mallory:patch-1) is used.
		{name: "run from fork linked to the fork's own PR", event: "workflow_run", fixture: "workflow_run_fork_foreign_pr.json",
			setup:     setup{policy: "allow-forks: true\n", forkPR: true},
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WriteComment, wantSource: route.SourceRun,
			check: func(t *testing.T, j *route.Job) {
				wantFields(t, j, &route.Job{Fork: true, PR: 7}, "Fork", "PR")
			}},
		{name: "run from fork refused", event: "workflow_run", fixture: "workflow_run_fork.json",
			wantSkip: "fork mallory/hello-world", wantStage: 1},
		{name: "run from fork allowed", event: "workflow_run", fixture: "workflow_run_fork.json",
			setup:     setup{policy: "allow-forks: true\n", forkPR: true, labels: []string{"mini-agent:push"}},
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WriteComment, wantSource: route.SourceRun,
			check: func(t *testing.T, j *route.Job) {
				// The PR is found by head=mallory:patch-1 and the push label is not honoured.
				wantFields(t, j, &route.Job{Fork: true, PR: 7}, "Fork", "PR")
			}},
		// A run on main lists PR #7 because its head SHA matches (GitHub links
		// PRs by head SHA or branch): the label of a PR from another branch
		// must not let mini-agent commit on main.
		{name: "run linked to a PR of another branch", event: "workflow_run", fixture: "workflow_run_main_linked_pr.json",
			setup: setup{labels: []string{"mini-agent:push"}}, wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePropose, wantSource: route.SourceRun,
			check: func(t *testing.T, j *route.Job) {
				if j.PR == 7 || j.Branch != "main" {
					t.Errorf("job = %+v: PR #7 (head feature/parser) is not the PR of main", j)
				}
			}},
		// head_repository is null when the fork was deleted: unknown is a fork.
		{name: "run from deleted fork refused", event: "workflow_run", fixture: "workflow_run_deleted_fork.json",
			wantSkip: "fork", wantStage: 1},
		{name: "run from deleted fork allowed", event: "workflow_run", fixture: "workflow_run_deleted_fork.json",
			setup:     setup{policy: "allow-forks: true\n"},
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WriteComment, wantSource: route.SourceRun,
			check: func(t *testing.T, j *route.Job) {
				// A head with no repository is not the base repository.
				wantFields(t, j, &route.Job{Fork: true}, "Fork")
			}},
		{name: "push label but the PR moved", event: "workflow_run", fixture: "workflow_run_failure.json",
			setup: setup{labels: []string{"mini-agent:push"}, pushAfterRun: true}, wantSkip: "head moved", wantStage: 2},
		{name: "push label on run", event: "workflow_run", fixture: "workflow_run_failure.json",
			setup: setup{labels: []string{"mini-agent:push"}}, wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePush, wantSource: route.SourceRun},
		{name: "zero-job run", event: "workflow_run", fixture: "workflow_run_failure.json",
			setup: setup{runJobs: []ghtest.Job{{ID: 9, Name: "lint", Conclusion: "cancelled"}}}, wantSkip: "no failed jobs", wantStage: 2},
		{name: "run on main without PR", event: "workflow_run", fixture: "workflow_run_main.json",
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePropose, wantSource: route.SourceRun,
			check: func(t *testing.T, j *route.Job) {
				wantFields(t, j, &route.Job{PR: 0, Branch: "main"}, "PR", "Branch")
			}},

		{name: "comment from member", event: "issue_comment", fixture: "issue_comment_member.json",
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePropose, wantSource: route.SourceTest,
			check: func(t *testing.T, j *route.Job) {
				wantFields(t, j, &route.Job{CommentID: 1290351876, Commenter: "hubot", PR: 7, Branch: "feature/parser"},
					"CommentID", "Commenter", "PR", "Branch")
				for _, want := range []string{"<comment>\nkeep the public API unchanged\nThe empty-input case should return ErrEmpty.\n</comment>", "as data"} {
					if !strings.Contains(j.Instructions, want) {
						t.Errorf("instructions %q lack %q", j.Instructions, want)
					}
				}
			}},
		{name: "comment from outsider", event: "issue_comment", fixture: "issue_comment_outsider.json", wantSkip: "association NONE"},
		{name: "comment from unlisted bot", event: "issue_comment", fixture: "issue_comment_bot.json", wantSkip: "not listed in allowed-bots", wantStage: 1},
		{name: "comment from listed bot", event: "issue_comment", fixture: "issue_comment_bot.json", setup: setup{policy: allowBots},
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePropose, wantSource: route.SourceTest},
		{name: "contributor needs policy", event: "issue_comment", fixture: "issue_comment_contributor.json",
			wantSkip: "association CONTRIBUTOR; the policy allows OWNER, MEMBER, COLLABORATOR", wantStage: 1},
		{name: "contributor allowed by policy", event: "issue_comment", fixture: "issue_comment_contributor.json",
			setup: setup{policy: "allowed-associations: [CONTRIBUTOR]\n"}, wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePropose, wantSource: route.SourceTest},
		{name: "hidden html", event: "issue_comment", fixture: "issue_comment_hidden_html.json",
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePropose, wantSource: route.SourceTest,
			check: func(t *testing.T, j *route.Job) {
				_, quoted, _ := strings.Cut(j.Instructions, "<comment>")
				for _, bad := range []string{"SYSTEM", "API_KEY", "workflows", "\u200b", "\u202e", "<!--"} {
					if strings.Contains(quoted, bad) {
						t.Errorf("instructions carry hidden text %q: %q", bad, j.Instructions)
					}
				}
				if !strings.Contains(j.Instructions, "please look at the parser") || !strings.Contains(j.Instructions, "thanks!") {
					t.Errorf("visible text lost: %q", j.Instructions)
				}
			}},
		{name: "hidden command", event: "issue_comment", fixture: "issue_comment_hidden_command.json", wantSkip: "not a /mini-agent command"},
		{name: "chatter", event: "issue_comment", fixture: "issue_comment_chatter.json", wantSkip: "not a /mini-agent command"},
		{name: "edited comment", event: "issue_comment", fixture: "issue_comment_edited.json", wantSkip: "only new comments"},
		{name: "comment on an issue", event: "issue_comment", fixture: "issue_comment_on_issue.json", wantSkip: "pull requests only"},
		{name: "explain command", event: "issue_comment", fixture: "issue_comment_explain.json",
			wantStage: 2, wantMode: agent.ModeExplain, wantWrite: route.WriteNone, wantSource: route.SourceTest},
		{name: "help command", event: "issue_comment", fixture: "issue_comment_help.json", wantStage: 2, wantWrite: route.WriteNone,
			wantMode: agent.ModeExplain, wantSource: route.SourceTest,
			check: func(t *testing.T, j *route.Job) {
				wantFields(t, j, &route.Job{Help: true}, "Help")
			}},
		{name: "unknown verb", event: "issue_comment", fixture: "issue_comment_unknown.json", wantStage: 2, wantWrite: route.WriteNone,
			wantMode: agent.ModeExplain, wantSource: route.SourceTest,
			check: func(t *testing.T, j *route.Job) {
				wantFields(t, j, &route.Job{Help: true, UnknownVerb: "deploy"}, "Help", "UnknownVerb")
			}},
		{name: "comment on closed PR", event: "issue_comment", fixture: "issue_comment_member.json",
			setup: setup{prState: "closed"}, wantSkip: "is closed", wantStage: 2},
		// The payload already says closed: no request for the PR.
		{name: "comment on a PR the payload says is closed", event: "issue_comment", fixture: "issue_comment_closed_pr.json",
			setup: setup{prState: "closed"}, wantSkip: "#7 is closed: mini-agent fixes and explains open pull requests only", wantStage: 1},

		{name: "dispatch run", event: "workflow_dispatch", fixture: "workflow_dispatch_run.json",
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePropose, wantSource: route.SourceRun,
			check: func(t *testing.T, j *route.Job) {
				wantFields(t, j, &route.Job{Branch: "feature/parser", PR: 7}, "Branch", "PR")
				if j.HeadSHA == "" {
					t.Errorf("job has no head: %+v", j)
				}
			}},
		{name: "dispatch run that passed", event: "workflow_dispatch", fixture: "workflow_dispatch_run.json",
			setup: setup{runOutcome: "success"}, wantSkip: "concluded success", wantStage: 2},
		{name: "dispatch PR", event: "workflow_dispatch", fixture: "workflow_dispatch_pr.json",
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePropose, wantSource: route.SourceTest,
			check: func(t *testing.T, j *route.Job) {
				if !strings.Contains(j.Instructions, "Prefer a fix in parser.go") || strings.Contains(j.Instructions, "exfiltrate") {
					t.Errorf("instructions = %q", j.Instructions)
				}
			}},

		{name: "in-job push", event: "push", fixture: "push.json", failLog: "/tmp/test.log",
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePropose, wantSource: route.SourceLog,
			check: func(t *testing.T, j *route.Job) {
				wantFields(t, j, &route.Job{Branch: "main", PR: 0, FailureLog: "/tmp/test.log"}, "Branch", "PR", "FailureLog")
			}},
		{name: "in-job pull_request", event: "pull_request", fixture: "pull_request.json", setup: setup{labels: []string{"mini-agent:push"}},
			wantStage: 2, wantMode: agent.ModeFix, wantWrite: route.WritePush, wantSource: route.SourceTest},
		{name: "in-job pull_request explain mode", event: "pull_request", fixture: "pull_request.json", mode: "explain",
			wantStage: 2, wantMode: agent.ModeExplain, wantWrite: route.WriteNone, wantSource: route.SourceTest},
		{name: "in-job fork pull_request", event: "pull_request", fixture: "pull_request_fork.json", wantSkip: "comes from a fork"},
		{name: "in-job pull_request closed", event: "pull_request", fixture: "pull_request_closed.json", wantSkip: "was closed"},
		{name: "pull_request_target", event: "pull_request_target", fixture: "pull_request.json", wantSkip: "not supported"},
		{name: "other event", event: "release", fixture: "push.json", wantSkip: "not one mini-agent handles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, tt.setup)
			ev := w.event(t, tt.event, tt.fixture)
			ev.Mode, ev.FailureLog = tt.mode, tt.failLog
			d, cfg, err := w.router().Route(t.Context(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(w.s.Requests()); tt.wantStage == 0 && n != 0 {
				t.Errorf("a payload-only decision made %d API requests", n)
			}
			if d.Stage != tt.wantStage {
				t.Errorf("stage = %d, want %d (%s)", d.Stage, tt.wantStage, d.Reason)
			}
			if (cfg == nil) != (tt.wantStage == 0) {
				t.Errorf("policy loaded = %v at stage %d", cfg != nil, tt.wantStage)
			}
			if tt.wantSkip != "" {
				if !d.Skipped() || !strings.Contains(d.Reason, tt.wantSkip) {
					t.Fatalf("decision = %+v, want a skip with %q", d, tt.wantSkip)
				}
				return
			}
			if d.Skipped() {
				t.Fatalf("skipped: %s", d.Reason)
			}
			j := d.Job
			wantFields(t, j, &route.Job{Mode: tt.wantMode, Write: tt.wantWrite, Source: tt.wantSource, Owner: "octo-org", Repo: "hello-world"},
				"Mode", "Write", "Source", "Owner", "Repo")
			if j.Reason == "" || j.Trigger == "" || j.HeadSHA == "" {
				t.Errorf("job lacks reason, trigger or head: %+v", j)
			}
			if tt.check != nil {
				tt.check(t, j)
			}
		})
	}
}

// TestLabelMatrix: every label combination against every mode, for a
// same-repository PR and a fork PR (with forks allowed).
func TestLabelMatrix(t *testing.T) {
	t.Parallel()
	const (
		off  = "mini-agent:off"
		ro   = "mini-agent:read-only"
		push = "mini-agent:push"
	)
	type want struct {
		Skip  bool
		Mode  agent.Mode
		Write route.Write
	}
	fix := func(w route.Write) want { return want{Mode: agent.ModeFix, Write: w} }
	explain := want{Mode: agent.ModeExplain, Write: route.WriteNone}
	skipped := want{Skip: true}
	tests := []struct {
		labels []string
		mode   string
		fork   bool
		want   want
	}{
		{labels: nil, mode: "auto", want: fix(route.WritePropose)},
		{labels: nil, mode: "fix", want: fix(route.WritePropose)},
		{labels: nil, mode: "explain", want: explain},
		{labels: []string{off}, mode: "auto", want: skipped},
		{labels: []string{off}, mode: "explain", want: skipped},
		{labels: []string{ro}, mode: "auto", want: explain},
		{labels: []string{ro}, mode: "fix", want: explain},
		{labels: []string{push}, mode: "auto", want: fix(route.WritePush)},
		{labels: []string{push}, mode: "explain", want: explain},
		{labels: []string{"Mini-Agent:Push"}, mode: "auto", want: fix(route.WritePush)},
		{labels: []string{push, off}, mode: "auto", want: skipped},
		{labels: []string{push, ro}, mode: "auto", want: explain},
		{labels: []string{"bug"}, mode: "auto", want: fix(route.WritePropose)},
		{labels: nil, mode: "auto", fork: true, want: fix(route.WriteComment)},
		{labels: []string{push}, mode: "auto", fork: true, want: fix(route.WriteComment)},
		{labels: []string{ro}, mode: "auto", fork: true, want: explain},
		{labels: []string{off}, mode: "auto", fork: true, want: skipped},
	}
	for _, tt := range tests {
		w := newWorld(t, setup{labels: tt.labels, forkPR: tt.fork, policy: "allow-forks: true\n"})
		ev := w.event(t, "issue_comment", "issue_comment_member.json")
		ev.Mode = tt.mode
		d, _, err := w.router().Route(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		got := want{Skip: d.Skipped()}
		if !d.Skipped() {
			got.Mode, got.Write = d.Job.Mode, d.Job.Write
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("labels %v mode %s fork %v (%s): decision (-want +got):\n%s", tt.labels, tt.mode, tt.fork, d.Reason, diff)
		}
		if d.Reason == "" {
			t.Errorf("labels %v: no reason given", tt.labels)
		}
		for _, l := range []string{off, ro, push} { // precedence order
			if slices.ContainsFunc(tt.labels, func(x string) bool { return strings.EqualFold(x, l) }) {
				if !tt.fork && tt.mode == "auto" && !strings.Contains(d.Reason, l) {
					t.Errorf("labels %v: reason %q does not name the deciding label %s", tt.labels, d.Reason, l)
				}
				break
			}
		}
	}
}

func TestRouteErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t, setup{policy: "nope: true\n"})
	ev := w.event(t, "workflow_run", "workflow_run_failure.json")
	if _, _, err := w.router().Route(t.Context(), ev); err == nil || !strings.Contains(err.Error(), `unknown key "nope"`) {
		t.Errorf("bad policy: err = %v", err)
	}
	for _, ev := range []route.Event{
		{Name: "workflow_run", Payload: []byte("{not json"), Repo: repoName},
		{Name: "", Payload: []byte("{}"), Repo: repoName},
		{Name: "workflow_run", Payload: []byte(`{"action":"completed"}`), Repo: repoName},
		{Name: "push", Payload: []byte(`{}`), Repo: repoName, Mode: "yolo"},
		{Name: "workflow_dispatch", Payload: []byte(`{"inputs":{"run-id":"abc"}}`), Repo: repoName},
		{Name: "workflow_dispatch", Payload: []byte(`{"inputs":{"run-id":"1","pr":"2"}}`), Repo: repoName},
	} {
		_, _, err := w.router().Route(t.Context(), ev)
		if !errors.Is(err, route.ErrEvent) {
			t.Errorf("%s %s mode %q: err = %v, want ErrEvent", ev.Name, ev.Payload, ev.Mode, err)
		}
	}
}

// TestRouteClosedPRCommandIsAnswered: an allowed person's command on a
// closed PR is refused with a job to answer on (About: the PR and the
// comment), whether the payload or the API says closed; help is answered.
func TestRouteClosedPRCommandIsAnswered(t *testing.T) {
	t.Parallel()
	for _, fixture := range []string{"issue_comment_member.json", "issue_comment_closed_pr.json"} {
		w := newWorld(t, setup{prState: "closed"})
		d, _, err := w.router().Route(t.Context(), w.event(t, "issue_comment", fixture))
		if err != nil {
			t.Fatal(err)
		}
		if !d.Skipped() || d.About == nil || d.About.PR != 7 || d.About.CommentID == 0 || d.About.PRURL == "" {
			t.Errorf("%s: decision %+v about %+v: want a refusal to answer on #7", fixture, d, d.About)
		}
	}
	w := newWorld(t, setup{prState: "closed"})
	d, _, err := w.router().Route(t.Context(), w.event(t, "issue_comment", "issue_comment_help.json"))
	if err != nil || d.Job == nil || !d.Job.Help || d.Job.PR != 7 {
		t.Errorf("help on a closed PR: %+v, %v", d, err)
	}
}

// TestRouteForeignLinkedPRIsNotRead: a pull_requests entry whose base is
// another repository is never read from this one (it would be another PR,
// or a 404 that failed the run); one whose base is unknown and that is not
// found falls back to the branch's PR too.
func TestRouteForeignLinkedPRIsNotRead(t *testing.T) {
	t.Parallel()
	w := newWorld(t, setup{policy: "allow-forks: true\n", forkPR: true})
	d, _, err := w.router().Route(t.Context(), w.event(t, "workflow_run", "workflow_run_fork_foreign_pr.json"))
	if err != nil || d.Job == nil || d.Job.PR != 7 {
		t.Fatalf("decision %+v, %v", d, err)
	}
	if n := w.s.Count("GET", "/repos/"+repoName+"/pulls/3"); n != 0 {
		t.Errorf("the fork's PR #3 was looked up %d times in this repository", n)
	}
	// The same entry without its base (an older payload shape): #3 is no PR
	// here (404), and the branch's PR is found all the same.
	b, err := os.ReadFile(filepath.Join("testdata", "workflow_run_fork_foreign_pr.json"))
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.Replace(strings.ReplaceAll(string(b), fixtureSHA, w.head), `"base": {`, `"old_base": {`, 1)
	ev := route.Event{Name: "workflow_run", Payload: []byte(payload), Repo: repoName}
	d, _, err = w.router().Route(t.Context(), ev)
	if err != nil || d.Job == nil || d.Job.PR != 7 {
		t.Fatalf("without base: decision %+v, %v", d, err)
	}
	if n := w.s.Count("GET", "/repos/"+repoName+"/pulls/3"); n != 1 {
		t.Errorf("without base, #3 was looked up %d times, want once", n)
	}
}
