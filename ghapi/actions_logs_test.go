package ghapi

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// blobServer stands in for the log storage host: it fails the test when any
// credential reaches it.
func blobServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			t.Errorf("log host got Authorization %q", a)
		}
		for k, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, testToken) {
					t.Errorf("log host got the token in header %s", k)
				}
			}
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestJobLog_followsRedirectWithoutToken(t *testing.T) {
	t.Parallel()
	const logText = "\ufeff2026-03-01T12:00:00.0000000Z ##[group]Run go test ./...\n2026-03-01T12:00:01.0000000Z --- FAIL: TestParse (0.00s)\n"
	var blobHits int
	blob := blobServer(t, func(w http.ResponseWriter, r *http.Request) {
		blobHits++
		switch r.URL.Path {
		case "/logs/job-1":
			// Storage hosts may redirect once more; still no token.
			http.Redirect(w, r, "/logs/job-1-final?sig=abc", http.StatusFound)
		case "/logs/job-1-final":
			if r.URL.Query().Get("sig") != "abc" {
				t.Errorf("signature lost: %v", r.URL)
			}
			io.WriteString(w, logText)
		default:
			http.NotFound(w, r)
		}
	})
	f := setup(t)
	f.handle("/repos/o/r/actions/jobs/1/logs", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		w.Header().Set("Location", blob.URL+"/logs/job-1?sig=xyz")
		w.WriteHeader(http.StatusFound)
	})
	rc, err := f.client.JobLog(t.Context(), "o", "r", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != logText {
		t.Errorf("log = %q, want %q", got, logText)
	}
	if blobHits != 2 {
		t.Errorf("log host hit %d times, want 2", blobHits)
	}
}

func TestJobLog_errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		body       string
		wantKind   error
		wantInText []string
	}{
		{
			name: "expired", status: http.StatusGone, wantKind: ErrGone,
			wantInText: []string{"gone (410)", "expired"},
		},
		{
			name: "missing permission", status: http.StatusForbidden,
			body:     `{"message":"Resource not accessible by integration"}`,
			wantKind: ErrForbidden, wantInText: []string{"forbidden (403)", "permissions: actions: read"},
		},
		{
			name: "unknown job", status: http.StatusNotFound, body: `{"message":"Not Found"}`,
			wantKind: ErrNotFound, wantInText: []string{"not found (404)", "actions: read"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			f.handle("/repos/o/r/actions/jobs/9/logs", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, tt.status, tt.body)
			})
			rc, err := f.client.JobLog(t.Context(), "o", "r", 9)
			if rc != nil {
				rc.Close()
				t.Error("got a body with an error status")
			}
			if !errors.Is(err, tt.wantKind) {
				t.Fatalf("err = %v, want %v", err, tt.wantKind)
			}
			for _, s := range tt.wantInText {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error leaks the token: %v", err)
			}
		})
	}
}

func TestJobLog_logHostFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		wantKind error
	}{
		{"blob gone", http.StatusNotFound, ErrGone},
		{"blob refused", http.StatusForbidden, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			blob := blobServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "AuthenticationFailed", tt.status)
			})
			f := setup(t)
			f.handle("/repos/o/r/actions/jobs/3/logs", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, blob.URL+"/job-3?sv=2021&sig=SIGNEDSECRET", http.StatusFound)
			})
			_, err := f.client.JobLog(t.Context(), "o", "r", 3)
			var ae *APIError
			if !errors.As(err, &ae) || ae.StatusCode != tt.status {
				t.Fatalf("err = %v, want APIError with status %d", err, tt.status)
			}
			if ae.Kind != tt.wantKind {
				t.Errorf("kind = %v, want %v", ae.Kind, tt.wantKind)
			}
			if strings.Contains(err.Error(), "SIGNEDSECRET") {
				t.Errorf("error leaks the signed URL: %v", err)
			}
		})
	}
}

func TestJobLog_badRedirect(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/actions/jobs/4/logs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "file:///etc/passwd")
		w.WriteHeader(http.StatusFound)
	})
	if _, err := f.client.JobLog(t.Context(), "o", "r", 4); err == nil || !strings.Contains(err.Error(), "invalid log URL") {
		t.Fatalf("err = %v, want invalid log URL", err)
	}
}

// A 301 on the logs endpoint is followed by go-github itself; if it pointed
// at another host the token would go with it. The host guard refuses.
func TestJobLog_crossHostMovedIsRefused(t *testing.T) {
	t.Parallel()
	other := blobServer(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("token-bearing request reached another host: %s", r.URL)
	})
	f := setup(t)
	f.handle("/repos/o/r/actions/jobs/8/logs", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/repos/o/r/actions/jobs/8/logs", http.StatusMovedPermanently)
	})
	_, err := f.client.JobLog(t.Context(), "o", "r", 8)
	if err == nil || !strings.Contains(err.Error(), "refusing to send the GitHub token") {
		t.Fatalf("err = %v, want a refusal", err)
	}
}
