package ghapi

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
)

const adoptMarker = "Mini-Agent-Signature: abc123"

// refScene is a fake repo o/r with main, a client with a fake clock, and
// faults injected.
func refScene(t *testing.T, faults ...ghtest.Fault) (*ghtest.Server, *Client, string) {
	t.Helper()
	s := ghtest.NewServer(t, testToken)
	base := s.AddRepo("o/r", "main", map[string]string{"a.txt": "a\n"})
	for _, f := range faults {
		s.Inject(f)
	}
	c, err := New(t.Context(), Options{Token: testToken, BaseURL: s.URL, WriteInterval: -1, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, base
}

func createFix(t *testing.T, c *Client, base string) (*CommitResult, error) {
	t.Helper()
	return c.CommitFiles(t.Context(), "o", "r", CommitRequest{BaseSHA: base, Branch: "fix", CreateBranch: true,
		Message: "fix\n\n" + adoptMarker + "\n", Changes: []FileChange{{Path: "a.txt", Content: []byte("b\n")}}, AdoptMarker: adoptMarker})
}

func TestCommitFiles_lostCreateAnswerIsTheRunsBranch(t *testing.T) {
	t.Parallel()
	s, c, base := refScene(t, ghtest.Fault{Method: "POST", Path: "/repos/o/r/git/refs", Status: http.StatusBadGateway, Apply: true})
	res, err := createFix(t, c, base)
	if err != nil {
		t.Fatalf("CommitFiles: %v", err)
	}
	if s.Head("o/r", "fix") != res.SHA || !res.Created {
		t.Errorf("fix at %s, result %+v", s.Head("o/r", "fix"), res)
	}
	want := []string{"GET /repos/o/r/git/commits/" + base, "POST /repos/o/r/git/blobs", "POST /repos/o/r/git/trees",
		"POST /repos/o/r/git/commits", "POST /repos/o/r/git/refs", "POST /repos/o/r/git/refs", "GET /repos/o/r/git/ref/heads/fix"}
	if got := trail(s); !slices.Equal(got, want) {
		t.Errorf("requests = %q\nwant %q", got, want)
	}
}

func TestCommitFiles_existingBranch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, headMessage string
		adopted           bool
	}{
		{"marked as the caller's", "earlier attempt\n\n" + adoptMarker + "\n", true},
		{"adoptMarker only as a substring", "earlier attempt\n\n" + adoptMarker + "0\n", false},
		{"someone else's", "my work", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, c, base := refScene(t)
			old := s.Commit("o/r", "fix", tt.headMessage, map[string]string{"z.txt": "z\n"})
			res, err := createFix(t, c, base)
			if !tt.adopted {
				if !errors.Is(err, ErrBranchExists) || !strings.Contains(err.Error(), "fix already exists at "+old) ||
					!strings.Contains(err.Error(), "left unchanged") {
					t.Fatalf("err = %v, want ErrBranchExists naming the head", err)
				}
				if s.Head("o/r", "fix") != old || s.Count("PATCH", "/repos/o/r/git/refs") != 0 {
					t.Errorf("the branch was changed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Head("o/r", "fix") != res.SHA || res.Created || s.Parents("o/r", res.SHA)[0] != base {
				t.Errorf("fix at %s, result %+v", s.Head("o/r", "fix"), res)
			}
			tail := trail(s)[4:]
			want := []string{"POST /repos/o/r/git/refs", "GET /repos/o/r/git/ref/heads/fix", "GET /repos/o/r/git/commits/" + old,
				"PATCH /repos/o/r/git/refs/heads/fix"}
			if !slices.Equal(tail, want) {
				t.Errorf("requests after the commit = %q\nwant %q", tail, want)
			}
		})
	}
}

func TestCommitFiles_existingBranchWithoutMarkerIsLeftAlone(t *testing.T) {
	t.Parallel()
	s, c, base := refScene(t)
	old := s.Commit("o/r", "fix", "x\n\n"+adoptMarker+"\n", nil)
	_, err := c.CommitFiles(t.Context(), "o", "r", CommitRequest{BaseSHA: base, Branch: "fix", CreateBranch: true,
		Message: "fix", Changes: []FileChange{{Path: "a.txt", Content: []byte("b\n")}}})
	if !errors.Is(err, ErrBranchExists) || s.Head("o/r", "fix") != old {
		t.Fatalf("err = %v; fix at %s, want %s", err, s.Head("o/r", "fix"), old)
	}
}
