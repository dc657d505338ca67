package ghtest

import (
	"strconv"
	"strings"
)

// ReviewThread seeds a review thread of a pull request (served by the
// GraphQL reviewThreads query).
type ReviewThread struct {
	Path     string
	Line     int // 0: outdated
	Resolved bool
	Comments []ReviewComment
}

// ReviewComment is a comment of a ReviewThread.
type ReviewComment struct {
	Author      string
	AuthorType  string // "User" (default) or "Bot"
	Association string // default "CONTRIBUTOR"
	Body        string
}

// AddReviewThread seeds a review thread on PR number of repo fullName.
func (s *Server) AddReviewThread(fullName string, number int, th ReviewThread) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.threads == nil {
		s.threads = map[string][]ReviewThread{}
	}
	key := strings.ToLower(fullName) + "#" + strconv.Itoa(number)
	s.threads[key] = append(s.threads[key], th)
}

// threadsJSON is the reviewThreads connection of a PR; the caller holds s.mu.
func (s *Server) threadsJSON(fullName string, number int) map[string]any {
	nodes := []map[string]any{}
	for _, th := range s.threads[strings.ToLower(fullName)+"#"+strconv.Itoa(number)] {
		comments := []map[string]any{}
		for _, c := range th.Comments {
			comments = append(comments, map[string]any{"body": c.Body, "authorAssociation": cmpOr(c.Association, "CONTRIBUTOR"),
				"author": map[string]any{"__typename": cmpOr(c.AuthorType, "User"), "login": c.Author}})
		}
		var line any
		if th.Line > 0 {
			line = th.Line
		}
		nodes = append(nodes, map[string]any{"isResolved": th.Resolved, "isOutdated": th.Line == 0, "path": th.Path, "line": line,
			"comments": map[string]any{"nodes": comments}})
	}
	return map[string]any{"nodes": nodes}
}
