package ghtest

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// HistoryRun seeds a workflow run, with every attempt, for the run listing
// (GET /repos/{o}/{r}/actions/runs?created=DATE), the attempt endpoints and
// the job logs. The latest attempt is also what the single-run endpoints
// (AddRun's) serve.
type HistoryRun struct {
	ID         int64  // 0: assigned
	Name       string // workflow name, default "CI"
	WorkflowID int64  // default 1
	Event      string // default "push"
	HeadBranch string // default "main"
	HeadSHA    string
	// Created is when the run was created; its UTC date is what the
	// `created` filter matches.
	Created time.Time
	// Attempts are the run's attempts in order; at least one.
	Attempts []Attempt
}

// Attempt is one attempt of a HistoryRun.
type Attempt struct {
	// Status is "completed" (the default), "in_progress" or "queued".
	Status string
	// Conclusion defaults from the jobs: "cancelled" if one was cancelled,
	// "failure" if one failed or timed out, else "success".
	Conclusion string
	// Started is when the attempt started; default Created for the first,
	// an hour after the previous attempt's start for the others.
	Started time.Time
	Jobs    []HistoryJob
}

// HistoryJob is a job of an Attempt.
type HistoryJob struct {
	ID         int64  // 0: assigned
	Name       string // default "test"
	Conclusion string // default "success"
	// Duration is how long the job ran; default 2 minutes.
	Duration time.Duration
	// Steps default to "Set up job", "Run actions/checkout@v4" and
	// "Run go test -v ./..." (the last with the job's conclusion).
	Steps []Step
	// Log is the job's log, served through the log host.
	Log string
}

// Step is a job step.
type Step struct {
	Name       string
	Conclusion string
}

type histRun struct {
	HistoryRun
	jobIDs [][]int64 // per attempt
}

type histIssue struct {
	Issue
	created time.Time
}

// Issue seeds or reports a plain issue.
type Issue struct {
	Number     int
	Title      string
	Body       string
	State      string // open (default) or closed
	Labels     []string
	Author     string // default BotLogin
	AuthorType string // default "Bot" for BotLogin, else "User"
}

type history struct {
	runs       []*histRun
	issues     map[int]*histIssue
	dropLabels bool
}

// historyOf returns repo fullName's history state; the caller holds s.mu.
func (s *Server) historyOf(rp *repo) *history {
	if s.history == nil {
		s.history = map[string]*history{}
	}
	h := s.history[rp.fullName]
	if h == nil {
		h = &history{issues: map[int]*histIssue{}}
		s.history[rp.fullName] = h
	}
	return h
}

// AddHistoryRun seeds r in repo fullName and returns its run ID.
func (s *Server) AddHistoryRun(fullName string, r HistoryRun) int64 {
	if len(r.Attempts) == 0 {
		panic("ghtest: a history run needs at least one attempt")
	}
	s.mu.Lock()
	rp := s.repos[strings.ToLower(fullName)]
	if rp == nil {
		s.mu.Unlock()
		panic("ghtest: unknown repository " + fullName)
	}
	if r.ID == 0 {
		r.ID = s.id()
	}
	r.Name, r.Event, r.HeadBranch = cmpOr(r.Name, "CI"), cmpOr(r.Event, "push"), cmpOr(r.HeadBranch, "main")
	if r.WorkflowID == 0 {
		r.WorkflowID = 1
	}
	r.Created = r.Created.UTC()
	hr := &histRun{}
	var legacy []Job
	for i := range r.Attempts {
		a := &r.Attempts[i]
		a.Status = cmpOr(a.Status, "completed")
		switch {
		case !a.Started.IsZero():
		case i == 0:
			a.Started = r.Created
		default:
			a.Started = r.Attempts[i-1].Started.Add(time.Hour)
		}
		a.Started = a.Started.UTC()
		var ids []int64
		derived := "success"
		for k := range a.Jobs {
			j := &a.Jobs[k]
			if j.ID == 0 {
				j.ID = s.id()
			}
			j.Name, j.Conclusion = cmpOr(j.Name, "test"), cmpOr(j.Conclusion, "success")
			if j.Duration == 0 {
				j.Duration = 2 * time.Minute
			}
			if j.Steps == nil {
				j.Steps = []Step{{"Set up job", "success"}, {"Run actions/checkout@v4", "success"}, {"Run go test -v ./...", j.Conclusion}}
			}
			switch {
			case j.Conclusion == "cancelled":
				derived = "cancelled"
			case (j.Conclusion == "failure" || j.Conclusion == "timed_out") && derived != "cancelled":
				derived = "failure"
			}
			ids = append(ids, j.ID)
			failedStep := ""
			for _, st := range j.Steps {
				if st.Conclusion == "failure" || st.Conclusion == "timed_out" {
					failedStep = st.Name
				}
			}
			lj := Job{ID: j.ID, Name: j.Name, Conclusion: j.Conclusion, RunAttempt: i + 1, FailedStep: failedStep, Log: j.Log}
			rp.jobs[j.ID] = &job{Job: lj, runID: r.ID}
			legacy = append(legacy, lj)
		}
		if a.Status == "completed" {
			a.Conclusion = cmpOr(a.Conclusion, derived)
		}
		hr.jobIDs = append(hr.jobIDs, ids)
	}
	hr.HistoryRun = r
	last := r.Attempts[len(r.Attempts)-1]
	rp.runs[r.ID] = &run{Run{ID: r.ID, Name: r.Name, Event: r.Event, Conclusion: last.Conclusion, HeadBranch: r.HeadBranch,
		HeadSHA: r.HeadSHA, RunAttempt: len(r.Attempts), Jobs: legacy}}
	h := s.historyOf(rp)
	h.runs = append(h.runs, hr)
	s.mu.Unlock()
	return r.ID
}

// AddIssue seeds a plain issue and returns its number.
func (s *Server) AddIssue(fullName string, is Issue) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addIssue(s.repos[strings.ToLower(fullName)], is)
}

// addIssue stores is; the caller holds s.mu.
func (s *Server) addIssue(rp *repo, is Issue) int {
	n := len(rp.issues) + 1
	is.Number = n
	is.State = cmpOr(is.State, "open")
	is.Author = cmpOr(is.Author, BotLogin)
	if is.AuthorType == "" {
		is.AuthorType = "User"
		if is.Author == BotLogin {
			is.AuthorType = "Bot"
		}
	}
	rp.issues[n] = &issue{number: n, labels: slices.Clone(is.Labels)}
	s.historyOf(rp).issues[n] = &histIssue{Issue: is, created: fixedTime.Add(time.Duration(n) * time.Minute)}
	return n
}

// DropIssueLabels makes issue creation in fullName ignore the labels asked
// for, as GitHub silently does for a token without push access.
func (s *Server) DropIssueLabels(fullName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.historyOf(s.repos[strings.ToLower(fullName)]).dropLabels = true
}

// CloseIssue closes plain issue number, as a maintainer dismissing it would.
func (s *Server) CloseIssue(fullName string, number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	s.historyOf(rp).issues[number].State = "closed"
}

// Issues returns the plain issues of fullName in number order, with their
// current labels.
func (s *Server) Issues(fullName string) []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	h := s.historyOf(rp)
	var out []Issue
	for n := 1; n <= len(rp.issues); n++ {
		if hi := h.issues[n]; hi != nil {
			is := hi.Issue
			is.Labels = slices.Clone(rp.issues[n].labels)
			out = append(out, is)
		}
	}
	return out
}

// CountMatching returns how many recorded API requests had method and a
// path matching pattern, where "*" stands for one path segment (path.Match),
// e.g. "/repos/*/*/actions/runs/*/attempts/*/jobs".
func (s *Server) CountMatching(method, pattern string) int {
	n := 0
	for _, r := range s.Requests() {
		if ok, _ := path.Match(pattern, r.Path); ok && r.Host == "api" && r.Method == method {
			n++
		}
	}
	return n
}

func (s *Server) runJSON(rp *repo, hr *histRun, attempt int) map[string]any {
	a := hr.Attempts[attempt-1]
	var concl any
	if a.Status == "completed" {
		concl = a.Conclusion
	}
	end := a.Started
	for _, j := range a.Jobs {
		end = end.Add(j.Duration)
	}
	repoJSON := map[string]any{"full_name": rp.fullName}
	out := map[string]any{
		"id": hr.ID, "name": hr.Name, "workflow_id": hr.WorkflowID, "event": hr.Event, "status": a.Status,
		"conclusion": concl, "head_branch": hr.HeadBranch, "head_sha": hr.HeadSHA, "run_attempt": attempt,
		"created_at": hr.Created, "run_started_at": a.Started, "updated_at": end,
		"html_url":   fmt.Sprintf("https://github.com/%s/actions/runs/%d", rp.fullName, hr.ID),
		"repository": repoJSON, "head_repository": repoJSON, "pull_requests": []any{},
	}
	if attempt > 1 {
		out["previous_attempt_url"] = fmt.Sprintf("%srepos/%s/actions/runs/%d/attempts/%d", s.URL, rp.fullName, hr.ID, attempt-1)
	}
	return out
}

func (h *history) run(id int64) *histRun {
	for _, r := range h.runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}
