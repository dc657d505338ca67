package provider

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// MaxResponseBytes bounds the body of one model API response. A real
// answer is far smaller: max output tokens (tens of thousands, a few bytes
// each) plus JSON framing stays under 1 MiB; 16 MiB leaves room for
// verbose servers while keeping a hostile --base-url endpoint from making
// the SDK read an unbounded body into memory.
const MaxResponseBytes = 16 << 20

// ErrResponseTooLarge is wrapped when a model API response exceeds
// MaxResponseBytes. It is not retried: a server that sent one oversized
// answer will most likely send another.
var ErrResponseTooLarge = errors.New("model API response too large")

// capResponse is SDK middleware bounding the response body: reading past
// max fails with ErrResponseTooLarge (at once when Content-Length already
// says so), so the SDK's io.ReadAll stops there.
func capResponse(max int64) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		res, err := next(req)
		if err == nil && res != nil && res.Body != nil {
			res.Body = &cappedBody{rc: res.Body, max: max, declared: res.ContentLength}
		}
		return res, err
	}
}

// cappedBody yields at most max bytes of rc, then ErrResponseTooLarge.
type cappedBody struct {
	rc       io.ReadCloser
	max      int64
	declared int64 // Content-Length, -1 when unknown
	n        int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.declared > b.max {
		return 0, b.tooLarge(b.declared)
	}
	if b.n > b.max {
		return 0, b.tooLarge(b.n)
	}
	// Read one byte past the limit to tell "exactly max" from "more".
	if room := b.max - b.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		return n - int(b.n-b.max), b.tooLarge(b.n)
	}
	return n, err
}

func (b *cappedBody) tooLarge(seen int64) error {
	return fmt.Errorf("%w: more than %d bytes (at least %d sent); the endpoint is not behaving like a model API", ErrResponseTooLarge, b.max, seen)
}

func (b *cappedBody) Close() error { return b.rc.Close() }
