package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
)

// historyOf builds a request whose history has n tool round trips, each
// with a 2 KB tool output, like a run n steps in.
func historyOf(n int) agent.Request {
	req := sampleRequest()
	req.Messages = req.Messages[:1]
	out := strings.Repeat("x := compute(a, b) // a line of Go source\n", 48)
	for i := range n {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: id, Name: "read_file", Arguments: json.RawMessage(`{"path":"calc/add.go"}`)}}},
			agent.Message{Role: agent.RoleTool, ToolCallID: id, ToolName: "read_file", Text: out})
	}
	return req
}

// BenchmarkRequestEncoding measures the adapters' own cost per call: mapping
// the history onto the SDK's params and encoding the body, as the history
// grows. body_bytes is the request size sent.
func BenchmarkRequestEncoding(b *testing.B) {
	oa, err := NewOpenAI(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Getenv: noEnv})
	if err != nil {
		b.Fatal(err)
	}
	an, err := NewAnthropic(Config{APIKey: "k", Getenv: noEnv})
	if err != nil {
		b.Fatal(err)
	}
	for _, steps := range []int{10, 100, 500} {
		req := historyOf(steps)
		b.Run(fmt.Sprintf("openai/steps=%d", steps), func(b *testing.B) {
			var size int
			for b.Loop() {
				p, err := oa.params(req)
				if err != nil {
					b.Fatal(err)
				}
				body, err := json.Marshal(p)
				if err != nil {
					b.Fatal(err)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "body_bytes")
		})
		b.Run(fmt.Sprintf("anthropic/steps=%d", steps), func(b *testing.B) {
			var size int
			for b.Loop() {
				p, err := an.params(req)
				if err != nil {
					b.Fatal(err)
				}
				body, err := json.Marshal(p)
				if err != nil {
					b.Fatal(err)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "body_bytes")
		})
	}
}

// BenchmarkScriptSample measures the script provider per turn, including
// its usage estimate over a growing history.
func BenchmarkScriptSample(b *testing.B) {
	one, err := ParseScript(strings.NewReader(`{"tool_calls":[{"name":"read_file","arguments":{"path":"calc/add.go"}}]}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, steps := range []int{10, 500} {
		req := historyOf(steps)
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			s := &Script{turns: make([]scriptTurn, b.N)}
			for i := range s.turns {
				s.turns[i] = one.turns[0]
			}
			b.ResetTimer()
			for range b.N {
				if _, err := s.Sample(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
