package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"time"
)

// Retry defaults. The SDKs' own retries are switched off so both adapters
// share this one, tested policy.
const (
	// DefaultMaxRetries is the number of retries after the first attempt
	// (so 4 attempts in all) when Config.MaxRetries is zero.
	DefaultMaxRetries = 3
	// backoffBase and maxBackoff shape the exponential backoff used when
	// the server does not say how long to wait: 0.5s, 1s, 2s... up to 8s.
	backoffBase = 500 * time.Millisecond
	maxBackoff  = 8 * time.Second
	// maxRetryAfter is the longest server-requested wait honoured; asked to
	// wait longer, the adapter fails at once rather than hang the run.
	maxRetryAfter = 2 * time.Minute
	// attemptTimeout bounds one HTTP attempt (non-streaming responses of
	// long outputs can legitimately take minutes).
	attemptTimeout = 10 * time.Minute
)

// retrier runs one model call with bounded retries on transient failures:
// 429, 408 and 5xx answers and transport errors. It honours Retry-After /
// retry-after-ms, never waits past the context's deadline and stops at once
// when the context is done.
type retrier struct {
	attempts int // total attempts, at least 1
	timeout  time.Duration
	// sleep waits d or until ctx is done; replaced in tests.
	sleep func(ctx context.Context, d time.Duration) error
	// jitter returns a random duration in [0, d); replaced in tests.
	jitter func(d time.Duration) time.Duration
}

// newRetrier returns the policy for Config.MaxRetries: 0 means the default,
// a negative value means a single attempt.
func newRetrier(maxRetries int) *retrier {
	switch {
	case maxRetries == 0:
		maxRetries = DefaultMaxRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	return &retrier{
		attempts: maxRetries + 1,
		timeout:  attemptTimeout,
		sleep:    sleepCtx,
		jitter: func(d time.Duration) time.Duration {
			if d <= 0 {
				return 0
			}
			return rand.N(d)
		},
	}
}

// do calls fn until it succeeds, fails permanently, or the attempts run out.
// The error of the last attempt is returned, annotated when retries were
// spent or refused.
func (r *retrier) do(ctx context.Context, fn func(ctx context.Context) error) error {
	var err error
	for attempt := 1; ; attempt++ {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		err = r.once(ctx, fn)
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			// The caller gave up (cancel or deadline): report that, not
			// whatever the aborted request looked like.
			return cerr
		}
		if !r.transient(err) {
			return err
		}
		if attempt >= r.attempts {
			if attempt > 1 {
				return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
			}
			return err
		}
		delay, refuse := r.delay(err, attempt)
		if refuse != "" {
			return fmt.Errorf("not retried (%s): %w", refuse, err)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			return fmt.Errorf("not retried (wait of %s exceeds the deadline): %w", delay.Round(time.Millisecond), err)
		}
		if serr := r.sleep(ctx, delay); serr != nil {
			return serr
		}
	}
}

// once runs one attempt under the per-attempt timeout.
func (r *retrier) once(ctx context.Context, fn func(ctx context.Context) error) error {
	actx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	return fn(actx)
}

// transient reports whether err is worth another attempt.
func (r *retrier) transient(err error) bool {
	if errors.Is(err, ErrResponseTooLarge) {
		return false
	}
	if apiErr, ok := errors.AsType[*APIError](err); ok {
		return apiErr.Retryable()
	}
	// The attempt's own timeout fired while the caller still waits.
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// Connection refused or reset, TLS failure, truncated response.
	if _, ok := errors.AsType[*url.Error](err); ok {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF)
}

// delay returns how long to wait before attempt+1, or why not to retry.
func (r *retrier) delay(err error, attempt int) (time.Duration, string) {
	if apiErr, ok := errors.AsType[*APIError](err); ok && apiErr.HasRetryAfter {
		if apiErr.RetryAfter > maxRetryAfter {
			return 0, fmt.Sprintf("server asked to wait %s, more than %s", apiErr.RetryAfter.Round(time.Second), maxRetryAfter)
		}
		return apiErr.RetryAfter, ""
	}
	d := min(backoffBase<<min(attempt-1, 16), maxBackoff)
	// Subtract up to a quarter so concurrent clients spread out.
	return d - r.jitter(d/4), ""
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// send makes one SDK request under the retry policy: classify turns the
// SDK's error into an APIError (or passes it), and the final error is
// labelled with what and scrubbed of the API key.
func send[T any](ctx context.Context, r *retrier, what, apiKey string, request func(context.Context) (T, error), classify func(error) error) (T, error) {
	var resp T
	err := r.do(ctx, func(ctx context.Context) error {
		v, err := request(ctx)
		if err != nil {
			return classify(err)
		}
		resp = v
		return nil
	})
	if err != nil {
		var zero T
		return zero, redactErr(fmt.Errorf("%s: %w", what, err), apiKey)
	}
	return resp, nil
}
