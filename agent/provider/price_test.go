package provider

import (
	"math"
	"testing"

	"github.com/org/mini-agent/agent"
)

func TestPrice(t *testing.T) {
	t.Parallel()
	cases := []struct {
		model   string
		in, out float64
		ok      bool
	}{
		{"gpt-4.1", 2, 8, true},
		{"gpt-4.1-2025-04-14", 2, 8, true},
		{"gpt-4.1-mini", 0.4, 1.6, true},
		{"gpt-4.1-mini-2025-04-14", 0.4, 1.6, true},
		{"gpt-4o", 2.5, 10, true},
		{"gpt-4o-mini", 0.15, 0.6, true},
		{"GPT-4o-mini-2024-07-18", 0.15, 0.6, true},
		{"o4-mini", 1.1, 4.4, true},
		{"openai/gpt-4.1", 2, 8, true},
		{"claude-sonnet-4-5-20250929", 3, 15, true},
		{"claude-sonnet-4-20250514", 3, 15, true},
		{"anthropic/claude-sonnet-4.5", 3, 15, true},
		{"claude-opus-4-1-20250805", 15, 75, true},
		{"claude-opus-4-5", 5, 25, true},
		{"us.anthropic.claude-haiku-4-5-20251001-v1:0", 1, 5, true},
		{"claude-haiku-4-5@20251001", 1, 5, true},
		{"gpt-4.10", 0, 0, false}, // a prefix must end on a name boundary
		{"o3-2025-04-16", 2, 8, true},
		{"o3-mini", 1.1, 4.4, true}, // its own entry, not o3's
		{"llama3.1:8b", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, c := range cases {
		in, out, ok := Price(c.model)
		if in != c.in || out != c.out || ok != c.ok {
			t.Errorf("Price(%q) = %v, %v, %v; want %v, %v, %v", c.model, in, out, ok, c.in, c.out, c.ok)
		}
	}
}

func TestCost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		model     string
		u         agent.Usage
		overrides map[string][2]float64
		want      float64
		known     bool
	}{
		{"plain", "gpt-4.1", agent.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, nil, 10, true},
		// 600k uncached at 2 + 400k cached at 0.5 + 100k out at 8.
		{"openai cache read", "gpt-4.1", agent.Usage{InputTokens: 1_000_000, CacheReadTokens: 400_000, OutputTokens: 100_000}, nil, 1.2 + 0.2 + 0.8, true},
		// 100k at 3 + 500k reads at 0.3 + 400k writes at 3.75 + 10k out at 15.
		{"anthropic cache", "claude-sonnet-4-5", agent.Usage{InputTokens: 1_000_000, CacheReadTokens: 500_000, CacheWriteTokens: 400_000, OutputTokens: 10_000}, nil, 0.3 + 0.15 + 1.5 + 0.15, true},
		{"unknown", "llama3", agent.Usage{InputTokens: 1000}, nil, 0, false},
		{"override unknown model", "llama3:70b", agent.Usage{InputTokens: 1_000_000, CacheReadTokens: 500_000, OutputTokens: 1_000_000}, map[string][2]float64{"llama3": {1, 2}}, 1 + 2, true},
		// The override keeps claude's 10% cache-read ratio: 0.5M at 6 + 0.5M at 0.6.
		{"override known model", "claude-sonnet-4-5", agent.Usage{InputTokens: 1_000_000, CacheReadTokens: 500_000}, map[string][2]float64{"Claude-Sonnet-4": {6, 30}}, 3 + 0.3, true},
		{"cache counts above input are clamped", "gpt-4o", agent.Usage{InputTokens: 10, CacheReadTokens: 20}, nil, 20 * 1.25 / 1e6, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, known := Cost(c.model, c.u, c.overrides)
			if known != c.known || math.Abs(got-c.want) > 1e-9 {
				t.Errorf("Cost = %v, %v; want %v, %v", got, known, c.want, c.known)
			}
		})
	}
}

func TestPriced(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		model     string
		overrides map[string][2]float64
		want      bool
	}{
		{"gpt-4.1", nil, true},
		{"openai/gpt-4.1-2025-04-14", nil, true},
		{"llama3.1:8b", nil, false},
		{"qwen2.5-coder", map[string][2]float64{"qwen2.5-coder": {0, 0}}, true},
		{"Qwen2.5-Coder:7b", map[string][2]float64{"qwen2.5-coder": {0.1, 0.2}}, true},
		{"llama3", map[string][2]float64{"qwen2.5-coder": {0.1, 0.2}}, false},
		{"script", nil, false},
	} {
		if got := Priced(c.model, c.overrides); got != c.want {
			t.Errorf("Priced(%q, %v) = %v, want %v", c.model, c.overrides, got, c.want)
		}
		_, known := Cost(c.model, agent.Usage{InputTokens: 1}, c.overrides)
		if known != c.want {
			t.Errorf("Cost(%q) known = %v, but Priced says %v", c.model, known, c.want)
		}
	}
}
