package ghtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// The refusals a repository's settings make GitHub answer, with GitHub's
// own response bodies (message, documentation_url, the "status" string it
// adds) and headers: a workflow token's permissions (SetTokenPermissions),
// the Actions setting that lets workflows open pull requests
// (SetActionsCanCreatePRs), and rulesets on branches (AddRuleset, also
// served by the rules and rulesets endpoints).

// GitHub's documentation URLs for the refused calls.
const (
	docCreatePR  = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
	docCreateRef = "https://docs.github.com/rest/git/refs#create-a-reference"
	docUpdateRef = "https://docs.github.com/rest/git/refs#update-a-reference"
	// MessageActionsCannotCreatePRs is GitHub's answer to a pull request
	// opened with a workflow token while the setting is off.
	MessageActionsCannotCreatePRs = "GitHub Actions is not permitted to create or approve pull requests."
	// MessageNotAccessible is GitHub's answer to a call the token lacks a
	// permission for.
	MessageNotAccessible = "Resource not accessible by integration"
	// MessageSecondaryRateLimit is GitHub's answer when the secondary rate
	// limit is hit.
	MessageSecondaryRateLimit = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. " +
		"If you reach out to GitHub Support for help, please include the request ID 0400:2C1E:1B2A3C:4D5E6F:67A1B2C3."
	docSecondaryRateLimit = "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)

// SecondaryRateLimit is a fault answering every matching request as
// GitHub does under its secondary rate limit (403, retry-after: 0 so
// clients retry at once), forever: a limit that does not clear.
func SecondaryRateLimit(method, path string) Fault {
	return Fault{Method: method, Path: path, Status: http.StatusForbidden, Times: -1, RetryAfter: "0",
		Message: MessageSecondaryRateLimit, DocURL: docSecondaryRateLimit}
}

// githubError writes GitHub's error body: message, documentation_url and
// the status as a string, with errors when given.
func githubError(w http.ResponseWriter, status int, msg, doc string, errs []map[string]any, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	body := map[string]any{"message": msg, "documentation_url": cmpOr(doc, "https://docs.github.com/rest"), "status": strconv.Itoa(status)}
	if errs != nil {
		body["errors"] = errs
	}
	writeJSON(w, status, body)
}

// SetTokenPermissions makes the token's writes need the permissions a
// workflow's `permissions:` block grants: perms maps "contents",
// "pull-requests", "issues", "actions" to "read" or "write" (absent:
// none). A write without its permission gets GitHub's 403 with the
// X-Accepted-GitHub-Permissions header. Reads are not checked. nil (the
// default) allows every write.
func (s *Server) SetTokenPermissions(perms map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perms = perms
}

// SetActionsCanCreatePRs sets the repository's "Allow GitHub Actions to
// create and approve pull requests" (on unless set off here).
func (s *Server) SetActionsCanCreatePRs(fullName string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[strings.ToLower(fullName)].noActionsPRs = !on
}

// Ruleset is a branch ruleset of a repository.
type Ruleset struct {
	ID   int64
	Name string
	// Include are ref patterns ("refs/heads/mini-agent/**", "~ALL",
	// "~DEFAULT_BRANCH"); "*" matches within a segment, "**" across.
	Include []string
	// Rules are rule types: "creation", "update", "non_fast_forward",
	// "deletion".
	Rules []string
	// Bypass is the token actor's bypass ("always", "never"; "" is never).
	Bypass string
	// Evaluate: the ruleset is in "evaluate" mode (reported, not enforced).
	Evaluate bool
}

// AddRuleset adds a branch ruleset to the repository.
func (s *Server) AddRuleset(fullName string, rs Ruleset) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	rp.rulesets = append(rp.rulesets, rs)
}

// gate answers a request the repository's settings refuse, as GitHub
// would, and reports whether it did; the caller holds s.mu.
func (s *Server) gate(w http.ResponseWriter, r *http.Request, body string) bool {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) < 4 || parts[0] != "repos" {
		return false
	}
	rp := s.repos[strings.ToLower(parts[1]+"/"+parts[2])]
	if rp == nil {
		return false
	}
	rest := strings.Join(parts[3:], "/")
	if r.Method != http.MethodGet && s.perms != nil {
		if name, accepted := permissionFor(r.Method, rest); name != "" && s.perms[name] != "write" {
			githubError(w, http.StatusForbidden, MessageNotAccessible, "https://docs.github.com/rest",
				nil, map[string]string{"X-Accepted-GitHub-Permissions": accepted})
			return true
		}
	}
	switch {
	case r.Method == http.MethodPost && rest == "pulls" && rp.noActionsPRs:
		githubError(w, http.StatusForbidden, MessageActionsCannotCreatePRs, docCreatePR, nil, nil)
		return true
	case r.Method == http.MethodPost && rest == "git/refs":
		var in struct{ Ref string }
		_ = json.Unmarshal([]byte(body), &in)
		if rp.ruleApplies(in.Ref, "creation") {
			githubError(w, http.StatusUnprocessableEntity, "Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n", docCreateRef, nil, nil)
			return true
		}
	case r.Method == http.MethodPatch && strings.HasPrefix(rest, "git/refs/"):
		var in struct{ Force bool }
		_ = json.Unmarshal([]byte(body), &in)
		ref := "refs/" + strings.TrimPrefix(rest, "git/refs/")
		switch {
		case rp.ruleApplies(ref, "update"):
			githubError(w, http.StatusUnprocessableEntity, "Repository rule violations found\n\nCannot update this protected ref.\n\n", docUpdateRef, nil, nil)
			return true
		case in.Force && rp.ruleApplies(ref, "non_fast_forward"):
			githubError(w, http.StatusUnprocessableEntity, "Repository rule violations found\n\nCannot force-push to this branch\n\n", docUpdateRef, nil, nil)
			return true
		}
	}
	return false
}

// permissionFor is the permission a write needs, and GitHub's
// X-Accepted-GitHub-Permissions value for it.
func permissionFor(method, rest string) (name, accepted string) {
	switch {
	case strings.HasPrefix(rest, "git/") || strings.HasPrefix(rest, "contents/"):
		return "contents", "contents=write"
	case strings.HasPrefix(rest, "pulls"):
		return "pull-requests", "pull_requests=write"
	case strings.HasPrefix(rest, "actions/"):
		return "actions", "actions=write"
	case strings.HasPrefix(rest, "issues/") && (strings.Contains(rest, "/comments") || strings.HasSuffix(rest, "/reactions")):
		// A PR's comments are issue comments: either permission will do;
		// the fake asks for pull-requests, as mini-agent comments on PRs.
		return "pull-requests", "issues=write; pull_requests=write"
	case strings.HasPrefix(rest, "issues"):
		return "issues", "issues=write"
	}
	return "", ""
}

// matching returns the active rulesets whose patterns match ref; the
// caller holds s.mu.
func (rp *repo) matching(ref string) []Ruleset {
	var out []Ruleset
	for _, rs := range rp.rulesets {
		if rs.Evaluate {
			continue
		}
		for _, p := range rs.Include {
			if refMatches(p, ref, rp.defaultBranch) {
				out = append(out, rs)
				break
			}
		}
	}
	return out
}

// ruleApplies: an active ruleset the token cannot bypass has the rule for
// ref.
func (rp *repo) ruleApplies(ref, rule string) bool {
	for _, rs := range rp.matching(ref) {
		if rs.Bypass == "always" {
			continue
		}
		for _, r := range rs.Rules {
			if r == rule {
				return true
			}
		}
	}
	return false
}

func refMatches(pattern, ref, defaultBranch string) bool {
	switch pattern {
	case "~ALL":
		return true
	case "~DEFAULT_BRANCH":
		return ref == "refs/heads/"+defaultBranch
	}
	var re strings.Builder
	re.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch {
		case strings.HasPrefix(pattern[i:], "**"):
			re.WriteString(".*")
			i++
		case pattern[i] == '*':
			re.WriteString("[^/]*")
		default:
			re.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	re.WriteString("$")
	ok, _ := regexp.MatchString(re.String(), ref)
	return ok
}

func (s *Server) routeRules(mux *http.ServeMux) {
	s.handle(mux, "GET /repos/{owner}/{repo}/rules/branches/{branch...}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		out := []map[string]any{}
		for _, rs := range rp.matching("refs/heads/" + r.PathValue("branch")) {
			for _, rule := range rs.Rules {
				out = append(out, map[string]any{"type": rule, "ruleset_source_type": "Repository",
					"ruleset_source": rp.fullName, "ruleset_id": rs.ID})
			}
		}
		writeJSON(w, 200, out)
	})
	s.handle(mux, "GET /repos/{owner}/{repo}/rulesets/{id}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		id, _ := intValue(r, "id")
		for _, rs := range rp.rulesets {
			if rs.ID != id {
				continue
			}
			var rules []map[string]any
			for _, t := range rs.Rules {
				rules = append(rules, map[string]any{"type": t})
			}
			enf := "active"
			if rs.Evaluate {
				enf = "evaluate"
			}
			writeJSON(w, 200, map[string]any{"id": rs.ID, "name": rs.Name, "target": "branch", "source_type": "Repository",
				"source": rp.fullName, "enforcement": enf, "rules": rules, "current_user_can_bypass": cmpOr(rs.Bypass, "never"),
				"conditions": map[string]any{"ref_name": map[string]any{"include": rs.Include, "exclude": []string{}}},
				"node_id":    fmt.Sprintf("RRS_%d", rs.ID)})
			return
		}
		writeErr(w, 404, "Not Found")
	})
}
