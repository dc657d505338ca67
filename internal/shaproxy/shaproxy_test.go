package shaproxy_test

import (
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/shaproxy"
)

func TestAliasBothWays(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, "tok")
	fake := s.AddRepo("o/r", "main", map[string]string{"a.txt": "a\n"})
	local := strings.Repeat("1a", 20)
	p := shaproxy.New(t, s.URL)
	p.Alias(local, fake)
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: "tok", BaseURL: p.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.BranchHead(t.Context(), "o", "r", "main")
	if err != nil || head != local {
		t.Fatalf("BranchHead = %q, %v; want the local SHA %s", head, err, local)
	}
	res, err := c.CommitFiles(t.Context(), "o", "r", ghapi.CommitRequest{BaseSHA: local, Branch: "fix", CreateBranch: true,
		Message: "m", Changes: []ghapi.FileChange{{Path: "b.txt", Content: []byte("b\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Parents("o/r", s.Head("o/r", "fix")); len(got) != 1 || got[0] != fake || res.SHA != s.Head("o/r", "fix") {
		t.Errorf("parents = %v, want the fake's %s", got, fake)
	}
}
