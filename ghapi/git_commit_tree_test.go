package ghapi

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
)

// treeBase is the repository both the fake and a local git start from.
var treeBase = map[string]string{
	"README.md":       "hello\n",
	"cmd/main.go":     "package main\n\n// old\n",
	"old/name.go":     "package old\n",
	"scripts/lint.sh": "#!/bin/sh\n",
	"a-b.txt":         "sorts before a/ in git\n",
	"a/x.txt":         "x\n",
}

// treeChanges are applied to treeBase: a change, new files (executable,
// binary, nested) and the deletion of old/'s only file.
func treeChanges() []FileChange {
	return []FileChange{
		{Path: "cmd/main.go", Content: []byte("package main\n")},
		{Path: "scripts/check.sh", Content: []byte("#!/bin/sh\nexit 0\n"), Mode: ModeExecutable},
		{Path: "testdata/bin.dat", Content: []byte("\x00\xffbinary\r\n")},
		{Path: "a/b/c.txt", Content: []byte("nested\n")},
		{Path: "old/name.go", Delete: true},
	}
}

// localGit runs git in dir with no user or system configuration and
// returns its trimmed output.
func localGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_CEILING_DIRECTORIES="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// validatedTree is what the harness records: the id of the tree of a clean
// local checkout of treeBase with changes applied and committed. It returns
// the base tree's id too.
func validatedTree(t *testing.T, changes []FileChange) (tree, baseTree string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	write := func(p string, content []byte, mode os.FileMode) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, content, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, mode); err != nil {
			t.Fatal(err)
		}
	}
	localGit(t, dir, "init", "-q")
	for p, c := range treeBase {
		write(p, []byte(c), 0o644)
	}
	localGit(t, dir, "add", "-A")
	localGit(t, dir, "commit", "-q", "-m", "base")
	for _, ch := range changes {
		switch {
		case ch.Delete:
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(ch.Path))); err != nil {
				t.Fatal(err)
			}
		case ch.Mode == ModeExecutable:
			write(ch.Path, ch.Content, 0o755)
		default:
			write(ch.Path, ch.Content, 0o644)
		}
	}
	localGit(t, dir, "add", "-A")
	localGit(t, dir, "commit", "-q", "-m", "fix")
	return localGit(t, dir, "rev-parse", "HEAD^{tree}"), localGit(t, dir, "rev-parse", "HEAD~1^{tree}")
}

// treeScene is a fake repo o/r seeded with treeBase on main, and a client.
func treeScene(t *testing.T) (*ghtest.Server, *Client, string) {
	t.Helper()
	s := ghtest.NewServer(t, testToken)
	base := s.AddRepo("o/r", "main", treeBase)
	c, err := New(t.Context(), Options{Token: testToken, BaseURL: s.URL, WriteInterval: -1, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, base
}

func TestCommitFiles_expectedTreeMatches(t *testing.T) {
	t.Parallel()
	want, _ := validatedTree(t, treeChanges())
	s, c, base := treeScene(t)
	res, err := c.CommitFiles(t.Context(), "o", "r", CommitRequest{BaseSHA: base, Branch: "fix", CreateBranch: true,
		Message: "fix: parser", Changes: treeChanges(), ExpectedTree: want})
	if err != nil {
		t.Fatalf("CommitFiles: %v", err)
	}
	if res.TreeSHA != want || s.Head("o/r", "fix") != res.SHA || !slices.Equal(s.Parents("o/r", res.SHA), []string{base}) {
		t.Errorf("result %+v, fix at %s; want tree %s", res, s.Head("o/r", "fix"), want)
	}
	files := s.Files("o/r", "fix")
	if _, ok := files["old/name.go"]; ok || files["scripts/check.sh"].Mode != ModeExecutable ||
		files["testdata/bin.dat"].Content != "\x00\xffbinary\r\n" || len(files) != len(treeBase)-1+3 {
		t.Errorf("files at fix = %+v", files)
	}
}

func TestCommitFiles_expectedTreeDiffersCommitsNothing(t *testing.T) {
	t.Parallel()
	built, baseTree := validatedTree(t, treeChanges())
	// What was validated: the same changes but for one file's mode.
	validated := treeChanges()
	validated[1].Mode = ModeFile
	want, _ := validatedTree(t, validated)
	if built == want || built == baseTree {
		t.Fatalf("the trees compared are not distinct: built %s, validated %s, base %s", built, want, baseTree)
	}
	for _, create := range []bool{true, false} {
		t.Run(map[bool]string{true: "create branch", false: "update branch"}[create], func(t *testing.T) {
			t.Parallel()
			s, c, base := treeScene(t)
			req := CommitRequest{BaseSHA: base, Branch: "fix", CreateBranch: create, Message: "fix: parser", Changes: treeChanges(),
				ExpectedTree: want}
			var head string
			branches := []string{"main"}
			if !create {
				branches = []string{"fix", "main"}
				head = s.Commit("o/r", "fix", "earlier fix", map[string]string{"z.txt": "z\n"})
				req.ExpectedHead, req.Force = head, true
			}
			res, err := c.CommitFiles(t.Context(), "o", "r", req)
			var tm *TreeMismatchError
			if !errors.As(err, &tm) || res != nil {
				t.Fatalf("CommitFiles = %+v, %v; want a *TreeMismatchError", res, err)
			}
			if tm.Want != want || tm.Got != built {
				t.Errorf("mismatch %+v, want {Want:%s Got:%s}", tm, want, built)
			}
			if !errors.Is(err, ErrTreeMismatch) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), built) ||
				!strings.Contains(err.Error(), "fix") {
				t.Errorf("err = %q, want ErrTreeMismatch naming the branch and both trees", err)
			}
			if got := s.Head("o/r", "fix"); got != head {
				t.Errorf("fix at %q, want %q", got, head)
			}
			if got := s.Branches("o/r"); !slices.Equal(got, branches) {
				t.Errorf("branches = %q", got)
			}
			if n := s.Count("POST", "/repos/o/r/git/commits") + s.Count("POST", "/repos/o/r/git/refs") +
				s.Count("PATCH", "/repos/o/r/git/refs"); n != 0 {
				t.Errorf("%d commit or ref writes, want none; requests %q", n, trail(s))
			}
		})
	}
}

// A tree id of the wrong shape is refused before any request.
func TestCommitFiles_expectedTreeShape(t *testing.T) {
	t.Parallel()
	f := setup(t) // no handlers: any request fails the test
	for _, tree := range []string{"abc", strings.Repeat("a", 41), strings.ToUpper(newTree), strings.Repeat("g", 40), " " + newTree} {
		req := commitRequest("fix")
		req.ExpectedTree = tree
		if _, err := f.client.CommitFiles(t.Context(), "o", "r", req); err == nil || !strings.Contains(err.Error(), "expected tree") {
			t.Errorf("ExpectedTree %q: err = %v", tree, err)
		}
	}
}

// With the mock of git_commit_test.go: a matching ExpectedTree goes on to
// the commit and the ref.
func TestCommitFiles_expectedTreeEqualIsCommitted(t *testing.T) {
	t.Parallel()
	g := newGitFixture(t)
	g.handle("/repos/o/r/git/refs", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "POST")
		writeJSON(w, 201, `{"ref":"refs/heads/fix","object":{"sha":"`+newCommit+`"}}`)
	})
	req := commitRequest("fix")
	req.CreateBranch, req.ExpectedTree = true, newTree
	got, err := g.client.CommitFiles(t.Context(), "o", "r", req)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "result", got, &CommitResult{SHA: newCommit, TreeSHA: newTree, Branch: "fix", Created: true})
}
