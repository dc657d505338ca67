package provider

import (
	"fmt"
	"math"
	"strings"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider/pricing"
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
// names the run is reported and priced by, and its prices (pricing.Selected).
type Selected = pricing.Selected

// BudgetError refuses a dollar budget that could not be enforced
// (pricing.BudgetError).
type BudgetError = pricing.BudgetError

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
	name := c.Model
	if name == "" {
		switch prov {
		case ProviderOpenAI:
			name = DefaultOpenAIModel
		case ProviderAnthropic:
			name = DefaultAnthropicModel
		default:
			name = c.Provider
		}
	}
	prices := make(map[string][2]float64, len(c.Prices)+1)
	for k, v := range c.Prices {
		prices[k] = v
	}
	if c.Price != nil {
		prices[name] = *c.Price
	}
	s := pricing.New(m, c.Provider, name, prices)
	for model, p := range prices {
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
	if !Priced(s.Name, prices) {
		return Selected{}, &BudgetError{Budget: c.MaxCostUSD, Model: s.Name}
	}
	return s, nil
}
