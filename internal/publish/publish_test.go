package publish_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

func TestProposeNewPRThenRerunUpdatesIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := makeBundle(t, f.head, theFix)
	c := cfg(t, "reviewers: [alice, octo-org/core]\n")
	req := publish.Request{Bundle: b, Job: f.job(route.WritePropose), Config: c}

	res, err := publish.Publish(t.Context(), f.gh, req)
	if err != nil {
		t.Fatal(err)
	}
	branch := "mini-agent/fix-" + publish.Key("feature/parser", b)
	if res.Status != publish.StatusFixed || res.Action != publish.ActionPRCreated || res.Branch != branch || res.PRNumber != 8 || res.Attempt != 1 {
		t.Fatalf("result = %+v", res)
	}

	// The branch holds the fix on top of the failing commit: modes kept,
	// the deletion and the rename applied.
	if got := f.s.Parents(repo, f.s.Head(repo, branch)); len(got) != 1 || got[0] != f.head {
		t.Errorf("fix commit parents = %v, want [%s]", got, f.head)
	}
	files := f.s.Files(repo, branch)
	if files["scripts/check.sh"].Mode != "100755" || files["parser.go"].Mode != "100644" ||
		!strings.Contains(files["parser.go"].Content, `if s == ""`) {
		t.Errorf("files = %+v", files)
	}
	if _, ok := files["obsolete.go"]; ok {
		t.Error("obsolete.go was not deleted")
	}
	if _, ok := files["old_name.go"]; ok || files["new_name.go"].Content != baseFiles["old_name.go"] {
		t.Error("rename not applied as delete + add")
	}
	if files["README.md"].Content != "parser work\n" {
		t.Error("the failing branch's other files are lost: the tree was not based on the failing commit")
	}

	pulls := f.s.Pulls(repo)
	pr := pulls[len(pulls)-1]
	if pr.Base != "feature/parser" || pr.Head != branch || pr.Draft {
		t.Errorf("PR = %+v", pr)
	}
	contains(t, "PR body", pr.Body, "Parse handles empty input.", "callers never pass nil", "Step trace", "read_file",
		"full test command", "GITHUB_TOKEN", "<!-- mini-agent:signature=3f2a9c1b7e6d5a4c -->",
		"<!-- mini-agent:state attempts=1 failing-sha="+f.head+" ci=off -->")
	contains(t, "PR title", pr.Title, "hello.TestParseEmpty", "feature/parser")
	if got := f.s.Reviewers(repo, 8); strings.Join(got, ",") != "alice,team:core" {
		t.Errorf("reviewers = %v", got)
	}
	tracking := f.s.Comments(repo, 7)
	if len(tracking) != 1 {
		t.Fatalf("comments on #7 = %d, want the one tracking comment", len(tracking))
	}
	contains(t, "tracking comment", tracking[0].Body, publish.TrackingMarker, "Proposed a fix in https://github.com/octo-org/hello-world/pull/8")

	// A rerun of the same failure updates the same PR.
	firstHead := f.s.Head(repo, branch)
	b2 := makeBundle(t, f.head, theFix)
	b2.Report.Summary = "Second attempt."
	res2, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b2, Job: f.job(route.WritePropose), Config: c})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Action != publish.ActionPRUpdated || res2.PRNumber != 8 || res2.Attempt != 2 {
		t.Fatalf("rerun result = %+v, want PR #8 updated", res2)
	}
	if n := f.count("POST", "/repos/octo-org/hello-world/pulls"); n != 1 {
		t.Errorf("%d PRs created, want 1", n)
	}
	pulls = f.s.Pulls(repo)
	if len(pulls) != 2 {
		t.Errorf("%d PRs, want #7 and #8", len(pulls))
	}
	pr = pulls[len(pulls)-1]
	contains(t, "updated body", pr.Body, "Second attempt.", "attempts=2")
	if n := f.count("POST", "/repos/octo-org/hello-world/git/commits"); n != 2 || res2.Commit == "" || f.s.Head(repo, branch) != res2.Commit {
		t.Errorf("rerun: %d commits made, branch at %s, result commit %s (first %s)", n, f.s.Head(repo, branch), res2.Commit, firstHead)
	}
	if got := f.s.Comments(repo, 7); len(got) != 1 {
		t.Errorf("comments on #7 = %d after rerun, want still one", len(got))
	}
}

func TestClosedUnmergedPRMeansNo(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := config.Default()
	b := makeBundle(t, f.head, theFix)
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: f.job(route.WritePropose), Config: c})
	if err != nil || res.PRNumber != 8 {
		t.Fatalf("first publish: %+v, %v", res, err)
	}
	closePR(t, f, 8)
	before := f.s.Count("POST", "/repos/octo-org/hello-world/git/")
	res, err = publish.Publish(t.Context(), f.gh, publish.Request{Bundle: makeBundle(t, f.head, theFix), Job: f.job(route.WritePropose), Config: c})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != publish.StatusSkipped || !strings.Contains(res.Reason, "#8") || !strings.Contains(res.Reason, "closed without merging") {
		t.Errorf("result = %+v, want a skip naming #8", res)
	}
	if n := f.s.Count("POST", "/repos/octo-org/hello-world/git/"); n != before {
		t.Errorf("%d git writes after the maintainer closed the PR", n-before)
	}
	contains(t, "tracking comment", f.s.Comments(repo, 7)[0].Body, "closed without merging")

	// The same failure at a new commit is a new attempt: a new PR.
	newHead := f.s.Push(repo, "feature/parser", map[string]string{"more.go": "package hello\n"})
	job := f.job(route.WritePropose)
	job.HeadSHA = newHead
	res, err = publish.Publish(t.Context(), f.gh, publish.Request{Bundle: makeBundle(t, newHead, theFix), Job: job, Config: c})
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != publish.ActionPRCreated || res.PRNumber != 9 || res.Attempt != 2 {
		t.Errorf("result = %+v, want a new PR #9, attempt 2", res)
	}
}

func TestMaxAttempts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := cfg(t, "max-attempts: 1\n")
	for i, want := range []publish.Status{publish.StatusFixed, publish.StatusSkipped} {
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: makeBundle(t, f.head, theFix), Job: f.job(route.WritePropose), Config: c})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != want {
			t.Errorf("run %d: status %s (%s), want %s", i+1, res.Status, res.Reason, want)
		}
	}
	if n := f.s.Count("POST", "/repos/octo-org/hello-world/git/commits"); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
}

func TestPushLabelCommitsOnThePRBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "mini-agent:push")
	b := makeBundle(t, f.head, theFix)
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: f.job(route.WritePush), Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != publish.StatusFixed || res.Action != publish.ActionPushed || res.Branch != "feature/parser" {
		t.Fatalf("result = %+v", res)
	}
	head := f.s.Head(repo, "feature/parser")
	if head != res.Commit || f.s.Parents(repo, head)[0] != f.head {
		t.Errorf("feature/parser is at %s (parent %v), want the fix on %s", head, f.s.Parents(repo, head), f.head)
	}
	if n := f.count("POST", "/repos/octo-org/hello-world/pulls"); n != 0 {
		t.Errorf("push policy opened %d PRs", n)
	}
	contains(t, "tracking comment", f.s.Comments(repo, 7)[0].Body, "Pushed a validated fix", res.Commit)
}

func TestPushStopsWhenTheHeadMoved(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "mini-agent:push")
	b := makeBundle(t, f.head, theFix)
	moved := f.s.Push(repo, "feature/parser", map[string]string{"newer.go": "package hello\n"})
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: f.job(route.WritePush), Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != publish.StatusNotFixed || res.Action != publish.ActionHeadMoved || !strings.Contains(res.Reason, "moved") {
		t.Errorf("result = %+v", res)
	}
	if got := f.s.Head(repo, "feature/parser"); got != moved {
		t.Errorf("feature/parser = %s, want it left at %s", got, moved)
	}
	if n := f.s.Count("POST", "/repos/octo-org/hello-world/git/"); n != 0 {
		t.Errorf("%d git writes although the head moved", n)
	}
	contains(t, "comment", f.s.Comments(repo, 7)[0].Body, "moved since the fix was made", "```diff")
}

func TestRefusedBundlesWriteNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name   string
		bundle func() *bundle.Bundle
		cfg    string
		want   string
	}{
		{name: "workflow", want: ".github/workflows/ci.yml is a protected path", bundle: func() *bundle.Bundle {
			return makeBundle(t, f.head, edit{write: map[string]string{".github/workflows/ci.yml": "on: push\n"}})
		}},
		{name: "dotenv", want: "config/.env.local is a protected path", bundle: func() *bundle.Bundle {
			return makeBundle(t, f.head, edit{write: map[string]string{"config/.env.local": "X=1\n"}})
		}},
		{name: "case games", want: "protected path", bundle: func() *bundle.Bundle {
			return makeBundle(t, f.head, edit{write: map[string]string{".GitHub/workflows/ci.yml": "on: push\n"}})
		}},
		{name: "configured glob", cfg: "protected-paths: [\"migrations/**\"]\n", want: "migrations/001.sql is a protected path", bundle: func() *bundle.Bundle {
			return makeBundle(t, f.head, edit{write: map[string]string{"migrations/001.sql": "drop table users;\n"}})
		}},
		{name: "workflows, upper case", want: ".GITHUB/workflows/x.yml is a protected path (.github/**)", bundle: func() *bundle.Bundle {
			return makeBundle(t, f.head, edit{write: map[string]string{".GITHUB/workflows/x.yml": "on: push\n"}})
		}},
		{name: "workflows, mixed case", want: ".Github/Workflows/ci.yml is a protected path (.github/**)", bundle: func() *bundle.Bundle {
			return makeBundle(t, f.head, edit{write: map[string]string{".Github/Workflows/ci.yml": "on: push\n"}})
		}},
		{name: "configured glob, other case", cfg: "protected-paths: [\"migrations/**\"]\n", want: "Migrations/001.sql is a protected path (migrations/**)", bundle: func() *bundle.Bundle {
			return makeBundle(t, f.head, edit{write: map[string]string{"Migrations/001.sql": "drop table users;\n"}})
		}},
		{name: "git config", want: "enters .git", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, edit{write: map[string]string{"parser.go": "package hello\n"}})
			b.Files[0].Path = ".git/config"
			b.Diff = strings.ReplaceAll(b.Diff, "parser.go", ".git/config")
			return b
		}},
		{name: "git hooks, upper case", want: "enters .git", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, edit{write: map[string]string{"parser.go": "package hello\n"}})
			b.Files[0].Path = ".GIT/hooks/x"
			b.Diff = strings.ReplaceAll(b.Diff, "parser.go", ".GIT/hooks/x")
			return b
		}},
		{name: "rename out of a protected path", want: ".github/CODEOWNERS is a protected path", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, edit{rename: [][2]string{{"old_name.go", "new_name.go"}}})
			b.Files[0].OldPath = ".github/CODEOWNERS"
			b.Diff = strings.ReplaceAll(b.Diff, "old_name.go", ".github/CODEOWNERS")
			return b
		}},
		{name: "files disagree with diff", want: "not in the diff", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, edit{write: map[string]string{"parser.go": "package hello\n"}})
			b.Files[0].Path = "other.go"
			return b
		}},
		{name: "dot-git", want: "enters .git", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, edit{write: map[string]string{"parser.go": "package hello\n"}})
			b.Files[0].Path = "sub/.git/hooks/pre-commit"
			b.Diff = strings.ReplaceAll(b.Diff, "parser.go", "sub/.git/hooks/pre-commit")
			return b
		}},
		{name: "symlink", want: "symbolic link", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, edit{write: map[string]string{"parser.go": "package hello\n"}})
			b.Files[0].Mode = "120000"
			return b
		}},
		{name: "explain bundle with files", want: "read-only", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, theFix)
			b.Mode = "explain"
			return b
		}},
		{name: "made at another commit", want: "made at commit", bundle: func() *bundle.Bundle {
			return makeBundle(t, strings.Repeat("ab", 20), theFix)
		}},
		// The files are what is committed, the diff is what the PR shows and
		// max-diff measures: a bundle whose files say more than its diff is
		// refused.
		{name: "content beyond the diff", want: "parser.go does not match the diff", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, theFix)
			for i := range b.Files {
				if b.Files[i].Path == "parser.go" {
					b.Files[i].Content = append(b.Files[i].Content, "\nfunc init() { steal() }\n"...)
				}
			}
			return b
		}},
		{name: "rename deletes another file", want: "new_name.go", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, theFix)
			for i := range b.Files {
				if b.Files[i].Status == "renamed" {
					b.Files[i].OldPath = "go.mod"
				}
			}
			return b
		}},
		{name: "modification turned into a deletion", want: "parser.go", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, theFix)
			for i := range b.Files {
				if b.Files[i].Path == "parser.go" {
					b.Files[i].Status, b.Files[i].Content, b.Files[i].Mode = "deleted", nil, ""
				}
			}
			return b
		}},
		{name: "modification read from another file", want: "reads it from go.mod", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, edit{write: map[string]string{"parser.go": "module hello\n\ngo 1.23\n"}})
			b.Diff = strings.Replace(b.Diff, "--- a/parser.go", "--- a/go.mod", 1)
			return b
		}},
		{name: "mode not in the diff", want: "mode", bundle: func() *bundle.Bundle {
			b := makeBundle(t, f.head, theFix)
			for i := range b.Files {
				if b.Files[i].Path == "parser.go" {
					b.Files[i].Mode = "100755"
				}
			}
			return b
		}},
	}
	for _, tt := range tests {
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: tt.bundle(), Job: f.job(route.WritePropose), Config: cfg(t, tt.cfg)})
		if !errors.Is(err, publish.ErrRefused) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want ErrRefused with %q", tt.name, err, tt.want)
		}
		if res == nil || res.Status != publish.StatusFailed || res.Action != publish.ActionRefused {
			t.Errorf("%s: result = %+v", tt.name, res)
		}
	}
	if n := f.writes(); n != 0 {
		t.Errorf("refused bundles caused %d write requests", n)
	}
}
