package ghtest

import (
	"net/http"
	"slices"
	"strings"
)

func (s *Server) routePulls(mux *http.ServeMux) {
	s.handle(mux, "GET /repos/{owner}/{repo}/pulls", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		q := r.URL.Query()
		state := cmpOr(q.Get("state"), "open")
		var out []map[string]any
		for _, p := range slices.Backward(rp.pulls) { // newest first
			owner, _, _ := strings.Cut(p.HeadRepo, "/")
			if (state != "all" && p.State != state) ||
				(q.Get("head") != "" && !strings.EqualFold(q.Get("head"), owner+":"+p.Head)) ||
				(q.Get("base") != "" && q.Get("base") != p.Base) {
				continue
			}
			out = append(out, rp.pullJSON(p))
		}
		writeJSON(w, 200, paginate(w, r, out))
	})

	s.handle(mux, "POST /repos/{owner}/{repo}/pulls", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		var in struct {
			Title, Head, Base, Body string
			Draft                   bool
		}
		if !decode(w, r, &in) {
			return
		}
		owner, _, _ := strings.Cut(rp.fullName, "/")
		head := in.Head
		if o, b, ok := strings.Cut(in.Head, ":"); ok {
			if !strings.EqualFold(o, owner) {
				writeErr(w, 422, "forks are not modelled by ghtest")
				return
			}
			head = b
		}
		switch {
		case in.Title == "":
			writeErr(w, 422, "Validation Failed: title is missing")
			return
		case rp.refs["heads/"+head] == "" || rp.refs["heads/"+in.Base] == "":
			writeErr(w, 422, "Validation Failed: head or base branch does not exist")
			return
		}
		for _, p := range rp.pulls {
			if p.State == "open" && p.Head == head && p.Base == in.Base && strings.EqualFold(p.HeadRepo, rp.fullName) {
				writeJSON(w, 422, map[string]any{"message": "Validation Failed", "errors": []map[string]any{
					{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for " + owner + ":" + head + "."}}})
				return
			}
		}
		n := len(rp.issues) + 1
		rp.issues[n] = &issue{number: n}
		p := &pull{PR{Number: n, Title: in.Title, Body: in.Body, State: "open", Draft: in.Draft,
			Head: head, HeadRepo: rp.fullName, Base: in.Base, Author: BotLogin}}
		rp.pulls = append(rp.pulls, p)
		writeJSON(w, 201, rp.pullJSON(p))
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/pulls/{number}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		if p := rp.pullByNumber(w, r); p != nil {
			writeJSON(w, 200, rp.pullJSON(p))
		}
	})

	s.handle(mux, "PATCH /repos/{owner}/{repo}/pulls/{number}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		p := rp.pullByNumber(w, r)
		var in struct{ Title, Body, State *string }
		if p == nil || !decode(w, r, &in) {
			return
		}
		if in.Title != nil {
			p.Title = *in.Title
		}
		if in.Body != nil {
			p.Body = *in.Body
		}
		if in.State != nil {
			p.State = *in.State
		}
		writeJSON(w, 200, rp.pullJSON(p))
	})

	s.handle(mux, "POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		p := rp.pullByNumber(w, r)
		var in struct {
			Reviewers     []string `json:"reviewers"`
			TeamReviewers []string `json:"team_reviewers"`
		}
		if p == nil || !decode(w, r, &in) {
			return
		}
		is := rp.issues[p.Number]
		is.reviewers = append(is.reviewers, in.Reviewers...)
		for _, t := range in.TeamReviewers {
			is.reviewers = append(is.reviewers, "team:"+t)
		}
		writeJSON(w, 201, rp.pullJSON(p))
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/issues/{number}/comments", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		is := rp.issueByNumber(w, r)
		if is == nil {
			return
		}
		out := []map[string]any{}
		for _, c := range is.comments {
			out = append(out, commentJSON(c))
		}
		if r.URL.Query().Get("direction") == "desc" {
			slices.Reverse(out)
		}
		writeJSON(w, 200, paginate(w, r, out))
	})

	s.handle(mux, "POST /repos/{owner}/{repo}/issues/{number}/comments", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		is := rp.issueByNumber(w, r)
		var in struct{ Body string }
		if is == nil || !decode(w, r, &in) {
			return
		}
		if in.Body == "" {
			writeErr(w, 422, "Validation Failed: body is missing")
			return
		}
		c := &Comment{ID: s.id(), Body: in.Body, Author: BotLogin, AuthorType: "Bot", Association: "NONE"}
		is.comments = append(is.comments, c)
		writeJSON(w, 201, commentJSON(c))
	})

	s.handle(mux, "PATCH /repos/{owner}/{repo}/issues/comments/{id}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		c := rp.commentByID(w, r)
		var in struct{ Body string }
		if c == nil || !decode(w, r, &in) {
			return
		}
		if c.Author != BotLogin {
			writeErr(w, 403, "Resource not accessible by integration")
			return
		}
		c.Body = in.Body
		writeJSON(w, 200, commentJSON(c))
	})

	s.handle(mux, "POST /repos/{owner}/{repo}/issues/comments/{id}/reactions", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		c := rp.commentByID(w, r)
		var in struct{ Content string }
		if c == nil || !decode(w, r, &in) {
			return
		}
		status := 200 // GitHub answers 200 when the reaction already exists
		if !slices.Contains(c.Reactions, in.Content) {
			c.Reactions, status = append(c.Reactions, in.Content), 201
		}
		writeJSON(w, status, map[string]any{"id": s.id(), "content": in.Content, "user": map[string]any{"login": BotLogin}})
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/issues/{number}/labels", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		if is := rp.issueByNumber(w, r); is != nil {
			writeJSON(w, 200, paginate(w, r, labelsJSON(is.labels)))
		}
	})

	s.handle(mux, "POST /repos/{owner}/{repo}/issues/{number}/labels", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		is := rp.issueByNumber(w, r)
		var in []string
		if is == nil || !decode(w, r, &in) {
			return
		}
		for _, l := range in {
			if !slices.Contains(is.labels, l) {
				is.labels = append(is.labels, l)
			}
		}
		writeJSON(w, 200, labelsJSON(is.labels))
	})
}

func labelsJSON(labels []string) []map[string]any {
	out := []map[string]any{}
	for _, l := range labels {
		out = append(out, map[string]any{"name": l})
	}
	return out
}
