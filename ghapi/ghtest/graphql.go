package ghtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// routeGraphQL serves the GraphQL operations mini-agent makes: a pull
// request's review threads, its node ID by number, and
// convertPullRequestToDraft (the REST API cannot make a draft). Node IDs are "PR_<owner/repo>#<number>".
func (s *Server) routeGraphQL(mux *http.ServeMux) {
	mux.HandleFunc("POST /graphql", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Query     string         `json:"query"`
			Variables map[string]any `json:"variables"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			writeErr(w, http.StatusBadRequest, "Problems parsing JSON")
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		fail := func(typ, msg string) {
			writeJSON(w, 200, map[string]any{"data": nil, "errors": []map[string]any{{"type": typ, "message": msg}}})
		}
		str := func(k string) string { v, _ := in.Variables[k].(string); return v }
		switch {
		case strings.Contains(in.Query, "convertPullRequestToDraft"):
			full, num, ok := strings.Cut(strings.TrimPrefix(str("id"), "PR_"), "#")
			p := s.pullOf(full, num)
			if !ok || p == nil {
				fail("NOT_FOUND", fmt.Sprintf("Could not resolve to a node with the global id of '%s'", str("id")))
				return
			}
			if p.State != "open" {
				fail("UNPROCESSABLE", "Pull request is closed")
				return
			}
			p.Draft = true
			writeJSON(w, 200, map[string]any{"data": map[string]any{"convertPullRequestToDraft": map[string]any{"pullRequest": map[string]any{"isDraft": true}}}})
		case strings.Contains(in.Query, "reviewThreads"):
			n, _ := in.Variables["number"].(float64)
			full := str("owner") + "/" + str("name")
			if s.pullOf(full, fmt.Sprint(int(n))) == nil {
				fail("NOT_FOUND", "Could not resolve to a PullRequest with the number of "+fmt.Sprint(int(n))+".")
				return
			}
			writeJSON(w, 200, map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
				"reviewThreads": s.threadsJSON(full, int(n))}}}})
		case strings.Contains(in.Query, "pullRequest(number"):
			n, _ := in.Variables["number"].(float64)
			full := str("owner") + "/" + str("name")
			p := s.pullOf(full, fmt.Sprint(int(n)))
			if p == nil {
				fail("NOT_FOUND", "Could not resolve to a PullRequest with the number of "+fmt.Sprint(int(n))+".")
				return
			}
			writeJSON(w, 200, map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
				"id": fmt.Sprintf("PR_%s#%d", s.repos[strings.ToLower(full)].fullName, p.Number), "isDraft": p.Draft}}}})
		default:
			fail("UNPROCESSABLE", "ghtest models only the pull request ID query and convertPullRequestToDraft")
		}
	})
}

// pullOf finds pull request number (decimal text) of repo full; the caller
// holds s.mu.
func (s *Server) pullOf(full, number string) *pull {
	rp := s.repos[strings.ToLower(full)]
	if rp == nil {
		return nil
	}
	for _, p := range rp.pulls {
		if fmt.Sprint(p.Number) == number {
			return p
		}
	}
	return nil
}
