package publish_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/route"
	"github.com/org/mini-agent/internal/snapshot"
)

const (
	token = "ghs_publish_test"
	repo  = "octo-org/hello-world"
)

// baseFiles is the repository content the fixes apply to.
var baseFiles = map[string]string{
	"go.mod":         "module hello\n\ngo 1.22\n",
	"parser.go":      "package hello\n\nfunc Parse(s string) int { return len(s) }\n",
	"parser_test.go": "package hello\n\nimport \"testing\"\n\nfunc TestParseEmpty(t *testing.T) {}\n",
	"old_name.go":    "package hello\n\n// Helper is renamed by the fix.\nfunc Helper() {}\n",
	"obsolete.go":    "package hello\n\n// obsolete is deleted by the fix.\n",
}

// fixture is a fake GitHub with the repository, PR #7 from feature/parser
// (head = the failing commit), and a client.
type fixture struct {
	s    *ghtest.Server
	gh   *ghapi.Client
	head string // feature/parser's head: the failing commit
}

func newFixture(t *testing.T, labels ...string) *fixture {
	t.Helper()
	s := ghtest.NewServer(t, token)
	s.AddRepo(repo, "main", baseFiles)
	head := s.Push(repo, "feature/parser", map[string]string{"README.md": "parser work\n"})
	for range 6 {
		s.AddPR(repo, ghtest.PR{Title: "issue"})
	}
	if n := s.AddPR(repo, ghtest.PR{Title: "Parser", Head: "feature/parser", Base: "main", Labels: labels}); n != 7 {
		t.Fatalf("PR %d", n)
	}
	gh, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	servers.Store(s, true)
	t.Cleanup(func() { servers.Delete(s) })
	return &fixture{s: s, gh: gh, head: head}
}

// writes counts the write requests the fake received.
func (f *fixture) writes() int {
	n := 0
	for _, r := range f.s.Requests() {
		if r.Method != "GET" {
			n++
		}
	}
	return n
}

// count counts requests with exactly this method and path.
func (f *fixture) count(method, path string) int {
	n := 0
	for _, r := range f.s.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// job is the routed job for PR #7 under write policy w.
func (f *fixture) job(w route.Write) *route.Job {
	return &route.Job{Mode: agent.ModeFix, Write: w, Reason: "test policy " + string(w), Trigger: "workflow \"CI\" run 1 failed on feature/parser",
		Owner: "octo-org", Repo: "hello-world", DefaultBranch: "main", HeadSHA: f.head, Branch: "feature/parser",
		HeadRepo: repo, PR: 7, PRURL: "https://github.com/octo-org/hello-world/pull/7", Source: route.SourceRun}
}

// edit describes a change to make in the workspace.
type edit struct {
	write  map[string]string // path -> content
	exec   []string          // paths to chmod +x
	remove []string
	rename [][2]string
}

// makeBundle builds a validated "fixed" bundle whose diff and files come
// from a real workspace and the real snapshot (git), as pipeline.Run makes
// them.
func makeBundle(t *testing.T, base string, e edit) *bundle.Bundle {
	t.Helper()
	key := fmt.Sprintf("%v", e)
	v, ok := diffCache.Load(key)
	if !ok {
		diff, files := realDiff(t, e)
		v, _ = diffCache.LoadOrStore(key, cachedDiff{diff, files})
	}
	cd := v.(cachedDiff)
	b := &bundle.Bundle{Version: bundle.Version, Mode: "fix", Status: bundle.StatusFixed, Provider: "script", Model: "scripted",
		BaseSHA: base, Command: "go test ./...", Signature: "3f2a9c1b7e6d5a4c", FailingTests: []string{"hello.TestParseEmpty"},
		Diff: cd.diff, Message: "## Summary\nParse handles empty input.\n## Root cause\nparser.go:3\n## Assumptions\n- callers never pass nil\n",
		Report: agent.Report{Summary: "Parse handles empty input.", RootCause: "parser.go:3 returned len(s).",
			Assumptions: []string{"callers never pass nil"}, Structured: true},
		Validation: []bundle.Check{{Name: "failing tests", Command: "go test -run TestParseEmpty ./...", Passed: true},
			{Name: "full test command", Command: "go test ./...", Passed: true}},
		Run:   bundle.RunInfo{StopReason: agent.StopFinalMessage, Steps: 4, ToolCalls: 3},
		Steps: []bundle.Step{{Step: 1, Tool: "read_file", Args: "path=parser.go", Outcome: "ok", Duration: "1ms"}},
		Extra: bundle.ExtraContext{Workflow: "CI", Job: "test", Policy: "propose", Reason: "no label"},
	}
	for _, f := range cd.files {
		f.Content = bytes.Clone(f.Content)
		b.Files = append(b.Files, f)
	}
	if err := b.CheckDiff(); err != nil {
		t.Fatal(err)
	}
	prove(b)
	return b
}

// servers are the live fixtures' fake GitHubs: prove finds the bundle's
// base commit in one of them (commit ids are content ids, the same in each).
var servers sync.Map

// prove gives b what the pipeline's clean-checkout validation records: a
// holding proof and the id of the tree base + files, as the fake GitHub
// (whose ids are git's) builds it. A base no fixture knows gets a made-up
// tree id (such a bundle is refused before any commit).
func prove(b *bundle.Bundle) {
	var changes []ghtest.TreeChange
	for _, f := range b.Files {
		if f.Status == "renamed" {
			changes = append(changes, ghtest.TreeChange{Path: f.OldPath, Delete: true})
		}
		if f.Status == "deleted" {
			changes = append(changes, ghtest.TreeChange{Path: f.Path, Delete: true})
			continue
		}
		changes = append(changes, ghtest.TreeChange{Path: f.Path, Content: string(f.Content), Mode: f.Mode})
	}
	tree := strings.Repeat("0", 40)
	servers.Range(func(k, _ any) bool {
		if id, ok := k.(*ghtest.Server).TreeAfter(repo, b.BaseSHA, changes); ok {
			tree = id
			return false
		}
		return true
	})
	b.TreeSHA = tree
	b.Baseline = &bundle.Baseline{Verdict: bundle.VerdictReproduced, Commit: b.BaseSHA,
		Phase: bundle.Phase{Targets: []bundle.TestRecord{{ID: "hello.TestParseEmpty", Runs: 3, Failures: 3}}, Failed: []string{"hello.TestParseEmpty"}, FullRan: true, Runs: 3}}
	b.Proof = &bundle.Proof{Holds: true, Phase: bundle.Phase{Tree: tree, Targets: []bundle.TestRecord{{ID: "hello.TestParseEmpty", Runs: 3}},
		FullRan: true, FullPassed: true, Runs: 3}}
}

// diffCache keeps each edit's real diff: git runs once per distinct edit.
var diffCache sync.Map

type cachedDiff struct {
	diff  string
	files []bundle.File
}

func realDiff(t *testing.T, e edit) (string, []bundle.File) {
	t.Helper()
	dir := t.TempDir()
	for p, c := range baseFiles {
		mustWrite(t, filepath.Join(dir, p), c, 0o644)
	}
	snap, err := snapshot.Take(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	for _, r := range e.rename {
		if err := os.Rename(filepath.Join(dir, r[0]), filepath.Join(dir, r[1])); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range e.write {
		mustWrite(t, filepath.Join(dir, p), c, 0o644)
	}
	for _, p := range e.exec {
		if err := os.Chmod(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range e.remove {
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	diff, chs, err := snap.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var files []bundle.File
	for _, c := range chs {
		bf := bundle.File{Path: c.Path, OldPath: c.OldPath, Status: c.Status, Mode: c.Mode}
		if c.Status != "deleted" {
			data, err := os.ReadFile(filepath.Join(dir, c.Path))
			if err != nil {
				t.Fatal(err)
			}
			bf.Content = data
		}
		files = append(files, bf)
	}
	return diff, files
}

// theFix is the usual change: a modification, an executable script, a
// rename and a deletion.
var theFix = edit{
	write:  map[string]string{"parser.go": "package hello\n\nfunc Parse(s string) int {\n\tif s == \"\" {\n\t\treturn 0\n\t}\n\treturn len(s)\n}\n", "scripts/check.sh": "#!/bin/sh\nexit 0\n"},
	exec:   []string{"scripts/check.sh"},
	remove: []string{"obsolete.go"},
	rename: [][2]string{{"old_name.go", "new_name.go"}},
}

func mustWrite(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func cfg(t *testing.T, yaml string) *config.Config {
	t.Helper()
	c, err := config.Parse("test.yml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func contains(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}
