package provider

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
)

func TestSelectNamesAndPrices(t *testing.T) {
	t.Parallel()
	env := func(k string) string {
		return map[string]string{"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "sk-y"}[k]
	}
	script := []byte(`{"message":"done"}` + "\n")
	for _, c := range []struct {
		name     string
		choice   Choice
		wantName string
		priced   bool
	}{
		{"openai default", Choice{Config: Config{Provider: "openai", Getenv: env}}, DefaultOpenAIModel, true},
		{"anthropic default", Choice{Config: Config{Provider: "Anthropic", Getenv: env}}, DefaultAnthropicModel, true},
		{"named", Choice{Config: Config{Provider: "openai", Model: "llama3.1:8b", BaseURL: "http://127.0.0.1:1/v1", Getenv: env}}, "llama3.1:8b", false},
		{"named and priced", Choice{Config: Config{Provider: "openai", Model: "llama3.1:8b", BaseURL: "http://127.0.0.1:1/v1", Getenv: env},
			Price: &[2]float64{1, 2}, MaxCostUSD: 1}, "llama3.1:8b", true},
		{"script", Choice{Config: Config{Provider: "script", Script: script}}, "script", false},
	} {
		s, err := Select(c.choice)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.Model == nil || s.Name != c.wantName || s.Provider != c.choice.Provider {
			t.Errorf("%s: got %+v, want name %q", c.name, s, c.wantName)
		}
		if _, known := s.Cost(s.Name, agent.Usage{InputTokens: 1000, OutputTokens: 1000}); known != c.priced {
			t.Errorf("%s: cost known %v, want %v", c.name, known, c.priced)
		}
	}
}

// A given price wins over the table and the overrides for the run's model.
func TestSelectPriceWins(t *testing.T) {
	t.Parallel()
	s, err := Choice{Config: Config{Provider: "script"}, Price: &[2]float64{10, 20},
		Prices: map[string][2]float64{"script": {1, 1}}}.Use(scriptModel(t))
	if err != nil {
		t.Fatal(err)
	}
	usd, known := s.Cost("script", agent.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000})
	if !known || math.Abs(usd-30) > 1e-9 {
		t.Fatalf("cost %v known %v, want 30 from the given price", usd, known)
	}
}

// A dollar budget on a model with no price is refused before any request,
// with a typed error the caller words with its own names; bad amounts are
// configuration errors.
func TestSelectRefusesAnUnenforceableBudget(t *testing.T) {
	t.Parallel()
	_, err := Choice{Config: Config{Provider: "script"}, MaxCostUSD: 0.5}.Use(scriptModel(t))
	var be *BudgetError
	if !errors.As(err, &be) || be.Model != "script" || be.Budget != 0.5 {
		t.Fatalf("err %v, want a BudgetError for script", err)
	}
	if msg := be.Describe("--max-cost-usd", "--price-in", "--price-out"); !strings.HasPrefix(msg, `--max-cost-usd 0.5: model "script" has no known price`) ||
		!strings.Contains(msg, "--price-in and --price-out") {
		t.Errorf("described: %s", msg)
	}
	for _, c := range []Choice{
		{Config: Config{Provider: "script"}, MaxCostUSD: -1},
		{Config: Config{Provider: "script"}, MaxCostUSD: math.Inf(1)},
		{Config: Config{Provider: "script"}, Price: &[2]float64{-1, 1}},
		{Config: Config{Provider: "script"}, Prices: map[string][2]float64{"x": {1, math.Inf(1)}}},
	} {
		if _, err := c.Use(scriptModel(t)); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err %v, want ErrConfig", c, err)
		}
	}
	if _, err := Select(Choice{Config: Config{Provider: "nonsense"}}); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown provider: %v", err)
	}
}

func scriptModel(t *testing.T) agent.Model {
	t.Helper()
	m, err := New(Config{Provider: "script", Script: []byte(`{"message":"done"}` + "\n")})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
