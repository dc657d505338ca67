// Package pricing is what a run knows about its model once it is chosen,
// without the provider SDKs: Selected (the adapter, the names the run is
// reported and priced by, and its prices), the list-price table (Price,
// Cost, Priced), the budget refusal (BudgetError) and the configuration
// error (ErrConfig). agent/provider builds a Selected and re-exports these
// names; packages that only carry a selection or map its errors (the job
// runner, exit codes) import this one, so their test binaries do not link
// the SDKs.
package pricing

import (
	"errors"
	"fmt"
	"maps"

	"github.com/org/mini-agent/agent"
)

// ErrConfig is wrapped by every provider configuration error (unknown
// provider, missing key or model, unreadable script, bad price or budget),
// so a CLI can map them to its usage/configuration exit code.
var ErrConfig = errors.New("provider configuration")

// Selected is a model ready for a run: the adapter, the provider and model
// names the run is reported and priced by, and its prices.
type Selected struct {
	Model    agent.Model
	Provider string
	// Name is the model name: the configured one, or the provider's default.
	Name   string
	prices map[string][2]float64
}

// New is a Selected with the given prices (model name prefixes to {input,
// output} USD per million tokens, copied; they win over the built-in table).
// It checks nothing: provider.Choice.Use is the checked way to build one.
func New(m agent.Model, provider, name string, prices map[string][2]float64) Selected {
	return Selected{Model: m, Provider: provider, Name: name, prices: maps.Clone(prices)}
}

// Cost prices u for model with the selection's prices (see Cost).
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
