package ghapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"
)

const (
	// baseURLPath puts the fake API under a path, as on GHES, so that code
	// building absolute paths by mistake is caught.
	baseURLPath = "/api/v3"
	testToken   = "ghs_SECRETtoken0123456789"
)

// fixture is one test's fake GitHub: a mux under baseURLPath behind a
// registry that fails the test when a registered call never happened.
type fixture struct {
	t      *testing.T
	client *Client
	server *httptest.Server
	clock  *fakeClock
	mu     sync.Mutex
	calls  map[string]int
	mux    *http.ServeMux
}

// setup starts the fake API and a Client for it with no write spacing and a
// fake clock. opts adjust the Options before New.
func setup(t *testing.T, opts ...func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, calls: map[string]int{}, mux: http.NewServeMux(), clock: newFakeClock()}
	f.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.Error(w, `{"message":"unexpected"}`, http.StatusTeapot)
	})
	api := http.NewServeMux()
	api.Handle(baseURLPath+"/", http.StripPrefix(baseURLPath, f.mux))
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request outside the base path: %s %s", r.Method, r.URL)
		http.Error(w, "outside base path", http.StatusBadRequest)
	})
	f.server = httptest.NewServer(api)
	t.Cleanup(f.server.Close)

	o := Options{
		Token:         testToken,
		BaseURL:       f.server.URL + baseURLPath + "/",
		WriteInterval: -1,
		Clock:         f.clock,
	}
	for _, fn := range opts {
		fn(&o)
	}
	c, err := New(t.Context(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.client = c
	t.Cleanup(f.verify)
	return f
}

// handle registers a handler for pattern (a path under the base path, or a
// Go 1.22 "METHOD /path" pattern) that must be called at least once.
func (f *fixture) handle(pattern string, h http.HandlerFunc) {
	f.mu.Lock()
	f.calls[pattern] = 0
	f.mu.Unlock()
	f.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.calls[pattern]++
		f.mu.Unlock()
		if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
			f.t.Errorf("%s %s: Authorization = %q, want the bearer token", r.Method, r.URL.Path, got)
		}
		h(w, r)
	})
}

// count reports how many times pattern was served.
func (f *fixture) count(pattern string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[pattern]
}

func (f *fixture) verify() {
	f.mu.Lock()
	defer f.mu.Unlock()
	var missing []string
	for p, n := range f.calls {
		if n == 0 {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		f.t.Errorf("registered call %q was never made", p)
	}
}

func testMethod(t *testing.T, r *http.Request, want string) {
	t.Helper()
	if r.Method != want {
		t.Errorf("request method = %s, want %s", r.Method, want)
	}
}

// testFormValues compares the whole query string.
func testFormValues(t *testing.T, r *http.Request, want map[string]string) {
	t.Helper()
	w := url.Values{}
	for k, v := range want {
		w.Set(k, v)
	}
	if got := r.URL.Query(); !reflect.DeepEqual(got, w) {
		t.Errorf("query = %v, want %v", got, w)
	}
}

// testJSONBody decodes the request body and compares it with wantJSON.
func testJSONBody(t *testing.T, r *http.Request, wantJSON string) {
	t.Helper()
	// Handlers run outside the test goroutine: report with Errorf, never Fatal.
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("read body: %v", err)
		return
	}
	var got, want any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Errorf("request body %q is not JSON: %v", b, err)
		return
	}
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Errorf("bad wantJSON %q: %v", wantJSON, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request body = %s\nwant %s", b, wantJSON)
	}
}

// equal fails the test with a readable diff of two values.
func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s =\n%#v\nwant\n%#v", what, got, want)
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// fakeClock advances instantly on Sleep and records each wait.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

// advance moves the clock without a recorded sleep (time spent elsewhere).
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) recorded() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}
