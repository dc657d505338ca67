package provider

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/agent"
)

// harness lets the behaviour both network adapters share (retries, error
// mapping, cancellation, secrets) run as one table against each.
type harness struct {
	name string
	path string // the API path the adapter posts to
	// newModel builds the adapter against the fake API; the retrier is
	// returned so tests can swap its clock.
	newModel func(t *testing.T, f *fakeAPI, key string) (agent.Model, *retrier)
	// Fixtures and statuses of the provider's answers.
	ok, rateLimit, serverError, unauthorized string
	serverErrorStatus                        int
	contextLength                            []string
	badRequest                               string
}

var harnesses = []harness{
	{
		name: "openai",
		path: "/v1/chat/completions",
		newModel: func(t *testing.T, f *fakeAPI, key string) (agent.Model, *retrier) {
			m, err := NewOpenAI(Config{BaseURL: f.srv.URL + "/v1", Model: "gpt-4.1", APIKey: key, Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			return m, m.retry
		},
		ok:                "openai/parallel_tool_calls.json",
		rateLimit:         "openai/err_429.json",
		serverError:       "openai/err_500.json",
		serverErrorStatus: 500,
		unauthorized:      "openai/err_401.json",
		contextLength: []string{"openai/err_context_length.json", "openai/err_context_length_vllm.json",
			"openai/err_context_length_llamacpp.json"},
		badRequest: "openai/err_bad_request.json",
	},
	{
		name: "anthropic",
		path: "/v1/messages",
		newModel: func(t *testing.T, f *fakeAPI, key string) (agent.Model, *retrier) {
			m, err := NewAnthropic(Config{BaseURL: f.srv.URL, APIKey: key, Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			return m, m.retry
		},
		ok:                "anthropic/tool_use.json",
		rateLimit:         "anthropic/err_429.json",
		serverError:       "anthropic/err_529.json",
		serverErrorStatus: 529,
		unauthorized:      "anthropic/err_401.json",
		contextLength:     []string{"anthropic/err_context_length.json", "anthropic/err_context_limit.json"},
		badRequest:        "anthropic/err_bad_request.json",
	},
}

const canaryKey = "sk-canary-7f3a9c1e5b2d4f6a8c0e"

// newFaked builds h's adapter on a fake API answering replies, with the
// retrier's sleep recorded instead of waited.
func newFaked(t *testing.T, h harness, replies ...reply) (agent.Model, *fakeAPI, *sleepRecorder) {
	t.Helper()
	f := newFakeAPI(t, replies...)
	m, r := h.newModel(t, f, canaryKey)
	rec := &sleepRecorder{}
	r.sleep, r.jitter = rec.sleep, noJitter
	return m, f, rec
}

func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	for _, h := range harnesses {
		cases := []struct {
			name      string
			first     reply
			wantSleep time.Duration
		}{
			{"429 retry-after seconds", reply{status: 429, header: map[string]string{"Retry-After": "7"}, fixture: h.rateLimit}, 7 * time.Second},
			{"429 retry-after-ms wins", reply{status: 429, header: map[string]string{"Retry-After": "7", "retry-after-ms": "1500"}, fixture: h.rateLimit}, 1500 * time.Millisecond},
			{"5xx without header backs off", reply{status: h.serverErrorStatus, fixture: h.serverError}, backoffBase},
			{"503 from a proxy, not JSON", reply{status: 503, header: map[string]string{"Retry-After": "2"}}, 2 * time.Second},
			{"connection dropped", reply{hangup: true}, backoffBase},
		}
		for _, c := range cases {
			t.Run(h.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				m, f, rec := newFaked(t, h, c.first, reply{fixture: h.ok})
				out, err := m.Sample(t.Context(), sampleRequest())
				if err != nil {
					t.Fatalf("Sample: %v", err)
				}
				if len(out.ToolCalls) != 2 {
					t.Errorf("got %d tool calls after the retry, want 2", len(out.ToolCalls))
				}
				if n := len(f.requests()); n != 2 {
					t.Errorf("server saw %d requests, want 2", n)
				}
				if got := rec.recorded(); len(got) != 1 || got[0] != c.wantSleep {
					t.Errorf("waits = %v, want [%v]", got, c.wantSleep)
				}
			})
		}
	}
}

// TestRetryAfterWaitsForReal checks, with the real clock, that a 429 with
// Retry-After: 1 delays the second attempt by about a second.
func TestRetryAfterWaitsForReal(t *testing.T) {
	t.Parallel()
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, reply{status: 429, header: map[string]string{"Retry-After": "1"}, fixture: h.rateLimit}, reply{fixture: h.ok})
			m, _ := h.newModel(t, f, canaryKey)
			start := time.Now()
			if _, err := m.Sample(t.Context(), sampleRequest()); err != nil {
				t.Fatalf("Sample: %v", err)
			}
			reqs := f.requests()
			if len(reqs) != 2 {
				t.Fatalf("server saw %d requests, want 2", len(reqs))
			}
			if gap := reqs[1].at.Sub(reqs[0].at); gap < 950*time.Millisecond {
				t.Errorf("second attempt came %v after the first, want >= ~1s", gap)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("Sample took %v", el)
			}
		})
	}
}

func TestRetriesAreBounded(t *testing.T) {
	t.Parallel()
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			fail := reply{status: h.serverErrorStatus, fixture: h.serverError}
			m, f, rec := newFaked(t, h, fail, fail, fail, fail)
			_, err := m.Sample(t.Context(), sampleRequest())
			if err == nil {
				t.Fatal("Sample succeeded against a failing server")
			}
			if n := len(f.requests()); n != DefaultMaxRetries+1 {
				t.Errorf("server saw %d requests, want %d", n, DefaultMaxRetries+1)
			}
			want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
			if got := rec.recorded(); !slices.Equal(got, want) {
				t.Errorf("waits = %v, want %v", got, want)
			}
			if !strings.Contains(err.Error(), "gave up after 4 attempts") {
				t.Errorf("error %q does not say retries were spent", err)
			}
			apiErr, ok := errors.AsType[*APIError](err)
			if !ok || apiErr.StatusCode != h.serverErrorStatus {
				t.Errorf("error %v does not carry the APIError with status %d", err, h.serverErrorStatus)
			}
		})
	}
}

func TestNotRetried(t *testing.T) {
	t.Parallel()
	for _, h := range harnesses {
		cases := []struct {
			name       string
			rep        reply
			wantStatus int
			wantText   string
		}{
			{"401 unauthorized", reply{status: 401, fixture: h.unauthorized}, 401, "401"},
			{"400 bad request", reply{status: 400, fixture: h.badRequest}, 400, "400"},
			{"429 asking for 10 minutes", reply{status: 429, header: map[string]string{"Retry-After": "600"}, fixture: h.rateLimit}, 429, "server asked to wait 10m0s"},
		}
		for _, c := range cases {
			t.Run(h.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				m, f, rec := newFaked(t, h, c.rep)
				_, err := m.Sample(t.Context(), sampleRequest())
				if err == nil {
					t.Fatal("Sample succeeded")
				}
				if n := len(f.requests()); n != 1 {
					t.Errorf("server saw %d requests, want 1 (no retry)", n)
				}
				if w := rec.recorded(); len(w) != 0 {
					t.Errorf("waited %v before failing", w)
				}
				if apiErr, ok := errors.AsType[*APIError](err); !ok || apiErr.StatusCode != c.wantStatus {
					t.Errorf("error %v: want an APIError with status %d", err, c.wantStatus)
				}
				if !strings.Contains(err.Error(), c.wantText) {
					t.Errorf("error %q does not mention %q", err, c.wantText)
				}
				if errors.Is(err, agent.ErrContextLength) {
					t.Errorf("error %v wrongly wraps ErrContextLength", err)
				}
				if strings.Contains(err.Error(), canaryKey) {
					t.Errorf("error text leaks the API key: %q", err)
				}
			})
		}
	}
}

func TestContextLengthError(t *testing.T) {
	t.Parallel()
	for _, h := range harnesses {
		for _, fx := range h.contextLength {
			t.Run(fx, func(t *testing.T) {
				t.Parallel()
				m, f, _ := newFaked(t, h, reply{status: 400, fixture: fx})
				_, err := m.Sample(t.Context(), sampleRequest())
				if !errors.Is(err, agent.ErrContextLength) {
					t.Fatalf("error %v does not wrap agent.ErrContextLength", err)
				}
				if _, ok := errors.AsType[*APIError](err); !ok {
					t.Errorf("error %v lost the APIError", err)
				}
				if n := len(f.requests()); n != 1 {
					t.Errorf("server saw %d requests, want 1", n)
				}
			})
		}
	}
}

func TestCancelDuringSlowServer(t *testing.T) {
	t.Parallel()
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			m, f, _ := newFaked(t, h, reply{block: true})
			ctx, cancel := context.WithCancel(t.Context())
			go func() {
				for len(f.requests()) == 0 {
					time.Sleep(5 * time.Millisecond)
				}
				cancel()
			}()
			start := time.Now()
			_, err := m.Sample(ctx, sampleRequest())
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("Sample returned %v after cancel", el)
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
		})
	}
}

func TestDeadlineTooCloseForRetryAfter(t *testing.T) {
	t.Parallel()
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			m, f, rec := newFaked(t, h, reply{status: 429, header: map[string]string{"Retry-After": "30"}, fixture: h.rateLimit})
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			_, err := m.Sample(ctx, sampleRequest())
			if err == nil || !strings.Contains(err.Error(), "exceeds the deadline") {
				t.Errorf("error %v, want a refusal to wait past the deadline", err)
			}
			if n, w := len(f.requests()), rec.recorded(); n != 1 || len(w) != 0 {
				t.Errorf("requests %d, waits %v; want 1 request and no wait", n, w)
			}
		})
	}
}

// TestCanaryKeyOnlyInAuthHeader proves the API key travels only in the
// authentication header: never in the body, never in another header, never
// in an error even when the server echoes it.
func TestCanaryKeyOnlyInAuthHeader(t *testing.T) {
	t.Parallel()
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			m, f, _ := newFaked(t, h, reply{fixture: h.ok}, reply{status: 401, fixture: h.unauthorized})
			if _, err := m.Sample(t.Context(), sampleRequest()); err != nil {
				t.Fatalf("Sample: %v", err)
			}
			_, err := m.Sample(t.Context(), sampleRequest())
			if err == nil {
				t.Fatal("second Sample succeeded against a 401")
			}
			if strings.Contains(err.Error(), canaryKey) {
				t.Errorf("error leaks the key: %q", err)
			}
			if !strings.Contains(err.Error(), redactedPlaceholder) {
				t.Errorf("error %q: the echoed key was not visibly redacted", err)
			}
			for i, r := range f.requests() {
				if strings.Contains(string(r.body), canaryKey) {
					t.Errorf("request %d: body contains the key", i)
				}
				var carriers []string
				for name, vals := range r.header {
					for _, v := range vals {
						if strings.Contains(v, canaryKey) {
							carriers = append(carriers, name)
						}
					}
				}
				want := map[string]string{"openai": "Authorization", "anthropic": "X-Api-Key"}[h.name]
				if len(carriers) != 1 || carriers[0] != want {
					t.Errorf("request %d: key found in headers %v, want only %s", i, carriers, want)
				}
				if sentKey(r.header) != canaryKey {
					t.Errorf("request %d: auth header carries %q", i, sentKey(r.header))
				}
			}
		})
	}
}
