package ghapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// step is one canned answer of a scripted endpoint.
type step struct {
	status  int
	headers map[string]string
	body    string
}

// script serves steps in order (the last one repeats) and records bodies.
type script struct {
	mu     sync.Mutex
	steps  []step
	n      int
	bodies []string
}

func (s *script) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	st := s.steps[min(s.n, len(s.steps)-1)]
	s.n++
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	for k, v := range st.headers {
		w.Header().Set(k, v)
	}
	writeJSON(w, st.status, st.body)
}

const repoJSON = `{"full_name":"o/r","default_branch":"main"}`

func TestRetry(t *testing.T) {
	t.Parallel()
	clockNow := newFakeClock().Now()
	secondary := `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
	tests := []struct {
		name       string
		steps      []step
		wantSleeps []time.Duration
		wantCalls  int
		wantKind   error // nil: success expected unless wantStatus
		wantStatus int
	}{
		{
			name: "429 with retry-after then success",
			steps: []step{
				{status: 429, headers: map[string]string{"Retry-After": "3"}, body: `{"message":"slow down"}`},
				{status: 200, body: repoJSON},
			},
			wantSleeps: []time.Duration{3 * time.Second}, wantCalls: 2,
		},
		{
			name: "429 with an HTTP-date retry-after",
			steps: []step{
				{status: 429, headers: map[string]string{"Retry-After": clockNow.Add(7 * time.Second).Format(http.TimeFormat)}},
				{status: 200, body: repoJSON},
			},
			wantSleeps: []time.Duration{7 * time.Second}, wantCalls: 2,
		},
		{
			name: "429 without hints backs off",
			steps: []step{
				{status: 429, body: `{"message":"slow down"}`},
				{status: 200, body: repoJSON},
			},
			wantSleeps: []time.Duration{time.Second}, wantCalls: 2,
		},
		{
			name: "secondary rate limit 403 with retry-after",
			steps: []step{
				{status: 403, headers: map[string]string{"Retry-After": "60"}, body: secondary},
				{status: 200, body: repoJSON},
			},
			wantSleeps: []time.Duration{time.Minute}, wantCalls: 2,
		},
		{
			name: "secondary rate limit 403 without headers waits a minute",
			steps: []step{
				{status: 403, body: secondary},
				{status: 200, body: repoJSON},
			},
			wantSleeps: []time.Duration{time.Minute}, wantCalls: 2,
		},
		{
			name: "primary rate limit waits for the reset",
			steps: []step{
				{status: 403, headers: map[string]string{
					"X-RateLimit-Remaining": "0",
					"X-RateLimit-Reset":     strconv.FormatInt(clockNow.Add(30*time.Second).Unix(), 10),
				}, body: `{"message":"API rate limit exceeded for installation ID 1."}`},
				{status: 200, body: repoJSON},
			},
			wantSleeps: []time.Duration{31 * time.Second}, wantCalls: 2,
		},
		{
			name: "5xx then success",
			steps: []step{
				{status: 502, body: `{"message":"Server Error"}`},
				{status: 503, body: `{"message":"Unavailable"}`},
				{status: 200, body: repoJSON},
			},
			wantSleeps: []time.Duration{time.Second, 2 * time.Second}, wantCalls: 3,
		},
		{
			name:       "5xx forever stops after max attempts",
			steps:      []step{{status: 500, body: `{"message":"Server Error"}`}},
			wantSleeps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, wantCalls: 4,
			wantStatus: 500,
		},
		{
			name: "rate limit resetting later than max wait is returned",
			steps: []step{{status: 403, headers: map[string]string{
				"X-RateLimit-Remaining": "0",
				"X-RateLimit-Reset":     strconv.FormatInt(clockNow.Add(time.Hour).Unix(), 10),
			}, body: `{"message":"API rate limit exceeded"}`}},
			wantCalls: 1, wantKind: ErrRateLimited, wantStatus: 403,
		},
		{
			name:      "missing permission is not retried",
			steps:     []step{{status: 403, body: `{"message":"Resource not accessible by integration"}`}},
			wantCalls: 1, wantKind: ErrForbidden, wantStatus: 403,
		},
		{
			name:      "404 is not retried",
			steps:     []step{{status: 404, body: `{"message":"Not Found"}`}},
			wantCalls: 1, wantKind: ErrNotFound, wantStatus: 404,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			s := &script{steps: tt.steps}
			f.handle("/repos/o/r", s.serve)
			got, err := f.client.DefaultBranch(t.Context(), "o", "r")
			wantErr := tt.wantKind != nil || tt.wantStatus != 0
			if wantErr {
				var ae *APIError
				if !errors.As(err, &ae) || ae.StatusCode != tt.wantStatus || ae.Kind != tt.wantKind {
					t.Errorf("err = %#v, want status %d kind %v", err, tt.wantStatus, tt.wantKind)
				}
			} else if err != nil || got != "main" {
				t.Errorf("DefaultBranch = %q, %v", got, err)
			}
			if s.n != tt.wantCalls {
				t.Errorf("%d calls, want %d", s.n, tt.wantCalls)
			}
			equal(t, "sleeps", f.clock.recorded(), tt.wantSleeps)
		})
	}
}

func TestRetry_rateLimitedErrorSaysWhen(t *testing.T) {
	t.Parallel()
	f := setup(t)
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	f.handle("/repos/o/r", (&script{steps: []step{{status: 403, headers: map[string]string{
		"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10),
	}, body: `{"message":"API rate limit exceeded"}`}}}).serve)
	_, err := f.client.DefaultBranch(t.Context(), "o", "r")
	var ae *APIError
	if !errors.As(err, &ae) || !ae.RetryAt.Equal(reset) {
		t.Fatalf("err = %#v, want RetryAt %v", err, reset)
	}
}

func TestRetry_writeBodyReplayed(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := &script{steps: []step{{status: 502}, {status: 200, body: `[{"name":"bug"}]`}}}
	f.handle("/repos/o/r/issues/1/labels", s.serve)
	if err := f.client.AddLabels(t.Context(), "o", "r", 1, "bug"); err != nil {
		t.Fatal(err)
	}
	equal(t, "bodies", s.bodies, []string{`["bug"]` + "\n", `["bug"]` + "\n"})
}

func TestRetry_commentCreationIsNotRetriedOn5xx(t *testing.T) {
	t.Parallel()
	f := setup(t)
	// GitHub may have stored the comment before answering 502: a retry
	// would post it twice.
	s := &script{steps: []step{{status: 502}, {status: 201, body: `{"id":5}`}}}
	f.handle("/repos/o/r/issues/1/comments", s.serve)
	if _, err := f.client.CreateComment(t.Context(), "o", "r", 1, "hello"); err == nil || s.n != 1 {
		t.Fatalf("err = %v after %d calls, want an error after 1", err, s.n)
	}
	// A 429 means it was not processed: that one is retried.
	s2 := &script{steps: []step{{status: 429, headers: map[string]string{"Retry-After": "1"}}, {status: 201, body: `{"id":6}`}}}
	f.handle("/repos/o/r/issues/2/comments", s2.serve)
	if _, err := f.client.CreateComment(t.Context(), "o", "r", 2, "hello"); err != nil || s2.n != 2 {
		t.Fatalf("err = %v after %d calls, want success after 2", err, s2.n)
	}
}

func TestRetry_deadlineTooCloseReturnsAtOnce(t *testing.T) {
	t.Parallel()
	f := setup(t, func(o *Options) { o.Clock = realClock{} })
	s := &script{steps: []step{{status: 429, headers: map[string]string{"Retry-After": "90"}}}}
	f.handle("/repos/o/r", s.serve)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := f.client.DefaultBranch(ctx, "o", "r")
	if !errors.Is(err, ErrRateLimited) || s.n != 1 {
		t.Fatalf("err = %v after %d calls, want ErrRateLimited after 1", err, s.n)
	}
}

func TestRetry_cancelDuringWait(t *testing.T) {
	t.Parallel()
	f := setup(t, func(o *Options) { o.Clock = realClock{} })
	ctx, cancel := context.WithCancel(t.Context())
	f.handle("/repos/o/r", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "100")
		writeJSON(w, 429, `{}`)
		time.AfterFunc(20*time.Millisecond, cancel)
	})
	_, err := f.client.DefaultBranch(ctx, "o", "r")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestRetry_transportErrorRetriedForReads(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var n int
	f.handle("/repos/o/r", func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // connection dropped without an answer
			}
			return
		}
		writeJSON(w, 200, repoJSON)
	})
	if got, err := f.client.DefaultBranch(t.Context(), "o", "r"); err != nil || got != "main" {
		t.Fatalf("DefaultBranch = %q, %v", got, err)
	}
	equal(t, "sleeps", f.clock.recorded(), []time.Duration{time.Second})
}

func TestRetry_transportErrorNotRetriedForWrites(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/issues/1/comments", func(w http.ResponseWriter, r *http.Request) {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	})
	if _, err := f.client.CreateComment(t.Context(), "o", "r", 1, "x"); err == nil {
		t.Fatal("no error")
	}
	if n := f.count("/repos/o/r/issues/1/comments"); n != 1 {
		t.Errorf("%d calls, want 1: a write may have landed", n)
	}
}

func TestWriteSpacing(t *testing.T) {
	t.Parallel()
	f := setup(t, func(o *Options) { o.WriteInterval = 0 }) // 0 = the 1 s default
	f.handle("/repos/o/r/issues/1/comments", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 201, `{"id":1}`)
	})
	f.handle("/repos/o/r", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, repoJSON)
	})
	ctx := t.Context()
	for range 3 {
		if _, err := f.client.CreateComment(ctx, "o", "r", 1, "x"); err != nil {
			t.Fatal(err)
		}
		// Reads are never spaced.
		if _, err := f.client.DefaultBranch(ctx, "o", "r"); err != nil {
			t.Fatal(err)
		}
	}
	equal(t, "sleeps", f.clock.recorded(), []time.Duration{time.Second, time.Second})

	// A write long after the last one goes at once; part of a gap is waited.
	f.clock.advance(5 * time.Second)
	if _, err := f.client.CreateComment(ctx, "o", "r", 1, "x"); err != nil {
		t.Fatal(err)
	}
	f.clock.advance(400 * time.Millisecond)
	if _, err := f.client.CreateComment(ctx, "o", "r", 1, "x"); err != nil {
		t.Fatal(err)
	}
	equal(t, "sleeps", f.clock.recorded(), []time.Duration{time.Second, time.Second, 600 * time.Millisecond})
}

func TestWriteSpacing_disabled(t *testing.T) {
	t.Parallel()
	f := setup(t) // WriteInterval -1
	f.handle("/repos/o/r/issues/1/comments", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 201, `{"id":1}`)
	})
	for range 3 {
		if _, err := f.client.CreateComment(t.Context(), "o", "r", 1, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if s := f.clock.recorded(); len(s) != 0 {
		t.Errorf("sleeps = %v, want none", s)
	}
}
