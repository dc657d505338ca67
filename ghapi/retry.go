package ghapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Retry defaults.
const (
	// DefaultMaxAttempts is the total number of tries of one request.
	DefaultMaxAttempts = 4
	// DefaultMaxWait is the longest single wait honoured; a rate limit that
	// resets later is returned to the caller as ErrRateLimited.
	DefaultMaxWait = 2 * time.Minute
	// DefaultBaseBackoff is the first backoff for 5xx and 429 without a hint;
	// it doubles on each retry.
	DefaultBaseBackoff = time.Second
	// secondaryLimitWait is GitHub's advice for a secondary rate limit that
	// comes without retry-after or reset headers: wait at least a minute.
	secondaryLimitWait = time.Minute
	// resetSlack is added to x-ratelimit-reset, which has a 1 s resolution.
	resetSlack = time.Second
	// peekLimit bounds how much of a 403 body is read to spot a secondary
	// rate limit.
	peekLimit = 64 << 10
)

// RetryPolicy bounds the retry transport. Zero fields take the defaults.
type RetryPolicy struct {
	// MaxAttempts is the total number of tries, at least 1.
	MaxAttempts int
	// MaxWait is the longest single wait the transport accepts.
	MaxWait time.Duration
	// BaseBackoff starts the exponential backoff used without server hints.
	BaseBackoff time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.MaxWait <= 0 {
		p.MaxWait = DefaultMaxWait
	}
	if p.BaseBackoff <= 0 {
		p.BaseBackoff = DefaultBaseBackoff
	}
	return p
}

// Clock is the time source of the retry transport, injectable for tests.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, returning ctx.Err() in that case.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryTransport retries rate-limited and failed requests and spaces writes.
// It sits under the auth transport, so every try carries the token and the
// request body is rewound with GetBody.
type retryTransport struct {
	base     http.RoundTripper
	policy   RetryPolicy
	interval time.Duration
	clock    Clock

	mu        sync.Mutex
	nextWrite time.Time
}

func newRetryTransport(base http.RoundTripper, p RetryPolicy, interval time.Duration, clock Clock) *retryTransport {
	return &retryTransport{base: base, policy: p.withDefaults(), interval: interval, clock: clock}
}

// RoundTrip implements http.RoundTripper.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			var err error
			if r, err = rewind(req); err != nil {
				return nil, err
			}
		}
		write := isWrite(r.Method)
		if write {
			if err := t.spaceWrite(ctx); err != nil {
				closeBody(r)
				return nil, err
			}
		}
		resp, err := t.base.RoundTrip(r)
		if write {
			t.wroteAt(t.clock.Now())
		}
		if attempt >= t.policy.MaxAttempts || !canRewind(req) {
			return resp, err
		}
		wait, retry := t.decide(r, resp, err, attempt)
		if !retry || wait > t.policy.MaxWait || pastDeadline(ctx, t.clock.Now().Add(wait)) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, peekLimit))
			_ = resp.Body.Close()
		}
		if err := t.clock.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// decide says whether to retry and after how long.
func (t *retryTransport) decide(req *http.Request, resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if err != nil {
		// Transport errors: a write may have reached GitHub, so only reads
		// are retried; a cancelled ctx is never retried.
		if req.Context().Err() != nil || isWrite(req.Method) {
			return 0, false
		}
		return t.backoff(attempt), true
	}
	now := t.clock.Now()
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		if d, ok := hintedWait(resp, now); ok {
			return d, true
		}
		return t.backoff(attempt), true
	case code == http.StatusForbidden:
		if d, ok := hintedWait(resp, now); ok {
			return d, true
		}
		if peekSecondaryLimit(resp) {
			return secondaryLimitWait, true
		}
		return 0, false // a real permission problem
	case code == http.StatusInternalServerError, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		if createsComment(req) {
			// GitHub may have stored it before failing: a retry could post
			// it twice. The caller finds-or-creates by marker instead.
			return 0, false
		}
		if d, ok := retryAfter(resp, now); ok {
			return d, true
		}
		return t.backoff(attempt), true
	}
	return 0, false
}

func (t *retryTransport) backoff(attempt int) time.Duration { return t.policy.backoff(attempt) }

// backoff is the wait after the attempt-th try failed without a server
// hint: BaseBackoff doubled on each retry, at most MaxWait.
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := p.BaseBackoff << (attempt - 1)
	if d <= 0 || d > p.MaxWait {
		d = p.MaxWait
	}
	return d
}

// spaceWrite waits until the write slot is free and reserves it, so that
// concurrent writes are serialized and spaced by the interval.
func (t *retryTransport) spaceWrite(ctx context.Context) error {
	if t.interval <= 0 {
		return nil
	}
	t.mu.Lock()
	now := t.clock.Now()
	at := t.nextWrite
	if at.Before(now) {
		at = now
	}
	t.nextWrite = at.Add(t.interval)
	t.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		return t.clock.Sleep(ctx, d)
	}
	return nil
}

// wroteAt moves the next write slot to one interval after a write finished.
func (t *retryTransport) wroteAt(end time.Time) {
	if t.interval <= 0 {
		return
	}
	t.mu.Lock()
	if next := end.Add(t.interval); next.After(t.nextWrite) {
		t.nextWrite = next
	}
	t.mu.Unlock()
}

// hintedWait reads the server's rate-limit hints: retry-after, or
// x-ratelimit-remaining: 0 with x-ratelimit-reset.
func hintedWait(resp *http.Response, now time.Time) (time.Duration, bool) {
	if d, ok := retryAfter(resp, now); ok {
		return d, true
	}
	if resp.Header.Get("X-Ratelimit-Remaining") != "0" {
		return 0, false
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(resp.Header.Get("X-Ratelimit-Reset")), 10, 64)
	if err != nil {
		return 0, false
	}
	d := time.Unix(sec, 0).Sub(now)
	if d < 0 {
		d = 0
	}
	return d + resetSlack, true
}

// retryAfter parses Retry-After as seconds or an HTTP date.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if sec, err := strconv.Atoi(v); err == nil && sec >= 0 {
		return time.Duration(sec) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		d := at.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// peekSecondaryLimit looks for GitHub's secondary-rate-limit wording in a
// 403 body, leaving the body readable for go-github.
func peekSecondaryLimit(resp *http.Response) bool {
	head, err := io.ReadAll(io.LimitReader(resp.Body, peekLimit))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	lower := bytes.ToLower(head)
	return bytes.Contains(lower, []byte("secondary rate limit")) || bytes.Contains(lower, []byte("abuse detection"))
}

// createsComment reports a POST that creates an issue or PR comment: the
// one write here that is neither content-addressed (blobs, trees,
// commits), idempotent (labels, reactions, edits) nor guarded by a 422
// (a second PR for the same head).
func createsComment(req *http.Request) bool {
	return req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/comments")
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

func canRewind(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return r, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

func pastDeadline(ctx context.Context, at time.Time) bool {
	dl, ok := ctx.Deadline()
	return ok && at.After(dl)
}
