package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		header map[string]string
		want   time.Duration
		wantOK bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond, true},
		{"milliseconds preferred", map[string]string{"Retry-After": "3", "Retry-After-Ms": "120"}, 120 * time.Millisecond, true},
		{"bad ms falls back to seconds", map[string]string{"Retry-After": "3", "Retry-After-Ms": "soon"}, 3 * time.Second, true},
		{"http date", map[string]string{"Retry-After": now.Add(42 * time.Second).Format(http.TimeFormat)}, 42 * time.Second, true},
		{"http date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"negative ignored", map[string]string{"Retry-After": "-5"}, 0, false},
		{"garbage ignored", map[string]string{"Retry-After": "later"}, 0, false},
		{"huge clamped", map[string]string{"Retry-After": "1e300"}, retryAfterCeiling, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range c.header {
				h.Set(k, v)
			}
			got, ok := parseRetryAfter(h, now)
			if got != c.want || ok != c.wantOK {
				t.Errorf("parseRetryAfter = %v, %v; want %v, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}

func TestNewAPIErrorBodyShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                string
		body                string
		typ, code, msg, txt string
	}{
		{"openai", `{"error":{"message":"bad","type":"invalid_request_error","code":"x"}}`, "invalid_request_error", "x", "bad",
			"openai api: status 400 invalid_request_error x: bad"},
		{"numeric code", `{"error":{"code":400,"message":"too big","type":"exceed_context_size_error"}}`, "exceed_context_size_error", "400", "too big", ""},
		{"top level (vLLM)", `{"object":"error","message":"m","type":"BadRequestError","code":400}`, "BadRequestError", "400", "m", ""},
		{"string error (Ollama)", `{"error":"model \"llama9\" not found"}`, "", "", `model "llama9" not found`, ""},
		{"not JSON", `<html>Bad Gateway</html>`, "", "", "<html>Bad Gateway</html>", ""},
		{"empty", ``, "", "", "", "openai api: status 400"},
		{"key echoed", `{"error":{"message":"key sk-secret is wrong"}}`, "", "", "key [redacted] is wrong", ""},
		{"long", `{"error":{"message":"` + strings.Repeat("é", 400) + `"}}`, "", "", strings.Repeat("é", 250) + "…", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := &http.Response{StatusCode: 400, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(c.body))}
			e := newAPIError("openai", res, "sk-secret")
			if e.Type != c.typ || e.Code != c.code || e.Message != c.msg {
				t.Errorf("got type %q code %q msg %q; want %q %q %q", e.Type, e.Code, e.Message, c.typ, c.code, c.msg)
			}
			if c.txt != "" && e.Error() != c.txt {
				t.Errorf("Error() = %q, want %q", e.Error(), c.txt)
			}
			// The body stays readable for others.
			if b, _ := io.ReadAll(res.Body); string(b) != c.body {
				t.Errorf("body after = %q", b)
			}
		})
	}
}

func TestRedactErrKeepsChain(t *testing.T) {
	t.Parallel()
	base := &APIError{Provider: "openai", StatusCode: 500}
	err := redactErr(fmt.Errorf("dial https://u:sk-secret@host: %w", base), "sk-secret")
	if strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("not redacted: %q", err)
	}
	if _, ok := errors.AsType[*APIError](err); !ok {
		t.Error("redaction broke errors.As")
	}
	plain := errors.New("nothing secret")
	if redactErr(plain, "sk-secret") != plain || redactErr(plain, "") != plain {
		t.Error("an error without the secret was rewrapped")
	}
}

func TestRetrierUnit(t *testing.T) {
	t.Parallel()
	permanent := errors.New("decode: unexpected token")
	cases := []struct {
		name       string
		maxRetries int
		errs       []error // one per attempt; nil ends with success
		wantCalls  int
		wantErr    string
	}{
		{"success first", 0, []error{nil}, 1, ""},
		{"non-transient error not retried", 0, []error{permanent}, 1, "decode"},
		{"unexpected EOF retried", 0, []error{io.ErrUnexpectedEOF, nil}, 2, ""},
		{"attempt timeout retried", 0, []error{context.DeadlineExceeded, nil}, 2, ""},
		{"negative MaxRetries: single attempt", -1, []error{&APIError{StatusCode: 503}}, 1, "status 503"},
		{"MaxRetries 1: two attempts", 1, []error{&APIError{StatusCode: 503}, &APIError{StatusCode: 502}}, 2, "gave up after 2 attempts"},
		{"409 not retried", 0, []error{&APIError{StatusCode: 409}}, 1, "status 409"},
		{"408 retried", 0, []error{&APIError{StatusCode: 408}, nil}, 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRetrier(c.maxRetries)
			rec := &sleepRecorder{}
			r.sleep, r.jitter = rec.sleep, noJitter
			calls := 0
			err := r.do(t.Context(), func(context.Context) error {
				calls++
				if calls > len(c.errs) {
					t.Fatalf("call %d beyond the script", calls)
				}
				return c.errs[calls-1]
			})
			if calls != c.wantCalls {
				t.Errorf("calls = %d, want %d", calls, c.wantCalls)
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("err = %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("err = %v, want it to mention %q", err, c.wantErr)
			}
		})
	}
}

func TestRetrierBackoffCapAndJitter(t *testing.T) {
	t.Parallel()
	r := newRetrier(10)
	r.jitter = func(d time.Duration) time.Duration { return d - 1 } // the most jitter allowed
	got := []time.Duration{}
	for attempt := 1; attempt <= 8; attempt++ {
		d, refuse := r.delay(errors.New("x"), attempt)
		if refuse != "" {
			t.Fatalf("refused: %s", refuse)
		}
		got = append(got, d)
	}
	for i, d := range got {
		full := min(backoffBase<<i, maxBackoff)
		if d > full || d < full*3/4 {
			t.Errorf("attempt %d: delay %v outside [%v, %v]", i+1, d, full*3/4, full)
		}
	}
}

func TestRetrierStopsOnCancelDuringWait(t *testing.T) {
	t.Parallel()
	r := newRetrier(0) // real sleep
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	start := time.Now()
	err := r.do(ctx, func(context.Context) error {
		calls++
		time.AfterFunc(50*time.Millisecond, cancel)
		return &APIError{StatusCode: 429, RetryAfter: time.Minute, HasRetryAfter: true}
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("err = %v after %d calls, want context.Canceled after 1", err, calls)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("cancel during the wait took %v to return", el)
	}
}
