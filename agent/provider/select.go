package provider

import (
	"fmt"
	"math"
	"strings"

	"github.com/org/mini-agent/agent"
)

// Choice is the model a run asks for: the adapter's configuration, the
// prices it is charged at, and the dollar budget those prices must be able
// to enforce. The CLI, the action and the eval all build their model from
// one, through Select.
type Choice struct {
	Config
	// Price is the model's {input, output} price in USD per million tokens
	// given by the user; it wins over Prices and the built-in table. nil:
	// none given.
	Price *[2]float64
	// Prices maps model names to {input, output} USD per million tokens.
	Prices map[string][2]float64
	// MaxCostUSD is the run's dollar budget; 0 means none.
	MaxCostUSD float64
}

// Selected is a model ready for a run: the adapter, the provider and model
// names the run is reported and priced by, and its prices.
type Selected struct {
	Model    agent.Model
	Provider string
	// Name is the model name: the configured one, or the provider's default.
	Name   string
	prices map[string][2]float64
}

// Cost prices u for model with the choice's prices (see Cost).
func (s Selected) Cost(model string, u agent.Usage) (float64, bool) {
	return Cost(model, u, s.prices)
}

// BudgetError refuses a dollar budget that could not be enforced: the
// model has no known price and none was given, so the run would go
// unbounded with only "cost unknown" at the end. The caller names its own
// settings (flags or inputs) with Describe.
type BudgetError struct {
	Budget float64
	Model  string
}

func (e *BudgetError) Error() string {
	return e.Describe("max-cost-usd", "price-in", "price-out")
}

// Describe is the refusal with the caller's names for the budget and the
// two price settings.
func (e *BudgetError) Describe(budget, priceIn, priceOut string) string {
	return fmt.Sprintf("%s %g: model %q has no known price, so the dollar budget could not be enforced; "+
		"give its price with %s and %s (USD per million input and output tokens), or drop the dollar budget",
		budget, e.Budget, e.Model, priceIn, priceOut)
}

// Select builds the adapter c configures and checks its prices against the
// budget. Configuration mistakes wrap ErrConfig; an unenforceable budget is
// a *BudgetError.
func Select(c Choice) (Selected, error) {
	m, err := New(c.Config)
	if err != nil {
		return Selected{}, err
	}
	return c.Use(m)
}

// Use is Select with an adapter built elsewhere (the eval's recording
// model, tests): the same naming, pricing and budget check.
func (c Choice) Use(m agent.Model) (Selected, error) {
	prov := strings.ToLower(strings.TrimSpace(c.Provider))
	s := Selected{Model: m, Provider: c.Provider, Name: c.Model}
	if s.Name == "" {
		switch prov {
		case ProviderOpenAI:
			s.Name = DefaultOpenAIModel
		case ProviderAnthropic:
			s.Name = DefaultAnthropicModel
		default:
			s.Name = c.Provider
		}
	}
	s.prices = make(map[string][2]float64, len(c.Prices)+1)
	for k, v := range c.Prices {
		s.prices[k] = v
	}
	if c.Price != nil {
		s.prices[s.Name] = *c.Price
	}
	for model, p := range s.prices {
		if !(p[0] >= 0 && p[1] >= 0) || math.IsInf(p[0], 0) || math.IsInf(p[1], 0) {
			return Selected{}, fmt.Errorf("%w: the price of %q must be two non-negative amounts (USD per million tokens), got %v", ErrConfig, model, p)
		}
	}
	if c.MaxCostUSD == 0 {
		return s, nil
	}
	if !(c.MaxCostUSD > 0) || math.IsInf(c.MaxCostUSD, 0) {
		return Selected{}, fmt.Errorf("%w: the dollar budget %v is not a positive amount", ErrConfig, c.MaxCostUSD)
	}
	if !Priced(s.Name, s.prices) {
		return Selected{}, &BudgetError{Budget: c.MaxCostUSD, Model: s.Name}
	}
	return s, nil
}
