package action

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/exitcode"
)

// The refusals a newcomer's repository gives (GitHub's real answers, from
// the fake's settings): each ends with an actionable message in the log
// (::error), the job summary and the `error` output, a complete report, the
// outputs the run has, and no model run paid twice.

// refusalRun runs the action on the scene's failing workflow_run and
// returns the exit code, outputs, log and job summary.
func refusalRun(t *testing.T, sc *scene) (int, map[string]string, string, string) {
	t.Helper()
	env, vars, stdout := sc.env(t, "workflow_run", workflowRunPayload(101, sc.head, "main", nil), nil)
	code := actionMain(t.Context(), env)
	summary, err := os.ReadFile(vars["GITHUB_STEP_SUMMARY"])
	if err != nil {
		t.Fatal(err)
	}
	return code, outputs(t, vars["GITHUB_OUTPUT"]), stdout.String(), string(summary)
}

// modelRan reports whether the log shows an agent step.
func modelRan(log string) bool { return strings.Contains(log, "::group::step 1:") }

func resetWorkspace(t *testing.T, sc *scene) {
	git(t, sc.ws, "reset", "-q", "--hard")
	git(t, sc.ws, "clean", "-qfd")
}

// TestActionPRRefused: the first PR on a default repository (the Actions
// setting off), and a token without pull-requests: write. The run fixes,
// commits the fix branch, and GitHub refuses the PR: failed (exit 4), what
// to change in the ::error, the summary and the error output, the full
// report in the summary, every output the run has. The next run, cause
// still there, does not run the model. Once it is gone, the next run opens
// the PR for the committed fix, again without the model.
func TestActionPRRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	for _, tt := range []struct {
		name          string
		refuse, allow func(s *ghtest.Server)
		want          []string // in the ::error line, the error output and the summary
	}{
		{"the Actions setting is off",
			func(s *ghtest.Server) { s.SetActionsCanCreatePRs(testRepo, false) },
			func(s *ghtest.Server) { s.SetActionsCanCreatePRs(testRepo, true) },
			[]string{"403: GitHub Actions is not permitted to create or approve pull requests", ghapi.SettingActionsCreatePRs}},
		{"no pull-requests: write",
			func(s *ghtest.Server) {
				s.SetTokenPermissions(map[string]string{"contents": "write", "actions": "read"})
			},
			func(s *ghtest.Server) { s.SetTokenPermissions(nil) },
			[]string{"403: Resource not accessible by integration", "add `pull-requests: write` to the workflow's `permissions:` block"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc := faultScene(t)
			tt.refuse(sc.s)

			code, out, log, summary := refusalRun(t, sc)
			if code != exitcode.Failed || out["status"] != "failed" || !modelRan(log) {
				t.Fatalf("exit %d status %q (model ran: %v)\n%s", code, out["status"], modelRan(log), log)
			}
			errorLine := ""
			for _, l := range strings.Split(log, "\n") {
				if strings.HasPrefix(l, "::error title=GitHub refused to publish (mini-agent)::") {
					errorLine = l
				}
			}
			branch := out["branch"]
			for _, want := range tt.want {
				for what, text := range map[string]string{"::error": errorLine, "error output": out["error"], "summary": summary} {
					if !strings.Contains(text, want) {
						t.Errorf("%s lacks %q: %q", what, want, text)
					}
				}
			}
			if !strings.HasPrefix(branch, "mini-agent/fix-") || sc.s.Head(testRepo, branch) == "" {
				t.Errorf("branch output %q: not the committed fix branch (%v)", branch, sc.s.Branches(testRepo))
			}
			for _, k := range []string{"steps", "tokens", "bundle", "trace"} {
				if out[k] == "" {
					t.Errorf("output %s is empty: %v", k, out)
				}
			}
			for _, want := range []string{"## mini-agent: failed", "**GitHub refused to publish.**", "**To fix:**",
				"committed on branch `" + branch + "`", "### Proof", "### Validation", "### Usage", "Step trace", "<summary>Diff", "cart.go"} {
				if !strings.Contains(summary, want) {
					t.Errorf("summary lacks %q:\n%s", want, summary)
				}
			}
			commits := sc.s.Count(http.MethodPost, "/repos/"+testRepo+"/git/commits")

			// The cause is still there: refused again, without a model run.
			resetWorkspace(t, sc)
			code, out, log, summary = refusalRun(t, sc)
			if code != exitcode.Failed || out["status"] != "failed" || modelRan(log) || !strings.Contains(out["error"], tt.want[1]) {
				t.Fatalf("second run: exit %d status %q error %q (model ran: %v)\n%s", code, out["status"], out["error"], modelRan(log), log)
			}
			if !strings.Contains(summary, tt.want[1]) || out["branch"] != branch {
				t.Errorf("second run: summary or branch (%q) wrong:\n%s", out["branch"], summary)
			}

			// The maintainer fixes it: the next run opens the PR for the commit.
			tt.allow(sc.s)
			resetWorkspace(t, sc)
			code, out, log, _ = refusalRun(t, sc)
			if code != 0 || out["status"] != "fixed" || modelRan(log) || out["pr-url"] == "" || out["steps"] != "" {
				t.Fatalf("third run: exit %d outputs %v (model ran: %v)\n%s", code, out, modelRan(log), log)
			}
			if n := sc.s.Count(http.MethodPost, "/repos/"+testRepo+"/git/commits"); n != commits {
				t.Errorf("%d commits after the recovery, %d before: a new fix was made", n, commits)
			}
			pulls := sc.s.Pulls(testRepo)
			if len(pulls) != 1 || pulls[0].Head != branch || !strings.Contains(pulls[0].Body, "without calling the model again") ||
				!strings.Contains(pulls[0].Body, "### Proof") || !strings.Contains(pulls[0].Body, "Step trace") {
				t.Errorf("pulls = %+v", pulls)
			}
		})
	}
}

// TestActionRefusedBeforeTheModel: a read-only token and a ruleset on the
// fix branches are found before the model runs: failed (exit 4), what to
// change in the log, summary and error output, nothing written.
func TestActionRefusedBeforeTheModel(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	for _, tt := range []struct {
		name  string
		setup func(s *ghtest.Server)
		want  []string
	}{
		{"read-only token", func(s *ghtest.Server) {
			s.SetTokenPermissions(map[string]string{"contents": "read", "pull-requests": "write", "actions": "read"})
		}, []string{"add `contents: write` to the workflow's `permissions:` block", "permissions: { contents: write, pull-requests: write }"}},
		{"ruleset", func(s *ghtest.Server) {
			s.AddRuleset(testRepo, ghtest.Ruleset{ID: 5, Name: "no new branches", Include: []string{"~ALL"}, Rules: []string{"creation"}})
		}, []string{`ruleset "no new branches"`, "bypass list", "`branch-prefix:`"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc := faultScene(t)
			tt.setup(sc.s)
			code, out, log, summary := refusalRun(t, sc)
			if code != exitcode.Failed || out["status"] != "failed" || modelRan(log) {
				t.Fatalf("exit %d status %q (model ran: %v)\n%s", code, out["status"], modelRan(log), log)
			}
			for _, want := range tt.want {
				for what, text := range map[string]string{"log": log, "summary": summary, "error output": out["error"]} {
					if !strings.Contains(text, want) {
						t.Errorf("%s lacks %q:\n%s", what, want, text)
					}
				}
			}
			if !strings.Contains(summary, "so the model was not run") {
				t.Errorf("summary:\n%s", summary)
			}
			if w := writesTo(sc.s); len(w) != 0 {
				t.Errorf("writes: %q", w)
			}
		})
	}
}

// TestActionSecondaryRateLimitThatDoesNotClear: GitHub's secondary rate
// limit on opening the PR outlasts the retries: failed with the advice,
// the branch output names the committed fix.
func TestActionSecondaryRateLimitThatDoesNotClear(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	sc := faultScene(t, ghtest.SecondaryRateLimit(http.MethodPost, "/repos/"+testRepo+"/pulls"))
	code, out, log, summary := refusalRun(t, sc)
	if code != exitcode.Failed || out["status"] != "failed" {
		t.Fatalf("exit %d status %q\n%s", code, out["status"], log)
	}
	for _, want := range []string{"secondary rate limit did not clear", "concurrency:"} {
		if !strings.Contains(out["error"], want) || !strings.Contains(summary, want) || !strings.Contains(log, want) {
			t.Errorf("error output, summary or log lacks %q: %q", want, out["error"])
		}
	}
	if out["branch"] == "" || sc.s.Head(testRepo, out["branch"]) == "" || out["steps"] == "" {
		t.Errorf("outputs %v", out)
	}
}

// TestActionCommentOnAClosedPRGetsAnAnswer: a member's `/mini-agent fix` on
// a closed PR (the payload says so, as GitHub sends it) is answered on the
// PR with why nothing runs; an outsider's is not (no answer to strangers).
func TestActionCommentOnAClosedPRGetsAnAnswer(t *testing.T) {
	t.Parallel()
	sc, pr := prScene(t, "")
	for _, tt := range []struct {
		login, association string
		answered           bool
	}{{"hubot", "MEMBER", true}, {"stranger", "NONE", false}} {
		id := sc.s.AddComment(testRepo, pr, tt.login, tt.association, "/mini-agent fix")
		payload := commentPayload(pr, id, tt.login, "User", tt.association, "/mini-agent fix")
		payload["issue"].(map[string]any)["state"] = "closed"
		payload["issue"].(map[string]any)["html_url"] = "https://github.com/" + testRepo + "/pull/1"
		before := len(sc.s.Comments(testRepo, pr))
		env, vars, stdout := sc.env(t, "issue_comment", payload, nil)
		if code := actionMain(t.Context(), env); code != 0 {
			t.Fatalf("%s: exit %d\n%s", tt.login, code, stdout)
		}
		if out := outputs(t, vars["GITHUB_OUTPUT"]); out["status"] != "skipped" {
			t.Errorf("%s: outputs = %v", tt.login, out)
		}
		comments := sc.s.Comments(testRepo, pr)
		answered := len(comments) == before+1 && strings.Contains(comments[len(comments)-1].Body,
			"**Skipped:** pull request #1 is closed: mini-agent fixes and explains open pull requests only")
		if answered != tt.answered {
			t.Errorf("%s: answered %v, want %v: %+v", tt.login, answered, tt.answered, comments)
		}
	}
}
