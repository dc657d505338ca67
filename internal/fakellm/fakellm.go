// Package fakellm is an httptest server that speaks the OpenAI Chat
// Completions wire format and replays a scripted trajectory (the script
// provider's JSONL), so the real OpenAI adapter path is exercised end to end
// by tests and the eval. It records every request body for assertions.
//
// Beyond the script provider's lines, a line may say how a real server
// ends a turn: "refusal" (the text of a Chat Completions refusal),
// "finish_reason" (e.g. "content_filter" or "length", overriding the
// usual stop/tool_calls) and "no_usage" (no usage object, as Ollama and
// vLLM often answer).
//
// Test fake: used by tests and the eval's replay, never by product code.
package fakellm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

type line struct {
	Message   string `json:"message"`
	ToolCalls []struct {
		ID           string          `json:"id"`
		Name         string          `json:"name"`
		Arguments    json.RawMessage `json:"arguments"`
		ArgumentsRaw *string         `json:"arguments_raw"`
	} `json:"tool_calls"`
	Error        string  `json:"error"`
	Refusal      *string `json:"refusal"`
	FinishReason string  `json:"finish_reason"`
	NoUsage      bool    `json:"no_usage"`
}

// Server replays one trajectory, one response per request.
type Server struct {
	*httptest.Server
	mu     sync.Mutex
	turns  []line
	next   int
	bodies [][]byte
	auth   []string
}

// New starts a server replaying the JSONL trajectory. Close it when done.
func New(trajectory []byte) (*Server, error) {
	s := &Server{}
	sc := bufio.NewScanner(bytes.NewReader(trajectory))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		var l line
		if err := json.Unmarshal([]byte(t), &l); err != nil {
			return nil, fmt.Errorf("fakellm: line %d: %w", n, err)
		}
		s.turns = append(s.turns, l)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s, nil
}

// BaseURL is the value for --base-url.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Bodies returns the request bodies received so far.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// AuthHeaders returns the Authorization headers received.
func (s *Server) AuthHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	i := s.next
	s.next++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if i >= len(s.turns) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"trajectory exhausted","type":"invalid_request_error","code":null}}`)
		return
	}
	t := s.turns[i]
	if t.Error != "" {
		w.WriteHeader(http.StatusInternalServerError)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": t.Error, "type": "server_error"}})
		return
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	finish := "stop"
	if t.Message != "" {
		msg["content"] = t.Message
	}
	if len(t.ToolCalls) > 0 {
		finish = "tool_calls"
		var calls []map[string]any
		for k, c := range t.ToolCalls {
			args := string(c.Arguments)
			if c.ArgumentsRaw != nil {
				args = *c.ArgumentsRaw
			}
			if args == "" {
				args = "{}"
			}
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", i+1, k+1)
			}
			calls = append(calls, map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": args}})
		}
		msg["tool_calls"] = calls
	}
	if t.Refusal != nil {
		msg["refusal"] = *t.Refusal
	}
	if t.FinishReason != "" {
		finish = t.FinishReason
	}
	prompt := len(body) / 4
	resp := map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", i+1), "object": "chat.completion", "created": 1700000000, "model": "fake-gpt",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20,
			"prompt_tokens_details": map[string]any{"cached_tokens": 0}},
	}
	if t.NoUsage {
		delete(resp, "usage")
	}
	json.NewEncoder(w).Encode(resp)
}
