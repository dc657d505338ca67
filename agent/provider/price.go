package provider

import (
	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider/pricing"
)

// Price returns a model's list price in USD per million input and output
// tokens (see pricing.Price).
func Price(model string) (inputPerMTok, outputPerMTok float64, ok bool) {
	return pricing.Price(model)
}

// Cost prices u for model in USD, overrides winning over the built-in
// table (see pricing.Cost).
func Cost(model string, u agent.Usage, overrides map[string][2]float64) (usd float64, known bool) {
	return pricing.Cost(model, u, overrides)
}

// Priced reports whether Cost can price model (see pricing.Priced).
func Priced(model string, overrides map[string][2]float64) bool {
	return pricing.Priced(model, overrides)
}
