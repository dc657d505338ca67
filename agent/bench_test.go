package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkLoopStep measures the harness's own overhead per model turn: a
// scripted model, one no-op read-only tool call per turn, events recorded.
func BenchmarkLoopStep(b *testing.B) {
	for _, steps := range []int{10, 100} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			outs := make([]Output, 0, steps+1)
			for i := 0; i < steps; i++ {
				outs = append(outs, calls(call("noop", fmt.Sprintf(`{"q":"%d"}`, i))))
			}
			outs = append(outs, final("done"))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				m := &replay{outs: outs}
				a, _ := newAgent(m, WorkspaceWrite{}, &funcTool{name: "noop"})
				a.Limits.MaxSteps = steps + 1
				res, _ := a.Run(context.Background(), "goal")
				if res.StopReason != StopFinalMessage {
					b.Fatal(res.Detail)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(steps+1)), "ns/step")
		})
	}
}

// BenchmarkRequestGrowth reports the size of the request the model gets as
// the history grows with 2 KB tool outputs, and shows elision capping it.
func BenchmarkRequestGrowth(b *testing.B) {
	out := strings.Repeat("line of tool output\n", 100) // ~2 KB
	for _, steps := range []int{10, 50, 200} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			var lastTokens, maxTokens int
			for i := 0; i < b.N; i++ {
				outs := make([]Output, 0, steps+1)
				for j := 0; j < steps; j++ {
					outs = append(outs, calls(call("read", fmt.Sprintf(`{"q":"%d"}`, j))))
				}
				outs = append(outs, final("done"))
				m := &replay{outs: outs, measure: true}
				tool := &funcTool{name: "read", fn: func(context.Context, json.RawMessage) (Result, error) { return Result{Text: out}, nil }}
				a, _ := newAgent(m, WorkspaceWrite{}, tool)
				a.Limits.MaxSteps = steps + 1
				a.Limits.ContextTokens = 64_000
				a.Run(context.Background(), "goal")
				lastTokens, maxTokens = m.lastTokens, m.maxTokens
			}
			b.ReportMetric(float64(lastTokens), "final-req-tokens")
			b.ReportMetric(float64(maxTokens), "max-req-tokens")
		})
	}
}

// replay is a lock-free fakeModel for benchmarks.
type replay struct {
	outs                  []Output
	i                     int
	measure               bool
	lastTokens, maxTokens int
}

func (r *replay) Sample(_ context.Context, req Request) (Output, error) {
	if r.measure {
		r.lastTokens = approxTokens(req)
		r.maxTokens = max(r.maxTokens, r.lastTokens)
	}
	o := r.outs[r.i]
	r.i++
	return o, nil
}
