package ghapi

import (
	"errors"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
)

// TestRefusalsAgainstTheFake: the fake's repository settings refuse as
// GitHub does, and ghapi classifies each: a read-only token, a token
// without pull-requests: write, the Actions PR setting off, a ruleset that
// restricts creating the fix branch (also visible through the rules and
// rulesets endpoints, with the token's bypass).
func TestRefusalsAgainstTheFake(t *testing.T) {
	t.Parallel()
	newClient := func(t *testing.T, s *ghtest.Server) *Client {
		c, err := New(t.Context(), Options{Token: "tok", BaseURL: s.URL, WriteInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := func(t *testing.T) (*ghtest.Server, *Client, string) {
		s := ghtest.NewServer(t, "tok")
		head := s.AddRepo("o/r", "main", map[string]string{"a.go": "package a\n"})
		return s, newClient(t, s), head
	}
	commit := func(c *Client, head, branch string) error {
		_, err := c.CommitFiles(t.Context(), "o", "r", CommitRequest{BaseSHA: head, Branch: branch, Message: "m\n",
			Changes: []FileChange{{Path: "a.go", Content: []byte("package a // fixed\n")}}, CreateBranch: true})
		return err
	}
	t.Run("read-only token", func(t *testing.T) {
		t.Parallel()
		s, c, head := base(t)
		s.SetTokenPermissions(map[string]string{"contents": "read", "pull-requests": "write"})
		err := commit(c, head, "fix")
		var ae *APIError
		if !errors.As(err, &ae) || ae.Refusal != RefusalTokenPermission || ae.NeededPermission() != "contents: write" {
			t.Fatalf("err = %v", err)
		}
		if _, err := c.CreateBlob(t.Context(), "o", "r", nil); !errors.As(err, &ae) || ae.Refusal != RefusalTokenPermission {
			t.Errorf("CreateBlob: %v", err)
		}
	})
	t.Run("no pull-requests: write", func(t *testing.T) {
		t.Parallel()
		s, c, head := base(t)
		s.SetTokenPermissions(map[string]string{"contents": "write"})
		if err := commit(c, head, "fix"); err != nil {
			t.Fatal(err)
		}
		_, err := c.CreatePR(t.Context(), "o", "r", NewPR{Title: "t", Head: "fix", Base: "main"})
		var ae *APIError
		if !errors.As(err, &ae) || ae.Refusal != RefusalTokenPermission || ae.NeededPermission() != "pull-requests: write" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("Actions may not create PRs", func(t *testing.T) {
		t.Parallel()
		s, c, head := base(t)
		s.SetActionsCanCreatePRs("o/r", false)
		if err := commit(c, head, "fix"); err != nil {
			t.Fatal(err)
		}
		_, err := c.CreatePR(t.Context(), "o", "r", NewPR{Title: "t", Head: "fix", Base: "main"})
		var ae *APIError
		if !errors.As(err, &ae) || ae.Refusal != RefusalActionsCannotCreatePRs || !errors.Is(err, ErrForbidden) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ruleset restricts creations", func(t *testing.T) {
		t.Parallel()
		s, c, head := base(t)
		s.AddRuleset("o/r", ghtest.Ruleset{ID: 42, Name: "all branches", Include: []string{"refs/heads/mini-agent/**", "~DEFAULT_BRANCH"}, Rules: []string{"creation", "deletion"}})
		s.AddRuleset("o/r", ghtest.Ruleset{ID: 43, Name: "trial", Include: []string{"~ALL"}, Rules: []string{"update"}, Evaluate: true})
		err := commit(c, head, "mini-agent/fix-1")
		var ae *APIError
		if !errors.As(err, &ae) || ae.Refusal != RefusalRuleset || len(ae.Rules) != 1 || ae.Rules[0] != "Cannot create ref due to creations being restricted." {
			t.Fatalf("err = %v (%+v)", err, ae)
		}
		rules, err := c.BranchRules(t.Context(), "o", "r", "mini-agent/fix-1")
		if err != nil || len(rules) != 2 || rules[0].Type != "creation" || rules[0].RulesetID != 42 {
			t.Fatalf("rules = %+v, %v", rules, err)
		}
		rs, err := c.GetRuleset(t.Context(), "o", "r", 42)
		if err != nil || rs.Name != "all branches" || rs.CurrentUserCanBypass != "never" || rs.Enforcement != "active" {
			t.Fatalf("ruleset = %+v, %v", rs, err)
		}
		// With a bypass for the token's actor, the same branch is created.
		s.AddRuleset("o/r", ghtest.Ruleset{ID: 44, Name: "bots", Include: []string{"refs/heads/bots/**"}, Rules: []string{"creation"}, Bypass: "always"})
		if err := commit(c, head, "bots/fix-1"); err != nil {
			t.Errorf("bypassed ruleset: %v", err)
		}
	})
}

// TestGitObjects: blobs round-trip, and a commit made through the API reads
// back with its tree, parents, message and GitHub's verification.
func TestGitObjects(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, "tok")
	head := s.AddRepo("o/r", "main", map[string]string{"a.go": "package a\n"})
	c, err := New(t.Context(), Options{Token: "tok", BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("line one\nline two é\n")
	sha, err := c.CreateBlob(t.Context(), "o", "r", want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Blob(t.Context(), "o", "r", sha)
	if err != nil || string(got) != string(want) {
		t.Fatalf("Blob = %q, %v", got, err)
	}
	res, err := c.CommitFiles(t.Context(), "o", "r", CommitRequest{BaseSHA: head, Branch: "fix", Message: "fix it\n\nTrailer: x\n",
		Changes: []FileChange{{Path: "a.go", Content: []byte("package a // fixed\n")}}, CreateBranch: true})
	if err != nil {
		t.Fatal(err)
	}
	ci, err := c.Commit(t.Context(), "o", "r", res.SHA)
	if err != nil || ci.Tree != res.TreeSHA || len(ci.Parents) != 1 || ci.Parents[0] != head || ci.Message != "fix it\n\nTrailer: x\n" || !ci.Verified {
		t.Fatalf("commit = %+v, %v", ci, err)
	}
	if seeded, err := c.Commit(t.Context(), "o", "r", head); err != nil || seeded.Verified {
		t.Errorf("a seeded push reads verified: %+v, %v", seeded, err)
	}
	if _, err := c.Blob(t.Context(), "o", "r", "nope"); err == nil {
		t.Error("a bad SHA was requested")
	}
}
