package ghapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

const (
	baseSHA   = "7638417db6d59f3c431d3e1f261cc637155684cd"
	baseTree  = "691272480426f78a0138979dd3ce63b77f706feb"
	newTree   = "cd8274d15fa3ae2ab983129fb037999f264ba9a7"
	newCommit = "7044a8a032e85b6ab611033b2ac8af7ce85805b2"
)

// gitFixture serves the Git Data calls of CommitFiles on branch and checks
// every request's shape.
type gitFixture struct {
	*fixture
	mu    sync.Mutex
	blobs map[string]string // blob sha -> content
}

func newGitFixture(t *testing.T) *gitFixture {
	g := &gitFixture{fixture: setup(t), blobs: map[string]string{}}
	g.handle("/repos/o/r/git/commits/"+baseSHA, func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		writeJSON(w, 200, `{"sha":"`+baseSHA+`","tree":{"sha":"`+baseTree+`"},"parents":[],"message":"base"}`)
	})
	g.handle("/repos/o/r/git/blobs", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "POST")
		var b struct{ Content, Encoding string }
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			t.Errorf("blob body: %v", err)
		}
		if b.Encoding != "base64" {
			t.Errorf("blob encoding = %q, want base64", b.Encoding)
		}
		raw, err := base64.StdEncoding.DecodeString(b.Content)
		if err != nil {
			t.Errorf("blob content is not base64: %v", err)
		}
		sha := map[string]string{
			"package main\n":      "1111111111111111111111111111111111111111",
			"#!/bin/sh\nexit 0\n": "2222222222222222222222222222222222222222",
			"\x00\xffbinary":      "3333333333333333333333333333333333333333",
		}[string(raw)]
		if sha == "" {
			t.Errorf("unexpected blob %q", raw)
		}
		g.mu.Lock()
		g.blobs[sha] = string(raw)
		g.mu.Unlock()
		writeJSON(w, 201, `{"sha":"`+sha+`","url":"x"}`)
	})
	g.handle("/repos/o/r/git/trees", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"base_tree":"`+baseTree+`","tree":[
			{"path":"cmd/main.go","mode":"100644","type":"blob","sha":"1111111111111111111111111111111111111111"},
			{"path":"scripts/check.sh","mode":"100755","type":"blob","sha":"2222222222222222222222222222222222222222"},
			{"path":"testdata/bin.dat","mode":"100644","type":"blob","sha":"3333333333333333333333333333333333333333"},
			{"path":"old/name.go","mode":"100644","type":"blob","sha":null}
		]}`)
		writeJSON(w, 201, `{"sha":"`+newTree+`","tree":[]}`)
	})
	g.handle("/repos/o/r/git/commits", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"message":"fix: parser\n\nby mini-agent","tree":"`+newTree+`","parents":["`+baseSHA+`"]}`)
		writeJSON(w, 201, `{"sha":"`+newCommit+`","tree":{"sha":"`+newTree+`"},"verification":{"verified":true}}`)
	})
	return g
}

func commitRequest(branch string) CommitRequest {
	return CommitRequest{
		BaseSHA: baseSHA,
		Branch:  branch,
		Message: "fix: parser\n\nby mini-agent",
		Changes: []FileChange{
			{Path: "cmd/main.go", Content: []byte("package main\n")},
			{Path: "scripts/check.sh", Content: []byte("#!/bin/sh\nexit 0\n"), Mode: ModeExecutable},
			{Path: "testdata/bin.dat", Content: []byte("\x00\xffbinary"), Mode: ModeFile},
			{Path: "old/name.go", Delete: true},
		},
	}
}

func TestCommitFiles_createBranch(t *testing.T) {
	t.Parallel()
	g := newGitFixture(t)
	g.handle("/repos/o/r/git/refs", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"ref":"refs/heads/mini-agent/fix-0a1b2c3d","sha":"`+newCommit+`"}`)
		writeJSON(w, 201, `{"ref":"refs/heads/mini-agent/fix-0a1b2c3d","object":{"sha":"`+newCommit+`"}}`)
	})
	req := commitRequest("mini-agent/fix-0a1b2c3d")
	req.CreateBranch = true
	got, err := g.client.CommitFiles(t.Context(), "o", "r", req)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "result", got, &CommitResult{SHA: newCommit, TreeSHA: newTree, Branch: "mini-agent/fix-0a1b2c3d", Created: true})
	if n := g.count("/repos/o/r/git/blobs"); n != 3 {
		t.Errorf("%d blobs created, want 3 (deletions need none)", n)
	}
}

func TestCommitFiles_updateBranch(t *testing.T) {
	t.Parallel()
	for _, force := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast-forward", true: "force"}[force], func(t *testing.T) {
			t.Parallel()
			g := newGitFixture(t)
			g.handle("/repos/o/r/git/ref/heads/feature/parser", func(w http.ResponseWriter, r *http.Request) {
				testMethod(t, r, "GET")
				writeJSON(w, 200, `{"ref":"refs/heads/feature/parser","object":{"sha":"`+baseSHA+`","type":"commit"}}`)
			})
			g.handle("/repos/o/r/git/refs/heads/feature/parser", func(w http.ResponseWriter, r *http.Request) {
				testMethod(t, r, "PATCH")
				want := `{"sha":"` + newCommit + `","force":false}`
				if force {
					want = strings.Replace(want, "false", "true", 1)
				}
				testJSONBody(t, r, want)
				writeJSON(w, 200, `{"ref":"refs/heads/feature/parser","object":{"sha":"`+newCommit+`"}}`)
			})
			req := commitRequest("feature/parser")
			req.ExpectedHead = baseSHA
			req.Force = force
			got, err := g.client.CommitFiles(t.Context(), "o", "r", req)
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "result", got, &CommitResult{SHA: newCommit, TreeSHA: newTree, Branch: "feature/parser"})
		})
	}
}

func TestCommitFiles_headMovedWritesNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/git/ref/heads/feature/parser", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"ref":"refs/heads/feature/parser","object":{"sha":"9999999999999999999999999999999999999999"}}`)
	})
	req := commitRequest("feature/parser")
	req.ExpectedHead = baseSHA
	_, err := f.client.CommitFiles(t.Context(), "o", "r", req)
	if !errors.Is(err, ErrHeadMoved) || !strings.Contains(err.Error(), "9999999") {
		t.Fatalf("err = %v, want ErrHeadMoved naming the new head", err)
	}
	// Any blob/tree/commit/ref request would have hit the unexpected handler.
}

func TestCommitFiles_notFastForward(t *testing.T) {
	t.Parallel()
	g := newGitFixture(t)
	g.handle("/repos/o/r/git/refs/heads/feature/parser", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		writeJSON(w, 422, `{"message":"Update is not a fast forward","documentation_url":"https://docs.github.com/rest/git/refs#update-a-reference"}`)
	})
	_, err := g.client.CommitFiles(t.Context(), "o", "r", commitRequest("feature/parser"))
	if !errors.Is(err, ErrHeadMoved) || errors.Is(err, ErrUnprocessable) {
		t.Fatalf("err = %v, want ErrHeadMoved only", err)
	}
}

func TestCommitFiles_invalidRequestsMakeNoCall(t *testing.T) {
	t.Parallel()
	f := setup(t) // no handlers: any request fails the test
	mod := func(fn func(*CommitRequest)) CommitRequest {
		r := commitRequest("fix")
		fn(&r)
		return r
	}
	tests := map[string]CommitRequest{
		"empty branch":        mod(func(r *CommitRequest) { r.Branch = "" }),
		"refs prefix":         mod(func(r *CommitRequest) { r.Branch = "refs/heads/x" }),
		"dotdot branch":       mod(func(r *CommitRequest) { r.Branch = "a..b" }),
		"short base":          mod(func(r *CommitRequest) { r.BaseSHA = "abc" }),
		"no message":          mod(func(r *CommitRequest) { r.Message = " " }),
		"no changes":          mod(func(r *CommitRequest) { r.Changes = nil }),
		"absolute path":       mod(func(r *CommitRequest) { r.Changes[0].Path = "/etc/passwd" }),
		"dotdot path":         mod(func(r *CommitRequest) { r.Changes[0].Path = "a/../../b" }),
		"git dir":             mod(func(r *CommitRequest) { r.Changes[0].Path = ".git/config" }),
		"unclean path":        mod(func(r *CommitRequest) { r.Changes[0].Path = "a//b" }),
		"symlink mode":        mod(func(r *CommitRequest) { r.Changes[0].Mode = "120000" }),
		"twice":               mod(func(r *CommitRequest) { r.Changes[3].Path = "cmd/main.go" }),
		"delete with content": mod(func(r *CommitRequest) { r.Changes[3].Content = []byte("x") }),
		"expected on create":  mod(func(r *CommitRequest) { r.CreateBranch, r.ExpectedHead = true, baseSHA }),
		"huge":                mod(func(r *CommitRequest) { r.Changes[0].Content = make([]byte, MaxBlobBytes+1) }),
	}
	for name, req := range tests {
		if _, err := f.client.CommitFiles(t.Context(), "o", "r", req); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
