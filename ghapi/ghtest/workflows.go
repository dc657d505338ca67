package ghtest

import (
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Workflow seeds a workflow of a repository. Its file (Path) lives in the
// repository's files like any other: a dispatch reads it at the ref.
type Workflow struct {
	ID   int64  // 0: assigned
	Name string // default "CI"
	Path string // default ".github/workflows/ci.yml"
	// NoRun: a dispatch is accepted (204) but starts no run, as when the
	// workflow's jobs are all skipped or GitHub is slow to queue it.
	NoRun bool
	// Finished, when set, is the conclusion of the run a dispatch creates,
	// already completed when it is first listed (a CI that fails in
	// seconds, or a dispatcher that is slow to look).
	Finished string
}

// ciState is the fake's workflows and the runs dispatches created.
type ciState struct {
	workflows  []*Workflow
	dispatched []int64
}

// ciOf returns repo rp's workflow state; the caller holds s.mu.
func (s *Server) ciOf(rp *repo) *ciState {
	if s.ci == nil {
		s.ci = map[string]*ciState{}
	}
	c := s.ci[rp.fullName]
	if c == nil {
		c = &ciState{}
		s.ci[rp.fullName] = c
	}
	return c
}

// AddWorkflow seeds wf in repo fullName and returns its ID.
func (s *Server) AddWorkflow(fullName string, wf Workflow) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	if wf.ID == 0 {
		wf.ID = s.id()
	}
	wf.Name, wf.Path = cmpOr(wf.Name, "CI"), cmpOr(wf.Path, ".github/workflows/ci.yml")
	c := s.ciOf(rp)
	c.workflows = append(c.workflows, &wf)
	return wf.ID
}

// Dispatched returns the IDs of the runs dispatches created, in order.
func (s *Server) Dispatched(fullName string) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ciOf(s.repos[strings.ToLower(fullName)]).dispatched)
}

// SetRunStatus moves run id to status ("queued", "in_progress" or
// "completed" with conclusion) and, when jobs are given, replaces its jobs.
func (s *Server) SetRunStatus(fullName string, id int64, status, conclusion string, jobs ...Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	r := rp.runs[id]
	r.Status, r.Conclusion = status, conclusion
	if jobs != nil {
		r.Jobs = nil
		for _, j := range jobs {
			j.Conclusion = cmpOr(j.Conclusion, "failure")
			j.RunAttempt = max(j.RunAttempt, r.RunAttempt)
			rp.jobs[j.ID] = &job{Job: j, runID: id}
			rp.annotations[j.ID] = j.Annotations
			r.Jobs = append(r.Jobs, j)
		}
	}
}

// workflowOf finds the {workflow_id} of a request (an ID or a file's base
// name), answering 404 when there is none; the caller holds s.mu.
func (s *Server) workflowOf(w http.ResponseWriter, r *http.Request, rp *repo) *Workflow {
	key := r.PathValue("workflow")
	for _, wf := range s.ciOf(rp).workflows {
		if strconv.FormatInt(wf.ID, 10) == key || path.Base(wf.Path) == key {
			return wf
		}
	}
	writeErr(w, http.StatusNotFound, "Not Found")
	return nil
}

func workflowJSON(rp *repo, wf *Workflow) map[string]any {
	return map[string]any{"id": wf.ID, "name": wf.Name, "path": wf.Path, "state": "active",
		"html_url": "https://github.com/" + rp.fullName + "/blob/main/" + wf.Path}
}

func (s *Server) routeWorkflows(mux *http.ServeMux) {
	s.handle(mux, "GET /repos/{owner}/{repo}/actions/workflows/{workflow}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		if wf := s.workflowOf(w, r, rp); wf != nil {
			writeJSON(w, 200, workflowJSON(rp, wf))
		}
	})

	// A dispatch is refused as GitHub refuses it: 422 for a ref that does
	// not exist or a workflow file without a workflow_dispatch trigger at
	// that ref (the fake looks for the word). A 403 (no actions: write) is
	// injected with Inject.
	s.handle(mux, "POST /repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		wf := s.workflowOf(w, r, rp)
		var in struct {
			Ref    string         `json:"ref"`
			Inputs map[string]any `json:"inputs"`
		}
		if wf == nil || !decode(w, r, &in) {
			return
		}
		ref := strings.TrimPrefix(in.Ref, "refs/heads/")
		head := rp.refs["heads/"+ref]
		if head == "" {
			writeErr(w, 422, "No ref found for: "+in.Ref)
			return
		}
		e, ok := rp.trees[rp.commits[head].tree][wf.Path]
		if !ok || !strings.Contains(string(rp.blobs[e.sha]), "workflow_dispatch") {
			writeErr(w, 422, "Workflow does not have 'workflow_dispatch' trigger")
			return
		}
		if !wf.NoRun {
			id := s.id()
			rp.runs[id] = &run{Run{ID: id, Name: wf.Name, WorkflowID: wf.ID, Event: "workflow_dispatch", Status: "queued",
				HeadBranch: ref, HeadSHA: head, RunAttempt: 1, Created: time.Now().UTC()}}
			if wf.Finished != "" {
				rp.runs[id].Status, rp.runs[id].Conclusion = "completed", wf.Finished
			}
			c := s.ciOf(rp)
			c.dispatched = append(c.dispatched, id)
		}
		w.WriteHeader(http.StatusNoContent)
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/actions/workflows/{workflow}/runs", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		wf := s.workflowOf(w, r, rp)
		if wf == nil {
			return
		}
		q := r.URL.Query()
		var since time.Time
		if c := q.Get("created"); c != "" {
			t, err := time.Parse(time.RFC3339, strings.TrimPrefix(c, ">="))
			if !strings.HasPrefix(c, ">=") || err != nil {
				writeErr(w, 422, "ghtest models only created=>=RFC3339")
				return
			}
			since = t
		}
		var match []*run
		for _, rn := range rp.runs {
			if rn.WorkflowID == wf.ID && (q.Get("branch") == "" || rn.HeadBranch == q.Get("branch")) &&
				(q.Get("event") == "" || rn.Event == q.Get("event")) && !rn.Created.Truncate(time.Second).Before(since) {
				match = append(match, rn)
			}
		}
		slices.SortFunc(match, func(a, b *run) int { return int(b.ID - a.ID) }) // newest first
		items := []map[string]any{}
		for _, rn := range match {
			items = append(items, s.singleRunJSON(rp, rn))
		}
		writeJSON(w, 200, map[string]any{"total_count": len(items), "workflow_runs": paginate(w, r, items)})
	})
}
