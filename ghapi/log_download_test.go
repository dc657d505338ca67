package ghapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi/ghtest"
)

const faultJob = 777

// faultLog is a job log large enough to be cut mid-body.
var faultLog = func() string {
	var b strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&b, "2026-03-01T12:00:%02d.0000000Z line %d of the failed job's log\n", i%60, i)
	}
	return b.String()
}()

// logScene is a fake GitHub whose job 777 has faultLog, and a client with a
// fake clock.
func logScene(t *testing.T, faults ...ghtest.Fault) (*ghtest.Server, *Client, *fakeClock) {
	t.Helper()
	s := ghtest.NewServer(t, testToken)
	sha := s.AddRepo("o/r", "main", map[string]string{"go.mod": "module x\n"})
	s.AddRun("o/r", ghtest.Run{ID: 1, HeadBranch: "main", HeadSHA: sha, Jobs: []ghtest.Job{{ID: faultJob, Name: "test", Log: faultLog}}})
	for _, f := range faults {
		s.Inject(f)
	}
	clock := newFakeClock()
	c, err := New(t.Context(), Options{Token: testToken, BaseURL: s.URL, WriteInterval: -1, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, clock
}

// trail is the method and path of every request, host-prefixed for the log host.
func trail(s *ghtest.Server) []string {
	var out []string
	for _, r := range s.Requests() {
		p := r.Method + " " + r.Path
		if r.Host == "logs" {
			p = "logs: " + p
		}
		out = append(out, p)
	}
	return out
}

func readJobLog(t *testing.T, c *Client) (string, error) {
	t.Helper()
	rc, err := c.JobLog(t.Context(), "o", "r", faultJob)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	// Small reads, as a line scanner would do, so a cut lands mid-stream.
	b, err := io.ReadAll(bufio.NewReaderSize(rc, 16))
	return string(b), err
}

func TestJobLog_transientLogHostFaultsAreRetried(t *testing.T) {
	t.Parallel()
	const logPath = "/o/r/jobs/777"
	tests := []struct {
		name   string
		fault  ghtest.Fault
		sleeps []time.Duration
		gets   int // requests to the log host
	}{
		{"503 once", ghtest.Fault{Status: http.StatusServiceUnavailable}, []time.Duration{time.Second}, 2},
		{"503 three times", ghtest.Fault{Status: http.StatusServiceUnavailable, Times: 3},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, 4},
		{"429 with Retry-After", ghtest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "7"}, []time.Duration{7 * time.Second}, 2},
		{"502 twice", ghtest.Fault{Status: http.StatusBadGateway, Times: 2}, []time.Duration{time.Second, 2 * time.Second}, 3},
		{"connection dropped before an answer", ghtest.Fault{Drop: true}, []time.Duration{time.Second}, 2},
		{"body cut mid-way", ghtest.Fault{Cut: 5000}, []time.Duration{time.Second}, 2},
		{"body cut twice", ghtest.Fault{Cut: 70000, Times: 2}, []time.Duration{time.Second, 2 * time.Second}, 3},
		{"headers only, then reset", ghtest.Fault{Cut: 1, Times: 3}, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fault.Host, tt.fault.Method, tt.fault.Path = "logs", "GET", logPath
			s, c, clock := logScene(t, tt.fault)
			got, err := readJobLog(t, c)
			if err != nil {
				t.Fatalf("JobLog: %v\nrequests: %q", err, trail(s))
			}
			if got != faultLog {
				t.Fatalf("log read is %d bytes, want exactly the %d of the job's log", len(got), len(faultLog))
			}
			want := []string{"GET /repos/o/r/actions/jobs/777/logs"}
			for range tt.gets {
				want = append(want, "logs: GET "+logPath)
			}
			if tr := trail(s); !slices.Equal(tr, want) {
				t.Errorf("requests = %q\nwant %q", tr, want)
			}
			if s.Fired() != len(tt.sleeps) {
				t.Errorf("%d faults fired, want %d", s.Fired(), len(tt.sleeps))
			}
			if got := clock.recorded(); !slices.Equal(got, tt.sleeps) {
				t.Errorf("waits = %v, want %v", got, tt.sleeps)
			}
			if n := s.LogAuthViolations(); n != 0 {
				t.Errorf("%d log requests carried a credential", n)
			}
		})
	}
}

func TestJobLog_resumesWithRange(t *testing.T) {
	t.Parallel()
	s, c, _ := logScene(t, ghtest.Fault{Host: "logs", Method: "GET", Path: "/o/r/jobs/777", Cut: 5000})
	if got, err := readJobLog(t, c); err != nil || got != faultLog {
		t.Fatalf("JobLog: %d bytes, %v", len(got), err)
	}
	var ranges []string
	for _, r := range s.Requests() {
		if r.Host == "logs" {
			ranges = append(ranges, r.Range)
		}
	}
	if len(ranges) != 2 || ranges[0] != "" || ranges[1] != "bytes=5000-" {
		t.Errorf("Range headers = %q, want none then bytes=5000-", ranges)
	}
}

func TestJobLog_persistentLogHostFailureNamesTheHost(t *testing.T) {
	t.Parallel()
	s, c, clock := logScene(t, ghtest.Fault{Host: "logs", Method: "GET", Path: "/o/r/jobs/777", Status: http.StatusServiceUnavailable, Times: -1})
	_, err := c.JobLog(t.Context(), "o", "r", faultJob)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusServiceUnavailable || ae.Kind != nil {
		t.Fatalf("err = %v, want an unclassified APIError with status 503", err)
	}
	for _, want := range []string{"the log storage host answered 503 Service Unavailable 4 times for job 777", "never with the token"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "sig=") || strings.Contains(err.Error(), testToken) {
		t.Errorf("error leaks the signed URL or the token: %v", err)
	}
	if n := s.Fired(); n != DefaultMaxAttempts {
		t.Errorf("log host asked %d times, want %d", n, DefaultMaxAttempts)
	}
	if got, want := clock.recorded(), []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
}

func TestJobLog_retryAfterBeyondMaxWaitIsNotAwaited(t *testing.T) {
	t.Parallel()
	s, c, clock := logScene(t, ghtest.Fault{Host: "logs", Method: "GET", Path: "/o/r/jobs/777", Status: http.StatusServiceUnavailable, RetryAfter: "3600"})
	_, err := c.JobLog(t.Context(), "o", "r", faultJob)
	if err == nil || !strings.Contains(err.Error(), "answered 503 Service Unavailable 1 time for job 777") {
		t.Fatalf("err = %v", err)
	}
	if s.Fired() != 1 || len(clock.recorded()) != 0 {
		t.Errorf("fired %d, waits %v: want one request and no wait", s.Fired(), clock.recorded())
	}
}

func TestJobLog_bodyCutOnEveryAttemptFails(t *testing.T) {
	t.Parallel()
	s, c, _ := logScene(t, ghtest.Fault{Host: "logs", Method: "GET", Path: "/o/r/jobs/777", Cut: 1000, Times: -1})
	got, err := readJobLog(t, c)
	if err == nil {
		t.Fatalf("read %d bytes without an error", len(got))
	}
	if !strings.Contains(err.Error(), "the log storage host broke off the download of job 777's log") ||
		!strings.Contains(err.Error(), fmt.Sprintf("of %d bytes, 4 attempts in all", len(faultLog))) {
		t.Errorf("err = %v", err)
	}
	if len(got) != 4000 || got != faultLog[:4000] {
		t.Errorf("read %d bytes before the error, want the 4000 served", len(got))
	}
	if s.Fired() != DefaultMaxAttempts {
		t.Errorf("fired %d", s.Fired())
	}
}

func TestJobLog_notFoundIsNotRetried(t *testing.T) {
	t.Parallel()
	s, c, clock := logScene(t, ghtest.Fault{Host: "logs", Method: "GET", Path: "/o/r/jobs/777", Status: http.StatusNotFound, Times: -1})
	_, err := c.JobLog(t.Context(), "o", "r", faultJob)
	if !errors.Is(err, ErrGone) || s.Fired() != 1 || len(clock.recorded()) != 0 {
		t.Fatalf("err = %v, fired %d, waits %v: want ErrGone at once", err, s.Fired(), clock.recorded())
	}
}

// A host that ignores Range gets the whole log again: what the caller has
// is skipped; a different length means the log changed and is refused.
func TestJobLog_resumeWithoutRangeSupport(t *testing.T) {
	t.Parallel()
	for _, changed := range []bool{false, true} {
		t.Run(fmt.Sprint("changed=", changed), func(t *testing.T) {
			t.Parallel()
			var hits int
			blob := blobServer(t, func(w http.ResponseWriter, r *http.Request) {
				hits++
				body := faultLog
				if hits > 1 && changed {
					body += "one more line\n"
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
				if hits == 1 {
					io.WriteString(w, body[:3000])
					conn, _, err := http.NewResponseController(w).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
				io.WriteString(w, body)
			})
			f := setup(t)
			f.handle("/repos/o/r/actions/jobs/777/logs", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, blob.URL+"/job?sig=S", http.StatusFound)
			})
			got, err := readJobLog(t, f.client)
			switch {
			case changed && (err == nil || !strings.Contains(err.Error(), "the log changed")):
				t.Errorf("err = %v, want a refusal of a changed log", err)
			case !changed && (err != nil || got != faultLog):
				t.Errorf("read %d bytes, %v; want the log exactly", len(got), err)
			}
			if hits != 2 {
				t.Errorf("log host hit %d times", hits)
			}
		})
	}
}

func TestJobLog_cancelStopsTheRetries(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var hits int
	blob := blobServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits++
		cancel() // the run is cancelled while the host is failing
		http.Error(w, "busy", http.StatusServiceUnavailable)
	})
	f := setup(t)
	f.handle("/repos/o/r/actions/jobs/777/logs", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, blob.URL+"/job?sig=S", http.StatusFound)
	})
	_, err := f.client.JobLog(ctx, "o", "r", faultJob)
	if !errors.Is(err, context.Canceled) || hits != 1 {
		t.Fatalf("err = %v after %d requests, want context.Canceled after 1", err, hits)
	}
}
