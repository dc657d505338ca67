package ghtest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

func (s *Server) routeHistory(mux *http.ServeMux) {
	s.handle(mux, "GET /repos/{owner}/{repo}/actions/runs", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		created := r.URL.Query().Get("created")
		if created != "" {
			if _, err := time.Parse(time.DateOnly, created); err != nil {
				writeErr(w, 422, "ghtest models only created=YYYY-MM-DD")
				return
			}
		}
		var match []*histRun
		for _, hr := range s.historyOf(rp).runs {
			if created == "" || hr.Created.Format(time.DateOnly) == created {
				match = append(match, hr)
			}
		}
		slices.SortStableFunc(match, func(a, b *histRun) int { return b.Created.Compare(a.Created) }) // newest first
		items := []map[string]any{}
		for _, hr := range match {
			items = append(items, s.runJSON(rp, hr, len(hr.Attempts)))
		}
		// A filtered listing serves at most 1,000 runs, whatever total_count says.
		if created != "" && len(items) > 1000 {
			items = items[:1000]
		}
		writeJSON(w, 200, map[string]any{"total_count": len(match), "workflow_runs": paginate(w, r, items)})
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/actions/runs/{id}/attempts/{n}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		hr, n := s.attemptOf(w, r, rp)
		if hr != nil {
			writeJSON(w, 200, s.runJSON(rp, hr, n))
		}
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/actions/runs/{id}/attempts/{n}/jobs", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		hr, n := s.attemptOf(w, r, rp)
		if hr == nil {
			return
		}
		a := hr.Attempts[n-1]
		jobs := []map[string]any{}
		at := a.Started
		for _, j := range a.Jobs {
			steps := []map[string]any{}
			for k, st := range j.Steps {
				steps = append(steps, map[string]any{"name": st.Name, "status": "completed", "conclusion": st.Conclusion, "number": k + 1})
			}
			jobs = append(jobs, map[string]any{
				"id": j.ID, "run_id": hr.ID, "run_attempt": n, "name": j.Name, "status": "completed", "conclusion": j.Conclusion,
				"head_sha": hr.HeadSHA, "started_at": at, "completed_at": at.Add(j.Duration), "steps": steps,
				"html_url": fmt.Sprintf("https://github.com/%s/actions/runs/%d/job/%d", rp.fullName, hr.ID, j.ID),
			})
		}
		writeJSON(w, 200, map[string]any{"total_count": len(jobs), "jobs": paginate(w, r, jobs)})
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/issues", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		q := r.URL.Query()
		state := cmpOr(q.Get("state"), "open")
		var want []string
		if l := q.Get("labels"); l != "" {
			want = strings.Split(l, ",")
		}
		var since time.Time
		if v := q.Get("since"); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				writeErr(w, 422, "Validation Failed: since")
				return
			}
			since = t
		}
		h := s.historyOf(rp)
		var nums []int
		for n := range rp.issues {
			nums = append(nums, n)
		}
		slices.Sort(nums)
		if q.Get("direction") != "asc" {
			slices.Reverse(nums) // GitHub's default: newest first
		}
		items := []map[string]any{}
		for _, n := range nums {
			labels := rp.issues[n].labels
			if !containsAll(labels, want) {
				continue
			}
			var js map[string]any
			if hi := h.issues[n]; hi != nil {
				if (state != "all" && hi.State != state) || hi.created.Before(since) {
					continue
				}
				js = map[string]any{"number": n, "title": hi.Title, "body": hi.Body, "state": hi.State,
					"user": map[string]any{"login": hi.Author, "type": hi.AuthorType}, "comments": len(rp.issues[n].comments),
					"created_at": hi.created, "updated_at": hi.created,
					"html_url": fmt.Sprintf("https://github.com/%s/issues/%d", rp.fullName, n)}
			} else {
				var p *pull
				for _, x := range rp.pulls {
					if x.Number == n {
						p = x
					}
				}
				if p == nil || (state != "all" && p.State != state) {
					continue
				}
				// Pull requests are issues too: the listing includes them.
				js = map[string]any{"number": n, "title": p.Title, "body": p.Body, "state": p.State,
					"user":         map[string]any{"login": p.Author, "type": "User"},
					"pull_request": map[string]any{"url": fmt.Sprintf("%srepos/%s/pulls/%d", s.URL, rp.fullName, n)},
					"html_url":     fmt.Sprintf("https://github.com/%s/pull/%d", rp.fullName, n)}
			}
			js["labels"] = labelsJSON(labels)
			items = append(items, js)
		}
		writeJSON(w, 200, paginate(w, r, items))
	})

	s.handle(mux, "POST /repos/{owner}/{repo}/issues", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		var in struct {
			Title, Body string
			Labels      []string
		}
		if !decode(w, r, &in) {
			return
		}
		if in.Title == "" {
			writeErr(w, 422, "Validation Failed: title is missing")
			return
		}
		if s.historyOf(rp).dropLabels {
			in.Labels = nil
		}
		n := s.addIssue(rp, Issue{Title: in.Title, Body: in.Body, Labels: in.Labels})
		hi := s.historyOf(rp).issues[n]
		writeJSON(w, 201, map[string]any{"number": n, "title": hi.Title, "body": hi.Body, "state": hi.State,
			"labels": labelsJSON(hi.Labels), "user": map[string]any{"login": hi.Author, "type": hi.AuthorType},
			"created_at": hi.created, "updated_at": hi.created,
			"html_url": fmt.Sprintf("https://github.com/%s/issues/%d", rp.fullName, n)})
	})
}

// attemptOf resolves the {id} and {n} of an attempt route, answering 404
// when either is unknown; the caller holds s.mu.
func (s *Server) attemptOf(w http.ResponseWriter, r *http.Request, rp *repo) (*histRun, int) {
	id, _ := intValue(r, "id")
	n, err := strconv.Atoi(r.PathValue("n"))
	hr := s.historyOf(rp).run(id)
	if hr == nil || err != nil || n < 1 || n > len(hr.Attempts) {
		writeErr(w, 404, "Not Found")
		return nil, 0
	}
	return hr, n
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			return false
		}
	}
	return true
}
