package ghapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestPullRequest(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/octo-org/octo-repo/pulls/42", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		writeJSON(w, 200, readTestdata(t, "pull_42.json"))
	})
	pr, err := f.client.PullRequest(t.Context(), "octo-org", "octo-repo", 42)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "pr", pr, &PR{
		Number: 42, State: "open", Title: "Parser: accept empty input", Body: "Fixes #41",
		HTMLURL: "https://github.com/octo-org/octo-repo/pull/42", Author: "contributor",
		HeadSHA: "f83a356604ae3c5d03e1b46ef4d1ca77d64a90b0", HeadRef: "feature/parser",
		HeadRepo: "contributor/octo-repo", BaseRef: "main", BaseRepo: "octo-org/octo-repo",
		Labels: []string{"mini-agent:push", "bug"},
	})
	if !pr.IsFork() {
		t.Error("IsFork = false for a head in contributor/octo-repo")
	}
	if !pr.HasLabel("Mini-Agent:Push") || pr.HasLabel("mini-agent:off") {
		t.Error("HasLabel is wrong")
	}
	same := &PR{HeadRepo: "Octo-Org/octo-repo", BaseRepo: "octo-org/octo-repo"}
	if same.IsFork() {
		t.Error("IsFork = true for the same repository")
	}
	if (&PR{BaseRepo: "o/r"}).IsFork() != true {
		t.Error("a deleted fork (empty head repo) must count as a fork")
	}
}

func TestFindOpenPR_queryString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want *PR
	}{
		{name: "none", body: `[]`, want: nil},
		{
			name: "one",
			body: `[{"number":7,"state":"open","draft":true,"head":{"ref":"mini-agent/fix-0a1b2c3d","sha":"aaa","repo":{"full_name":"o/r"}},"base":{"ref":"main","repo":{"full_name":"o/r"}}}]`,
			want: &PR{Number: 7, State: "open", Draft: true, HeadRef: "mini-agent/fix-0a1b2c3d", HeadSHA: "aaa",
				HeadRepo: "o/r", BaseRef: "main", BaseRepo: "o/r"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			f.handle("/repos/o/r/pulls", func(w http.ResponseWriter, r *http.Request) {
				testMethod(t, r, "GET")
				testFormValues(t, r, map[string]string{
					"state": "open", "head": "o:mini-agent/fix-0a1b2c3d",
					"sort": "created", "direction": "desc", "per_page": "100",
				})
				writeJSON(w, 200, tt.body)
			})
			got, err := f.client.FindOpenPR(t.Context(), "o", "r", "o", "mini-agent/fix-0a1b2c3d")
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "pr", got, tt.want)
		})
	}
}

func TestFindClosedPR_skipsMerged(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/pulls", func(w http.ResponseWriter, r *http.Request) {
		testFormValues(t, r, map[string]string{
			"state": "closed", "head": "o:mini-agent/fix-1", "sort": "created", "direction": "desc", "per_page": "100",
		})
		writeJSON(w, 200, `[
			{"number":9,"state":"closed","merged_at":"2026-02-01T10:00:00Z","head":{"sha":"merged"}},
			{"number":8,"state":"closed","merged_at":null,"closed_at":"2026-01-31T09:00:00Z","head":{"sha":"refused"}}
		]`)
	})
	got, err := f.client.FindClosedPR(t.Context(), "o", "r", "o", "mini-agent/fix-1")
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "pr", got, &PR{Number: 8, State: "closed", HeadSHA: "refused", ClosedAt: time.Date(2026, 1, 31, 9, 0, 0, 0, time.UTC)})
}

func TestPRsForBranch_badArgsMakeNoCall(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, args := range [][3]string{{"o", "b", "merged"}, {"", "b", "open"}, {"o", "", "all"}} {
		if _, err := f.client.PRsForBranch(t.Context(), "o", "r", args[0], args[1], args[2]); err == nil {
			t.Errorf("PRsForBranch%v: no error", args)
		}
	}
}

func TestCreatePR(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/pulls", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"title":"fix: parser","head":"mini-agent/fix-1","base":"feature/parser",
			"body":"body <!-- mini-agent:sig=1 -->","draft":true,"maintainer_can_modify":true}`)
		writeJSON(w, 201, `{"number":43,"state":"open","draft":true,"html_url":"https://github.com/o/r/pull/43","head":{"ref":"mini-agent/fix-1"},"base":{"ref":"feature/parser"}}`)
	})
	got, err := f.client.CreatePR(t.Context(), "o", "r", NewPR{
		Title: "fix: parser", Body: "body <!-- mini-agent:sig=1 -->", Head: "mini-agent/fix-1", Base: "feature/parser", Draft: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "pr", got, &PR{Number: 43, State: "open", Draft: true, HTMLURL: "https://github.com/o/r/pull/43",
		HeadRef: "mini-agent/fix-1", BaseRef: "feature/parser"})
}

func TestCreatePR_alreadyExists(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/pulls", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 422, `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for o:mini-agent/fix-1."}]}`)
	})
	_, err := f.client.CreatePR(t.Context(), "o", "r", NewPR{Title: "t", Head: "mini-agent/fix-1", Base: "main"})
	if !errors.Is(err, ErrUnprocessable) || !strings.Contains(err.Error(), "A pull request already exists") {
		t.Fatalf("err = %v, want unprocessable with GitHub's detail", err)
	}
}

func TestUpdatePR(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/pulls/43", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "PATCH")
		testJSONBody(t, r, `{"body":"new body"}`)
		writeJSON(w, 200, `{"number":43,"state":"open","body":"new body"}`)
	})
	body := "new body"
	got, err := f.client.UpdatePR(t.Context(), "o", "r", 43, PRUpdate{Body: &body})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "pr", got, &PR{Number: 43, State: "open", Body: "new body"})
	if _, err := f.client.UpdatePR(t.Context(), "o", "r", 43, PRUpdate{}); err == nil {
		t.Error("empty update accepted")
	}
}

func TestRequestReviewers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/pulls/43/requested_reviewers", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"reviewers":["alice"],"team_reviewers":["core"]}`)
		writeJSON(w, 201, `{"number":43}`)
	})
	if err := f.client.RequestReviewers(t.Context(), "o", "r", 43, []string{"alice"}, []string{"core"}); err != nil {
		t.Fatal(err)
	}
	if err := f.client.RequestReviewers(t.Context(), "o", "r", 43, nil, nil); err != nil {
		t.Fatalf("no reviewers: %v", err)
	}
	if n := f.count("/repos/o/r/pulls/43/requested_reviewers"); n != 1 {
		t.Errorf("%d requests, want 1 (an empty request makes none)", n)
	}
}
