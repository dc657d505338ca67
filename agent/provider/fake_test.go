package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/org/mini-agent/agent"
)

// reply is one canned answer of the fake model API.
type reply struct {
	status int
	header map[string]string
	// fixture names a file under testdata/; "{{KEY}}" in it is replaced by
	// the key the client sent, to play a server that echoes it.
	fixture string
	// block holds the answer until the client gives up (slow server).
	block bool
	// hangup closes the connection without answering.
	hangup bool
}

// recorded is one request the fake API received.
type recorded struct {
	path   string
	header http.Header
	body   []byte
	at     time.Time
}

// fakeAPI is an httptest server speaking a model API's wire format from
// fixtures, recording every request. Running out of replies fails the test.
type fakeAPI struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	reqs    []recorded
	// gate, when set, inspects each request body first: a rejection is
	// answered as such without using up a reply, as a server that
	// validates the history it is sent does.
	gate func(body []byte) *rejection
}

// rejection is a server's refusal of a request: the status and a fixture
// whose "{{INDEX}}" is replaced by index (the message at fault).
type rejection struct {
	status  int
	fixture string
	index   int
}

// setGate installs a request validator (see fakeAPI.gate).
func (f *fakeAPI) setGate(g func(body []byte) *rejection) {
	f.mu.Lock()
	f.gate = g
	f.mu.Unlock()
}

func newFakeAPI(t *testing.T, replies ...reply) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body := new(bytes.Buffer)
	_, _ = body.ReadFrom(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{path: r.URL.Path, header: r.Header.Clone(), body: body.Bytes(), at: time.Now()})
	if f.gate != nil {
		if rej := f.gate(body.Bytes()); rej != nil {
			f.mu.Unlock()
			data, err := os.ReadFile(filepath.Join("testdata", rej.fixture))
			if err != nil {
				f.t.Errorf("fake API: %v", err)
			}
			data = bytes.ReplaceAll(data, []byte("{{INDEX}}"), []byte(strconv.Itoa(rej.index)))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rej.status)
			_, _ = w.Write(data)
			return
		}
	}
	if len(f.replies) == 0 {
		f.mu.Unlock()
		f.t.Errorf("fake API: unexpected request %d to %s", len(f.reqs), r.URL.Path)
		w.Header().Set("x-should-retry", "false")
		http.Error(w, `{"error":{"message":"no more replies"}}`, http.StatusTeapot)
		return
	}
	rep := f.replies[0]
	f.replies = f.replies[1:]
	f.mu.Unlock()

	if rep.hangup {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			f.t.Errorf("fake API: hijack: %v", err)
			return
		}
		_ = conn.Close()
		return
	}
	if rep.block {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return
	}
	data := []byte("{}")
	if rep.fixture != "" {
		var err error
		data, err = os.ReadFile(filepath.Join("testdata", rep.fixture))
		if err != nil {
			f.t.Errorf("fake API: %v", err)
		}
	}
	data = bytes.ReplaceAll(data, []byte("{{KEY}}"), []byte(sentKey(r.Header)))
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	status := rep.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// sentKey is the API key a request carried, in either provider's header.
func sentKey(h http.Header) string {
	if k := h.Get("X-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(h.Get("Authorization"), "Bearer ")
}

func (f *fakeAPI) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// lastBody decodes the body of the last request into a generic value.
func (f *fakeAPI) lastBody(t *testing.T) map[string]any {
	t.Helper()
	reqs := f.requests()
	if len(reqs) == 0 {
		t.Fatal("fake API received no request")
	}
	var m map[string]any
	if err := json.Unmarshal(reqs[len(reqs)-1].body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, reqs[len(reqs)-1].body)
	}
	return m
}

// sleepRecorder replaces the retrier's sleep: it records the waits and
// returns at once, so retry tests do not spend wall-clock time.
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// noJitter makes backoff deterministic.
func noJitter(time.Duration) time.Duration { return 0 }

// noEnv is a Getenv that sees an empty environment.
func noEnv(string) string { return "" }

// envMap is a Getenv backed by a map.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// Tool schemas of the two tools the sample request offers.
const (
	readFileSchema = `{"type":"object","properties":{"path":{"type":"string"},"start_line":{"type":"integer","minimum":1},"end_line":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`
	searchSchema   = `{"type":"object","properties":{"query":{"type":"string"},"path":{"type":"string"}},"required":["query"]}`
)

// sampleRequest is a mid-run request: goal, an assistant turn with text and
// two parallel tool calls (the second with malformed arguments), their two
// results (the second an error), and a user nudge after them.
func sampleRequest() agent.Request {
	return agent.Request{
		System: "You fix failing Go tests. Work only inside the workspace.",
		Messages: []agent.Message{
			{Role: agent.RoleUser, Text: "TestAdd fails: got 3, want 4"},
			{Role: agent.RoleAssistant, Text: "Reading the code.", ToolCalls: []agent.ToolCall{
				{ID: "call_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"calc/add.go"}`)},
				{ID: "call_2", Name: "search", Arguments: json.RawMessage(`{"query": "Add(`)},
			}},
			{Role: agent.RoleTool, ToolCallID: "call_1", ToolName: "read_file", Text: "1\tpackage calc"},
			{Role: agent.RoleTool, ToolCallID: "call_2", ToolName: "search", IsError: true,
				Text: `{"status":"error","code":"INVALID_ARGUMENT","message":"arguments are not valid JSON","retryable":true}`},
			{Role: agent.RoleUser, Text: "Keep going."},
		},
		Tools: []agent.ToolSpec{
			{Name: "read_file", Description: "Read a file of the workspace.", InputSchema: json.RawMessage(readFileSchema)},
			{Name: "search", Description: "Search the workspace with an RE2 regex.", InputSchema: json.RawMessage(searchSchema)},
		},
	}
}

// jsonEqual compares two JSON texts semantically.
func jsonEqual(t *testing.T, got any, want string) bool {
	t.Helper()
	var g, w any
	gb, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(gb, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v", err)
	}
	a, _ := json.Marshal(g)
	b, _ := json.Marshal(w)
	return bytes.Equal(a, b)
}
