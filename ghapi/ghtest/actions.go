package ghtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Run seeds a workflow run.
type Run struct {
	ID         int64
	Name       string // workflow name, default "CI"
	Event      string // default "push"
	Conclusion string // default "failure"
	HeadBranch string
	HeadSHA    string
	RunAttempt int // default 1
	PRs        []int
	Jobs       []Job
	// WorkflowID, Status (default "completed") and Created are set for
	// runs a dispatch starts (workflows.go).
	WorkflowID int64
	Status     string
	Created    time.Time
}

// Job seeds a job of a run. Its check-run ID equals its ID.
type Job struct {
	ID          int64
	Name        string
	Conclusion  string // default "failure"
	RunAttempt  int    // default: the run's attempt
	FailedStep  string // name of the failed step, if any
	Log         string
	LogStatus   int // non-zero: the logs endpoint answers this (410, 403)
	Annotations []Annotation
}

// Annotation seeds a check-run annotation.
type Annotation struct {
	Path      string
	StartLine int
	Level     string
	Message   string
}

type run struct{ Run }

type job struct {
	Job
	runID int64
	sig   string // expected signature on the log URL
}

// AddRun seeds run (and its jobs) in repo.
func (s *Server) AddRun(fullName string, r Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	r.Name, r.Event, r.Conclusion = cmpOr(r.Name, "CI"), cmpOr(r.Event, "push"), cmpOr(r.Conclusion, "failure")
	r.RunAttempt = max(r.RunAttempt, 1)
	r.Status = cmpOr(r.Status, "completed")
	for i := range r.Jobs {
		j := &r.Jobs[i]
		j.Conclusion = cmpOr(j.Conclusion, "failure")
		if j.RunAttempt == 0 {
			j.RunAttempt = r.RunAttempt
		}
		rp.jobs[j.ID] = &job{Job: *j, runID: r.ID}
		rp.annotations[j.ID] = j.Annotations
	}
	rp.runs[r.ID] = &run{r}
}

// LogAuthViolations counts log downloads that carried an Authorization header.
func (s *Server) LogAuthViolations() int {
	n := 0
	for _, r := range s.Requests() {
		if r.Host == "logs" && r.Authorization != "" {
			n++
		}
	}
	return n
}

func (s *Server) routeActions(mux *http.ServeMux) {
	s.handle(mux, "GET /repos/{owner}/{repo}/actions/runs/{id}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		id, _ := intValue(r, "id")
		run := rp.runs[id]
		if run == nil {
			writeErr(w, 404, "Not Found")
			return
		}
		writeJSON(w, 200, s.singleRunJSON(rp, run))
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/actions/runs/{id}/jobs", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		id, _ := intValue(r, "id")
		run := rp.runs[id]
		if run == nil {
			writeErr(w, 404, "Not Found")
			return
		}
		latest := r.URL.Query().Get("filter") != "all"
		jobs := []map[string]any{}
		for _, j := range run.Jobs {
			if latest && j.RunAttempt != run.RunAttempt {
				continue
			}
			steps := []map[string]any{{"name": "Set up job", "conclusion": "success", "number": 1}}
			if j.FailedStep != "" {
				steps = append(steps, map[string]any{"name": j.FailedStep, "conclusion": "failure", "number": 2})
			}
			jobs = append(jobs, map[string]any{
				"id": j.ID, "run_id": run.ID, "name": j.Name, "status": "completed", "conclusion": j.Conclusion,
				"run_attempt": j.RunAttempt, "steps": steps, "head_sha": run.HeadSHA,
				"check_run_url": fmt.Sprintf("%srepos/%s/check-runs/%d", s.URL, rp.fullName, j.ID),
				"html_url":      fmt.Sprintf("https://github.com/%s/actions/runs/%d/job/%d", rp.fullName, run.ID, j.ID),
			})
		}
		page := paginate(w, r, jobs)
		writeJSON(w, 200, map[string]any{"total_count": len(jobs), "jobs": page})
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/actions/jobs/{id}/logs", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		id, _ := intValue(r, "id")
		j := rp.jobs[id]
		switch {
		case j == nil:
			writeErr(w, 404, "Not Found")
		case j.LogStatus != 0:
			writeErr(w, j.LogStatus, http.StatusText(j.LogStatus))
		default:
			var b [8]byte
			_, _ = rand.Read(b[:])
			j.sig = hex.EncodeToString(b[:])
			w.Header().Set("Location", fmt.Sprintf("%s/%s/jobs/%d?sig=%s", s.LogURL, rp.fullName, id, j.sig))
			w.WriteHeader(http.StatusFound)
		}
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/check-runs/{id}/annotations", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		id, _ := intValue(r, "id")
		out := []map[string]any{}
		for _, a := range rp.annotations[id] {
			out = append(out, map[string]any{"path": a.Path, "start_line": a.StartLine, "end_line": a.StartLine,
				"annotation_level": a.Level, "message": a.Message})
		}
		writeJSON(w, 200, paginate(w, r, out))
	})
}

// singleRunJSON is a run as the single-run and workflow-runs endpoints
// serve it; the caller holds s.mu.
func (s *Server) singleRunJSON(rp *repo, run *run) map[string]any {
	var prs []map[string]any
	for _, n := range run.PRs {
		prs = append(prs, map[string]any{"number": n})
	}
	repoJSON := map[string]any{"full_name": rp.fullName}
	status := cmpOr(run.Status, "completed")
	var concl any
	if status == "completed" {
		concl = run.Conclusion
	}
	return map[string]any{
		"id": run.ID, "name": run.Name, "event": run.Event, "status": status, "conclusion": concl,
		"workflow_id": run.WorkflowID, "created_at": run.Created,
		"head_branch": run.HeadBranch, "head_sha": run.HeadSHA, "run_attempt": run.RunAttempt,
		"html_url":      fmt.Sprintf("https://github.com/%s/actions/runs/%d", rp.fullName, run.ID),
		"pull_requests": prs, "repository": repoJSON, "head_repository": repoJSON,
	}
}

// serveLog is the log host: signed URLs only, and never a credential.
func (s *Server) serveLog(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		http.Error(w, "Authorization header not allowed with a signed URL", http.StatusBadRequest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/")
	i := strings.LastIndex(rest, "/jobs/")
	if !ok || i < 0 {
		http.NotFound(w, r)
		return
	}
	id, _ := strconv.ParseInt(rest[i+len("/jobs/"):], 10, 64)
	s.mu.Lock()
	var j *job
	if rp := s.repos[strings.ToLower(rest[:i])]; rp != nil {
		j = rp.jobs[id]
	}
	var log string
	valid := j != nil && j.sig != "" && r.URL.Query().Get("sig") == j.sig
	if valid {
		log = j.Log
	}
	s.mu.Unlock()
	if !valid {
		http.Error(w, "AuthenticationFailed", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	// Blob stores honour Range requests; a client resuming a cut download
	// relies on it.
	http.ServeContent(w, r, "", time.Time{}, strings.NewReader(log))
}
