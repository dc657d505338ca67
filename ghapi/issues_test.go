package ghapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
)

const flakyMarker = "<!-- mini-agent:flaky id=0123abcd -->"

func TestCreateAndListIssues(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	s.AddPR("o/r", ghtest.PR{Head: "feature", Base: "main", Title: "a PR", Labels: []string{"flaky-test"}}) // PRs are issues too
	is, err := c.CreateIssue(t.Context(), "o", "r", NewIssue{Title: "Flaky: TestX", Body: "evidence\n" + flakyMarker + "\n", Labels: []string{"flaky-test"}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "created", []any{is.Number, is.State, is.Author, is.AuthorType, is.Labels}, []any{2, "open", ghtest.BotLogin, "Bot", []string{"flaky-test"}})
	s.AddIssue("o/r", ghtest.Issue{Title: "other", Labels: []string{"bug"}})
	closed := s.AddIssue("o/r", ghtest.Issue{Title: "dismissed", Labels: []string{"flaky-test"}})
	s.CloseIssue("o/r", closed)

	all, err := c.ListIssues(t.Context(), "o", "r", IssueFilter{Labels: []string{"flaky-test"}})
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, i := range all {
		nums = append(nums, i.Number)
	}
	equal(t, "labelled issues, open and closed, no PR", nums, []int{2, 4})
	open, err := c.ListIssues(t.Context(), "o", "r", IssueFilter{State: "open"})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "open issues", len(open), 2)
	for _, r := range s.Requests() {
		if r.Method == "GET" && r.Path == "/repos/o/r/issues" && r.Query.Get("labels") == "flaky-test" && r.Query.Get("state") != "all" {
			t.Errorf("state = %q, want all", r.Query.Get("state"))
		}
	}
	if _, err := c.ListIssues(t.Context(), "o", "r", IssueFilter{State: "merged"}); err == nil {
		t.Error("invalid state accepted")
	}
	if _, err := c.ListIssues(t.Context(), "o", "r", IssueFilter{Labels: []string{"a,b"}}); err == nil {
		t.Error("a label with a comma accepted")
	}
}

func TestListIssues_paginates(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	for range 130 {
		s.AddIssue("o/r", ghtest.Issue{Title: "x"})
	}
	is, err := c.ListIssues(t.Context(), "o", "r", IssueFilter{})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "issues", len(is), 130)
	equal(t, "first, oldest", is[0].Number, 1)
	equal(t, "requests", s.Count("GET", "/repos/o/r/issues"), 2)
}

func TestFindIssueWithMarker(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	// A person pasting the marker, a quote of it and a mention in text do not count.
	s.AddIssue("o/r", ghtest.Issue{Title: "mine", Author: "someone", Body: flakyMarker, Labels: []string{"flaky-test"}})
	s.AddIssue("o/r", ghtest.Issue{Title: "quote", Body: "> " + flakyMarker, Labels: []string{"flaky-test"}})
	s.AddIssue("o/r", ghtest.Issue{Title: "inline", Body: "see " + flakyMarker + " here", Labels: []string{"flaky-test"}})
	got, err := c.FindIssueWithMarker(t.Context(), "o", "r", flakyMarker, "flaky-test")
	if err != nil || got != nil {
		t.Fatalf("found %+v, %v; want none", got, err)
	}
	want := s.AddIssue("o/r", ghtest.Issue{Title: "ours", Body: "## evidence\n\n" + flakyMarker + "\n", Labels: []string{"flaky-test"}})
	s.CloseIssue("o/r", want)
	got, err = c.FindIssueWithMarker(t.Context(), "o", "r", flakyMarker, "flaky-test")
	if err != nil || got == nil || got.Number != want || got.State != "closed" {
		t.Fatalf("found %+v, %v; want closed #%d", got, err, want)
	}
	if _, err := c.FindIssueWithMarker(t.Context(), "o", "r", " "); err == nil {
		t.Error("empty marker accepted")
	}
}

func TestCreateIssue_refusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	for _, n := range []NewIssue{
		{Title: " ", Body: "b"},
		{Title: strings.Repeat("t", 257), Body: "b"},
		{Title: "t", Body: ""},
		{Title: "t", Body: strings.Repeat("b", MaxCommentBytes+1)},
	} {
		if _, err := c.CreateIssue(t.Context(), "o", "r", n); err == nil {
			t.Errorf("accepted %.20q / %d-byte body", n.Title, len(n.Body))
		}
	}
	equal(t, "requests", len(s.Requests()), 0)
}

func TestCreateIssue_forbiddenNamesThePermission(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	s.Inject(ghtest.Fault{Method: "POST", Path: "/repos/o/r/issues", Status: http.StatusForbidden})
	_, err := c.CreateIssue(t.Context(), "o", "r", NewIssue{Title: "t", Body: "b"})
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "issues: write") {
		t.Fatalf("err = %v", err)
	}
	equal(t, "issues", len(s.Issues("o/r")), 0)
}

func TestListComments(t *testing.T) {
	t.Parallel()
	s, c := historyScene(t)
	n := s.AddIssue("o/r", ghtest.Issue{Title: "x"})
	if _, err := c.CreateComment(t.Context(), "o", "r", n, "first"); err != nil {
		t.Fatal(err)
	}
	s.AddComment("o/r", n, "person", "OWNER", "second")
	cs, err := c.ListComments(t.Context(), "o", "r", n)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "comments", []any{len(cs), cs[0].Body, cs[0].AuthorType, cs[1].Author}, []any{2, "first", "Bot", "person"})
}
