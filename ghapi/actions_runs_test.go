package ghapi

import (
	"errors"
	"net/http"
	"os"
	"testing"
)

// readTestdata is called from handlers too, so it reports with Errorf.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Errorf("testdata: %v", err)
	}
	return string(b)
}

func TestWorkflowRun(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/octo-org/octo-repo/actions/runs/29679449", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		writeJSON(w, http.StatusOK, readTestdata(t, "workflow_run.json"))
	})
	run, err := f.client.WorkflowRun(t.Context(), "octo-org", "octo-repo", 29679449)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "run", run, &Run{
		ID: 29679449, Name: "CI", WorkflowID: 159038, Event: "pull_request",
		Status: "completed", Conclusion: "failure", RunAttempt: 2,
		HeadSHA: "f83a356604ae3c5d03e1b46ef4d1ca77d64a90b0", HeadBranch: "feature/parser",
		HeadRepo: "contributor/octo-repo", Repo: "octo-org/octo-repo",
		HTMLURL:      "https://github.com/octo-org/octo-repo/actions/runs/29679449",
		PullRequests: []int{42},
	})
}

func TestFailedJobs_latestAttemptPaginated(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/octo-org/octo-repo/actions/runs/29679449/jobs", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		switch r.URL.Query().Get("page") {
		case "":
			testFormValues(t, r, map[string]string{"filter": "latest", "per_page": "100"})
			w.Header().Set("Link", `<`+f.server.URL+baseURLPath+`/repos/octo-org/octo-repo/actions/runs/29679449/jobs?filter=latest&per_page=100&page=2>; rel="next"`)
			writeJSON(w, http.StatusOK, readTestdata(t, "jobs_page1.json"))
		case "2":
			testFormValues(t, r, map[string]string{"filter": "latest", "per_page": "100", "page": "2"})
			writeJSON(w, http.StatusOK, readTestdata(t, "jobs_page2.json"))
		default:
			t.Errorf("unexpected page %q", r.URL.Query().Get("page"))
		}
	})
	jobs, err := f.client.FailedJobs(t.Context(), "octo-org", "octo-repo", 29679449)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "jobs", jobs, []Job{
		{
			ID: 399444497, RunID: 29679449, RunAttempt: 2, Name: "test (ubuntu-latest, 1.26)",
			Conclusion: "failure", HTMLURL: "https://github.com/octo-org/octo-repo/runs/399444497",
			CheckRunID: 399444497, CheckRunURL: "https://api.github.com/repos/octo-org/octo-repo/check-runs/399444497",
			FailedSteps: []string{"go test ./..."},
		},
		{
			ID: 399444498, RunID: 29679449, RunAttempt: 2, Name: "integration",
			Conclusion: "timed_out", HTMLURL: "https://github.com/octo-org/octo-repo/runs/399444498",
			CheckRunID: 399444498, CheckRunURL: "https://api.github.com/repos/octo-org/octo-repo/check-runs/399444498",
		},
	})
	if n := f.count("/repos/octo-org/octo-repo/actions/runs/29679449/jobs"); n != 2 {
		t.Errorf("jobs listed with %d requests, want 2", n)
	}
}

func TestFailedJobs_forbidden(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/actions/runs/7/jobs", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusForbidden, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/actions/workflow-jobs"}`)
	})
	_, err := f.client.FailedJobs(t.Context(), "o", "r", 7)
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.Permission != "actions: read" || ae.StatusCode != 403 {
		t.Errorf("err = %#v, want permission actions: read and status 403", err)
	}
}

func TestLastPathID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"https://api.github.com/repos/o/r/check-runs/123": 123,
		"https://api.github.com/repos/o/r/check-runs/":    0,
		"":              0,
		"%zz":           0,
		"/x/-5":         0,
		"/check-runs/9": 9,
	} {
		if got := lastPathID(in); got != want {
			t.Errorf("lastPathID(%q) = %d, want %d", in, got, want)
		}
	}
}
