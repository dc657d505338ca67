package ghapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

const marker = "<!-- mini-agent:tracking -->"

func TestCreateAndUpdateComment(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/issues/42/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"body":"`+marker+`\nworking on it"}`)
		writeJSON(w, 201, `{"id":1001,"body":"x","user":{"login":"github-actions[bot]","type":"Bot"},"author_association":"NONE","html_url":"https://github.com/o/r/pull/42#issuecomment-1001"}`)
	})
	f.handle("/repos/o/r/issues/comments/1001", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "PATCH")
		testJSONBody(t, r, `{"body":"done"}`)
		writeJSON(w, 200, `{"id":1001,"body":"done"}`)
	})
	c, err := f.client.CreateComment(t.Context(), "o", "r", 42, marker+"\nworking on it")
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "comment", c, &Comment{ID: 1001, Body: "x", Author: "github-actions[bot]", AuthorType: "Bot",
		Association: "NONE", HTMLURL: "https://github.com/o/r/pull/42#issuecomment-1001"})
	c, err = f.client.UpdateComment(t.Context(), "o", "r", 1001, "done")
	if err != nil || c.Body != "done" {
		t.Fatalf("UpdateComment = %+v, %v", c, err)
	}
	for _, body := range []string{"", "  \n", strings.Repeat("x", MaxCommentBytes+1)} {
		if _, err := f.client.CreateComment(t.Context(), "o", "r", 42, body); err == nil {
			t.Errorf("comment of %d bytes accepted", len(body))
		}
	}
}

func TestFindCommentWithMarker_paginates(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"": `[{"id":1,"body":"first"},{"id":2,"body":"> ` + marker + `\n> quoted by a user"}]`,
		"2": `[{"id":3,"body":"mentions ` + marker + ` mid-line"},{"id":6,"body":"` + marker + `\nforged by a person","user":{"login":"mallory","type":"User"}},` +
			// another workflow's bot echoing a PR body that carries the marker
			`{"id":7,"body":"PR summary:\n` + marker + `\nfrom the PR body","user":{"login":"github-actions[bot]","type":"Bot"}}]`,
		"3": `[{"id":4,"body":"` + marker + `\nstatus: running","user":{"login":"github-actions[bot]","type":"Bot"}},{"id":5,"body":"` + marker + `"}]`,
	}
	f := setup(t)
	f.handle("/repos/o/r/issues/42/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		page := r.URL.Query().Get("page")
		want := map[string]string{"sort": "created", "direction": "asc", "per_page": "100"}
		if page != "" {
			want["page"] = page
		}
		testFormValues(t, r, want)
		next := map[string]string{"": "2", "2": "3"}[page]
		if next != "" {
			w.Header().Set("Link", fmt.Sprintf(`<%s%s/repos/o/r/issues/42/comments?page=%s>; rel="next", <%s%s/repos/o/r/issues/42/comments?page=3>; rel="last"`,
				f.server.URL, baseURLPath, next, f.server.URL, baseURLPath))
		}
		writeJSON(w, 200, pages[page])
	})
	got, err := f.client.FindCommentWithMarker(t.Context(), "o", "r", 42, marker)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "comment", got, &Comment{ID: 4, Body: marker + "\nstatus: running", Author: "github-actions[bot]", AuthorType: "Bot"})
	if n := f.count("/repos/o/r/issues/42/comments"); n != 3 {
		t.Errorf("%d pages fetched, want 3", n)
	}
}

func TestFindCommentWithMarker_none(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/issues/5/comments", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `[{"id":1,"body":"hello"}]`)
	})
	got, err := f.client.FindCommentWithMarker(t.Context(), "o", "r", 5, marker)
	if err != nil || got != nil {
		t.Fatalf("got %+v, %v; want nil, nil", got, err)
	}
	if _, err := f.client.FindCommentWithMarker(t.Context(), "o", "r", 5, " "); err == nil {
		t.Error("empty marker accepted")
	}
}

func TestReactToComment(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/issues/comments/77/reactions", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"content":"eyes"}`)
		writeJSON(w, 201, `{"id":1,"content":"eyes"}`)
	})
	if err := f.client.ReactToComment(t.Context(), "o", "r", 77, "eyes"); err != nil {
		t.Fatal(err)
	}
	if err := f.client.ReactToComment(t.Context(), "o", "r", 77, "👀"); err == nil {
		t.Error("unknown reaction accepted")
	}
}

func TestLabels(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("GET /repos/o/r/issues/42/labels", func(w http.ResponseWriter, r *http.Request) {
		testFormValues(t, r, map[string]string{"per_page": "100"})
		writeJSON(w, 200, `[{"name":"mini-agent:read-only"},{"name":"bug"}]`)
	})
	f.handle("POST /repos/o/r/issues/42/labels", func(w http.ResponseWriter, r *http.Request) {
		testJSONBody(t, r, `["mini-agent:fix"]`)
		writeJSON(w, 200, `[{"name":"mini-agent:fix"}]`)
	})
	got, err := f.client.Labels(t.Context(), "o", "r", 42)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "labels", got, []string{"mini-agent:read-only", "bug"})
	if err := f.client.AddLabels(t.Context(), "o", "r", 42, "mini-agent:fix"); err != nil {
		t.Fatal(err)
	}
	if err := f.client.AddLabels(t.Context(), "o", "r", 42); err != nil {
		t.Fatal(err)
	}
}
