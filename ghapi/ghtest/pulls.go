package ghtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// fixedTime stamps every created object, keeping responses deterministic.
var fixedTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Comment is an issue or PR comment as stored.
type Comment struct {
	ID          int64
	Body        string
	Author      string
	AuthorType  string
	Association string
	Reactions   []string
}

type issue struct {
	number    int
	labels    []string
	comments  []*Comment
	reviewers []string
}

// PR seeds or reports a pull request.
type PR struct {
	Number   int
	Title    string
	Body     string
	State    string // open (default) or closed
	Merged   bool
	Draft    bool
	Head     string // branch name
	HeadRepo string // "owner/name", default the base repository
	HeadSHA  string // for heads outside this fake (forks); else the branch head
	Base     string
	Author   string
	Labels   []string
}

type pull struct{ PR }

// AddPR seeds a pull request (or, with Head == "", a plain issue) and
// returns its number.
func (s *Server) AddPR(fullName string, pr PR) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	n := len(rp.issues) + 1
	rp.issues[n] = &issue{number: n, labels: pr.Labels}
	if pr.Head != "" {
		pr.Number = n
		pr.State = cmpOr(pr.State, "open")
		pr.HeadRepo = cmpOr(pr.HeadRepo, rp.fullName)
		pr.Author = cmpOr(pr.Author, "contributor")
		rp.pulls = append(rp.pulls, &pull{pr})
	}
	return n
}

// AddComment seeds a comment by author with association (OWNER, NONE, ...).
func (s *Server) AddComment(fullName string, number int, author, association, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	c := &Comment{ID: s.id(), Body: body, Author: author, AuthorType: "User", Association: association}
	rp.issues[number].comments = append(rp.issues[number].comments, c)
	return c.ID
}

// Pulls returns the repository's pull requests with current head SHAs and labels.
func (s *Server) Pulls(fullName string) []PR {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	var out []PR
	for _, p := range rp.pulls {
		pr := p.PR
		pr.HeadSHA, pr.Labels = rp.headSHA(p), slices.Clone(rp.issues[p.Number].labels)
		out = append(out, pr)
	}
	return out
}

// Comments returns the comments on number.
func (s *Server) Comments(fullName string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.repos[strings.ToLower(fullName)].issues[number].comments {
		cc := *c
		cc.Reactions = slices.Clone(c.Reactions)
		out = append(out, cc)
	}
	return out
}

// Labels returns the labels on number.
func (s *Server) Labels(fullName string, number int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.repos[strings.ToLower(fullName)].issues[number].labels)
}

// Reviewers returns the reviewers requested on number.
func (s *Server) Reviewers(fullName string, number int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.repos[strings.ToLower(fullName)].issues[number].reviewers)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// headSHA follows the branch for open same-repo PRs, as GitHub does.
func (rp *repo) headSHA(p *pull) string {
	if sha := rp.refs["heads/"+p.Head]; sha != "" && p.State == "open" && strings.EqualFold(p.HeadRepo, rp.fullName) {
		return sha
	}
	return p.HeadSHA
}

func (rp *repo) pullJSON(p *pull) map[string]any {
	owner, _, _ := strings.Cut(p.HeadRepo, "/")
	var labels []map[string]any
	for _, l := range rp.issues[p.Number].labels {
		labels = append(labels, map[string]any{"name": l})
	}
	var mergedAt, closedAt any
	if p.State == "closed" {
		closedAt = fixedTime
		if p.Merged {
			mergedAt = fixedTime
		}
	}
	return map[string]any{
		"number": p.Number, "state": p.State, "title": p.Title, "body": p.Body, "draft": p.Draft,
		"merged": p.Merged, "merged_at": mergedAt, "closed_at": closedAt, "labels": labels,
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d", rp.fullName, p.Number),
		"user":     map[string]any{"login": p.Author},
		"head": map[string]any{"ref": p.Head, "sha": rp.headSHA(p), "label": owner + ":" + p.Head,
			"repo": map[string]any{"full_name": p.HeadRepo}},
		"base": map[string]any{"ref": p.Base, "sha": rp.refs["heads/"+p.Base],
			"repo": map[string]any{"full_name": rp.fullName}},
	}
}

func (rp *repo) pullByNumber(w http.ResponseWriter, r *http.Request) *pull {
	n, _ := intValue(r, "number")
	for _, p := range rp.pulls {
		if int64(p.Number) == n {
			return p
		}
	}
	writeErr(w, 404, "Not Found")
	return nil
}

func (rp *repo) issueByNumber(w http.ResponseWriter, r *http.Request) *issue {
	n, _ := intValue(r, "number")
	if is := rp.issues[int(n)]; is != nil {
		return is
	}
	writeErr(w, 404, "Not Found")
	return nil
}

func (rp *repo) commentByID(w http.ResponseWriter, r *http.Request) *Comment {
	id, _ := intValue(r, "id")
	for _, is := range rp.issues {
		for _, c := range is.comments {
			if c.ID == id {
				return c
			}
		}
	}
	writeErr(w, 404, "Not Found")
	return nil
}

func commentJSON(c *Comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "author_association": c.Association,
		"user": map[string]any{"login": c.Author, "type": c.AuthorType}, "created_at": fixedTime}
}
