package actiontest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// fakeModel is an OpenAI-compatible Chat Completions endpoint that answers
// with the turns of a trajectory file (the script provider's format: one
// {"tool_calls":[...]} or {"message":...} per line) and records every
// request body, so a test sees what the action sent the model.
type fakeModel struct {
	URL string // base URL, ending in /v1/

	key   string
	turns []scriptTurn

	mu       sync.Mutex
	requests [][]byte
}

// scriptTurn is one line of a trajectory file.
type scriptTurn struct {
	ToolCalls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool_calls"`
	Message string `json:"message"`
}

// newFakeModel serves trajectory (JSON lines) to callers with the bearer key.
func newFakeModel(t *testing.T, key string, trajectory []byte) *fakeModel {
	t.Helper()
	m := &fakeModel{key: key}
	sc := bufio.NewScanner(bytes.NewReader(trajectory))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var turn scriptTurn
		if err := json.Unmarshal(sc.Bytes(), &turn); err != nil {
			t.Fatalf("trajectory line %q: %v", sc.Text(), err)
		}
		m.turns = append(m.turns, turn)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL + "/v1/"
	return m
}

// Requests returns the request bodies received so far.
func (m *fakeModel) Requests() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]byte(nil), m.requests...)
}

func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+m.key {
		http.Error(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`, http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, body)
	n := len(m.requests)
	m.mu.Unlock()
	if n > len(m.turns) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"the trajectory has %d turns; this is request %d","type":"invalid_request_error"}}`, len(m.turns), n)
		return
	}
	turn := m.turns[n-1]
	msg := map[string]any{"role": "assistant", "content": turn.Message}
	finish := "stop"
	if len(turn.ToolCalls) > 0 {
		var calls []map[string]any
		for i, c := range turn.ToolCalls {
			calls = append(calls, map[string]any{
				"id": fmt.Sprintf("call_%d_%d", n, i+1), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)},
			})
		}
		msg["content"], msg["tool_calls"], finish = nil, calls, "tool_calls"
	}
	resp := map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1767225600, "model": "gpt-4.1-mini",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}
