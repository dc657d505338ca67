package ghtest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/org/mini-agent/ghapi/ghtest"
)

// gitRepo is an empty repository in a temp dir, run with no user or system
// configuration.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	g := &gitRepo{t: t, dir: t.TempDir()}
	g.run("", "init", "-q")
	return g
}

// run runs git in the repo with stdin and returns its trimmed output.
func (g *gitRepo) run(stdin string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = g.dir
	cmd.Stdin = strings.NewReader(stdin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	ident := []string{"NAME=" + ghtest.BotLogin, "EMAIL=41898282+github-actions[bot]@users.noreply.github.com",
		"DATE=1700000000 +0000"}
	for _, who := range []string{"GIT_AUTHOR_", "GIT_COMMITTER_"} {
		for _, kv := range ident {
			cmd.Env = append(cmd.Env, who+kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_CEILING_DIRECTORIES="+g.dir)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// blob writes content as a blob and returns git's id for it.
func (g *gitRepo) blob(content string) string {
	g.t.Helper()
	return g.run(content, "hash-object", "-w", "--stdin")
}

type gitFile struct{ mode, content string }

// tree makes the index hold exactly files (by path) and returns the id of
// the tree git writes for it.
func (g *gitRepo) tree(files map[string]gitFile) string {
	g.t.Helper()
	g.run("", "read-tree", "--empty")
	var info strings.Builder
	for p, f := range files {
		fmt.Fprintf(&info, "%s %s\t%s\n", f.mode, g.blob(f.content), p)
	}
	g.run(info.String(), "update-index", "--index-info")
	return g.run("", "write-tree")
}

// commit writes a commit of tree with parents and message (taken verbatim)
// by the fake's identity and time, and returns its id.
func (g *gitRepo) commit(tree, message string, parents ...string) string {
	g.t.Helper()
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	return g.run(message, args...)
}

// call sends method path with in as its JSON body (none when nil) to the
// fake, checks the status and decodes the answer into out.
func call(t *testing.T, s *ghtest.Server, method, path string, in any, wantStatus int, out any) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+strings.TrimPrefix(path, "/"), body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, wantStatus, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// object is the part of a blob, tree or commit answer the tests read.
type object struct {
	SHA  string `json:"sha"`
	Tree struct {
		SHA string `json:"sha"`
	} `json:"tree"`
}

// treeEntry is an entry of a create-tree request; a nil SHA and Content
// deletes the path.
type treeEntry struct {
	Path    string  `json:"path"`
	Mode    string  `json:"mode"`
	Type    string  `json:"type"`
	SHA     *string `json:"sha"`
	Content *string `json:"content,omitempty"`
}

// seedFiles has names that a plain sort orders otherwise than git, which
// sorts a directory as if its name ended in "/": "a b" < "a-b" < "a.txt" <
// "a/" < "a0", "foo-bar" < "foo.go" < "foo/", and non-ASCII after ASCII.
var seedFiles = map[string]string{
	"a.txt":       "a\n",
	"a/b.txt":     "b\n",
	"a/c/d.txt":   "d\n",
	"a-b":         "dash\n",
	"a0":          "zero\n",
	"a b":         "space\n",
	"A":           "upper\n",
	"foo.go":      "package foo\n",
	"foo/bar.go":  "package foo\n",
	"foo-bar":     "x\n",
	"z/y/x/w.txt": "deep\n",
	"été.md":      "non-ASCII name\n",
	"old/only.go": "package old\n",
}

func TestObjectIDsAreGits(t *testing.T) {
	t.Parallel()
	g := newGitRepo(t)
	s := ghtest.NewServer(t, token)

	// A seeded repository: its tree and root commit.
	base := s.AddRepo("o/r", "main", seedFiles)
	files := map[string]gitFile{}
	for p, c := range seedFiles {
		files[p] = gitFile{"100644", c}
	}
	baseTree := g.tree(files)
	var bc object
	call(t, s, "GET", "/repos/o/r/git/commits/"+base, nil, 200, &bc)
	if bc.Tree.SHA != baseTree {
		t.Errorf("seeded tree = %s, git's = %s", bc.Tree.SHA, baseTree)
	}
	if want := g.commit(baseTree, "initial commit"); base != want {
		t.Errorf("seeded commit = %s, git's = %s", base, want)
	}

	// Blobs, base64 and utf-8: empty, binary, large.
	for _, content := range []string{"", "hello\n", "no newline", "\x00\xff\xfe binary\r\n", strings.Repeat("long line ", 5000)} {
		want := g.blob(content)
		var b64, utf object
		call(t, s, "POST", "/repos/o/r/git/blobs", map[string]string{
			"content": base64.StdEncoding.EncodeToString([]byte(content)), "encoding": "base64"}, 201, &b64)
		if b64.SHA != want {
			t.Errorf("blob %.20q (base64) = %s, git's = %s", content, b64.SHA, want)
		}
		if !utf8.ValidString(content) {
			continue
		}
		call(t, s, "POST", "/repos/o/r/git/blobs", map[string]string{"content": content, "encoding": "utf-8"}, 201, &utf)
		if utf.SHA != want {
			t.Errorf("blob %.20q (utf-8) = %s, git's = %s", content, utf.SHA, want)
		}
	}

	// A tree over the base tree: changed, new (executable, symlink, nested,
	// inline content) and deleted files, the last file of old/ among them.
	str := func(s string) *string { return &s }
	var blob object
	call(t, s, "POST", "/repos/o/r/git/blobs", map[string]string{"content": "#!/bin/sh\nexit 0\n"}, 201, &blob)
	var tree object
	call(t, s, "POST", "/repos/o/r/git/trees", map[string]any{"base_tree": baseTree, "tree": []treeEntry{
		{Path: "a.txt", Mode: "100644", Type: "blob", Content: str("changed\n")},
		{Path: "bin/run.sh", Mode: "100755", Type: "blob", SHA: &blob.SHA},
		{Path: "a/c/run", Mode: "100755", Type: "blob", SHA: &blob.SHA},
		{Path: "a/link", Mode: "120000", Type: "blob", Content: str("../a.txt")},
		{Path: "new/deep/er/file.txt", Mode: "100644", Type: "blob", Content: str("new\n")},
		{Path: "old/only.go", Mode: "100644", Type: "blob"},
		{Path: "a-b", Mode: "100644", Type: "blob"},
	}}, 201, &tree)
	files["a.txt"] = gitFile{"100644", "changed\n"}
	files["bin/run.sh"] = gitFile{"100755", "#!/bin/sh\nexit 0\n"}
	files["a/c/run"] = gitFile{"100755", "#!/bin/sh\nexit 0\n"}
	files["a/link"] = gitFile{"120000", "../a.txt"}
	files["new/deep/er/file.txt"] = gitFile{"100644", "new\n"}
	delete(files, "old/only.go")
	delete(files, "a-b")
	newTree := g.tree(files)
	if tree.SHA != newTree {
		t.Errorf("tree = %s, git's = %s", tree.SHA, newTree)
	}

	// Commits: one parent, and a merge with a message lacking a final newline.
	var c1, c2 object
	msg := "fix: the parser\n\nBody line.\n"
	call(t, s, "POST", "/repos/o/r/git/commits", map[string]any{"message": msg, "tree": tree.SHA, "parents": []string{base}}, 201, &c1)
	if want := g.commit(newTree, msg, base); c1.SHA != want {
		t.Errorf("commit = %s, git's = %s", c1.SHA, want)
	}
	call(t, s, "POST", "/repos/o/r/git/commits", map[string]any{"message": "merge", "tree": baseTree, "parents": []string{c1.SHA, base}}, 201, &c2)
	if want := g.commit(baseTree, "merge", g.commit(newTree, msg, base), base); c2.SHA != want {
		t.Errorf("merge commit = %s, git's = %s", c2.SHA, want)
	}

	// Trees from nothing, checked with git mktree: empty, and one level.
	var empty, flat object
	call(t, s, "POST", "/repos/o/r/git/trees", map[string]any{"tree": []treeEntry{}}, 201, &empty)
	if want := g.run("", "mktree"); empty.SHA != want {
		t.Errorf("empty tree = %s, git's = %s", empty.SHA, want)
	}
	call(t, s, "POST", "/repos/o/r/git/trees", map[string]any{"tree": []treeEntry{
		{Path: "y", Mode: "100755", Type: "blob", SHA: &blob.SHA},
		{Path: "x", Mode: "100644", Type: "blob", SHA: &blob.SHA},
	}}, 201, &flat)
	mk := fmt.Sprintf("100644 blob %s\tx\n100755 blob %s\ty\n", blob.SHA, blob.SHA)
	if want := g.run(mk, "mktree"); flat.SHA != want {
		t.Errorf("one-level tree = %s, git's = %s", flat.SHA, want)
	}
}

func TestCreateTree_refusesWhatGitCannotWrite(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	base := s.AddRepo("o/r", "main", map[string]string{"a.txt": "a\n", "d/f": "f\n"})
	var bc object
	call(t, s, "GET", "/repos/o/r/git/commits/"+base, nil, 200, &bc)
	content := "x\n"
	for _, p := range []string{"a.txt/x", "d", "a//b", "a/", "./a", "a/../b"} {
		call(t, s, "POST", "/repos/o/r/git/trees", map[string]any{"base_tree": bc.Tree.SHA, "tree": []treeEntry{
			{Path: p, Mode: "100644", Type: "blob", Content: &content},
		}}, 422, nil)
	}
}
