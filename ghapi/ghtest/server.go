// Package ghtest is a stateful fake of the GitHub REST API for tests: repos
// with branches and files (served through the Git Data and contents APIs),
// pull requests, issue comments, reactions, labels, and workflow runs whose
// job logs redirect to a second host that rejects credentials, a workflow
// run history listed by day with every attempt and plain issues
// (history.go; SeedFlakyHistory seeds a ready-made one), workflows whose
// dispatches start runs (workflows.go), review threads and the GraphQL
// calls mini-agent makes (reviews.go, graphql.go). It records
// every request, and fails chosen ones on demand (Inject). It speaks the documented JSON wire format and imports no
// GitHub client, so it can check one.
package ghtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// BotLogin is the author of comments, commits and PRs made with the token.
const BotLogin = "github-actions[bot]"

// Request is one recorded request.
type Request struct {
	Host          string // "api" or "logs"
	Method        string
	Path          string
	Query         url.Values
	Body          string
	Authorization string
	Range         string // the Range header, for resumed downloads
}

// Server is the fake. Its exported methods seed and inspect state; all are
// safe for concurrent use with requests in flight.
type Server struct {
	// URL is the API root, for Options.BaseURL / GITHUB_API_URL.
	URL string
	// LogURL is the root of the host serving job logs.
	LogURL string

	token string
	api   *httptest.Server
	logs  *httptest.Server

	mu       sync.Mutex
	repos    map[string]*repo
	requests []Request
	nextID   int64
	faults   []*fault
	history  map[string]*history       // history.go: listed runs and plain issues
	ci       map[string]*ciState       // workflows.go: workflows and dispatched runs
	threads  map[string][]ReviewThread // reviews.go: review threads by "repo#number"
	perms    map[string]string         // refusals.go: the token's write permissions; nil: all
}

// NewServer starts the fake; requests must carry "Bearer TOKEN" (or
// "token TOKEN") when token is not empty. Both hosts close at test cleanup.
func NewServer(tb testing.TB, token string) *Server {
	s := &Server{token: token, repos: map[string]*repo{}, nextID: 1000}
	mux := http.NewServeMux()
	s.routeRepos(mux)
	s.routeGit(mux)
	s.routePulls(mux)
	s.routeActions(mux)
	s.routeHistory(mux)
	s.routeWorkflows(mux)
	s.routeGraphQL(mux)
	s.routeRules(mux)
	s.api = httptest.NewServer(s.record("api", s.auth(mux)))
	s.logs = httptest.NewServer(s.record("logs", http.HandlerFunc(s.serveLog)))
	tb.Cleanup(s.api.Close)
	tb.Cleanup(s.logs.Close)
	s.URL, s.LogURL = s.api.URL+"/", s.logs.URL
	return s
}

// Requests returns the recorded requests in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many recorded API requests had method and a path
// starting with pathPrefix.
func (s *Server) Count(method, pathPrefix string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Host == "api" && r.Method == method && strings.HasPrefix(r.Path, pathPrefix) {
			n++
		}
	}
	return n
}

func (s *Server) record(host string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		s.mu.Lock()
		s.requests = append(s.requests, Request{
			Host: host, Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(),
			Body: string(body), Authorization: r.Header.Get("Authorization"),
			Range: r.Header.Get("Range"),
		})
		f := s.faultFor(host, r)
		if f == nil && host == "api" && s.gate(w, r, string(body)) {
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if f != nil {
			serveFault(w, r, f, host, h)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		if s.token != "" && a != "Bearer "+s.token && a != "token "+s.token {
			writeErr(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// id hands out unique IDs; the caller holds s.mu.
func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

// repoOf finds the repo of a request; the caller holds s.mu.
func (s *Server) repoOf(w http.ResponseWriter, r *http.Request) *repo {
	rp := s.repos[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo"))]
	if rp == nil {
		writeErr(w, http.StatusNotFound, "Not Found")
	}
	return rp
}

// handle registers pattern with the lock held and the repo resolved.
func (s *Server) handle(mux *http.ServeMux, pattern string, h func(http.ResponseWriter, *http.Request, *repo)) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if rp := s.repoOf(w, r); rp != nil {
			h(w, r, rp)
		}
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	githubError(w, status, msg, "", nil, nil)
}

// decode reads a JSON body into v, answering 400 on failure.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeErr(w, http.StatusBadRequest, "Problems parsing JSON")
		return false
	}
	return true
}

func intValue(r *http.Request, name string) (int64, bool) {
	n, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return n, err == nil && n > 0
}

// paginate serves items per GitHub's per_page/page parameters and Link header.
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T) []T {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	last := max((len(items)+per-1)/per, 1)
	if page < last {
		next := *r.URL
		next.Scheme, next.Host = "http", r.Host
		q.Set("page", strconv.Itoa(page+1))
		next.RawQuery = q.Encode()
		q.Set("page", strconv.Itoa(last))
		lastURL := next
		lastURL.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, next.String(), lastURL.String()))
	}
	lo := min((page-1)*per, len(items))
	return items[lo:min(lo+per, len(items))]
}
