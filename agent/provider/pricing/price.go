package pricing

import (
	"strings"

	"github.com/org/mini-agent/agent"
)

// price is one model's list price in USD per million tokens.
type price struct {
	in, out float64
	// cacheRead and cacheWrite price cached prompt tokens (OpenAI bills no
	// write premium, so there cacheWrite equals in).
	cacheRead, cacheWrite float64
}

// prices holds list prices (USD per million tokens, standard tier, as
// published by OpenAI, Anthropic and DeepSeek in 2025). Keys are model name
// prefixes; the longest matching prefix wins, so dated snapshots
// ("gpt-4.1-2025-04-14", "claude-sonnet-4-5-20250929") find their family.
// Prices change: callers override them with Cost's overrides argument.
var prices = map[string]price{
	"gpt-4.1":           {in: 2.00, out: 8.00, cacheRead: 0.50, cacheWrite: 2.00},
	"gpt-4.1-mini":      {in: 0.40, out: 1.60, cacheRead: 0.10, cacheWrite: 0.40},
	"gpt-4.1-nano":      {in: 0.10, out: 0.40, cacheRead: 0.025, cacheWrite: 0.10},
	"gpt-4o":            {in: 2.50, out: 10.00, cacheRead: 1.25, cacheWrite: 2.50},
	"gpt-4o-mini":       {in: 0.15, out: 0.60, cacheRead: 0.075, cacheWrite: 0.15},
	"gpt-5":             {in: 1.25, out: 10.00, cacheRead: 0.125, cacheWrite: 1.25},
	"gpt-5-mini":        {in: 0.25, out: 2.00, cacheRead: 0.025, cacheWrite: 0.25},
	"gpt-5-nano":        {in: 0.05, out: 0.40, cacheRead: 0.005, cacheWrite: 0.05},
	"o3":                {in: 2.00, out: 8.00, cacheRead: 0.50, cacheWrite: 2.00},
	"o3-mini":           {in: 1.10, out: 4.40, cacheRead: 0.55, cacheWrite: 1.10},
	"o4-mini":           {in: 1.10, out: 4.40, cacheRead: 0.275, cacheWrite: 1.10},
	"claude-opus-4":     {in: 15.00, out: 75.00, cacheRead: 1.50, cacheWrite: 18.75},
	"claude-opus-4-5":   {in: 5.00, out: 25.00, cacheRead: 0.50, cacheWrite: 6.25},
	"claude-sonnet-4":   {in: 3.00, out: 15.00, cacheRead: 0.30, cacheWrite: 3.75},
	"claude-haiku-4":    {in: 1.00, out: 5.00, cacheRead: 0.10, cacheWrite: 1.25},
	"deepseek-chat":     {in: 0.28, out: 0.42, cacheRead: 0.028, cacheWrite: 0.28},
	"deepseek-reasoner": {in: 0.28, out: 0.42, cacheRead: 0.028, cacheWrite: 0.28},
}

// Price returns a model's list price in USD per million input and output
// tokens. Matching is by longest prefix on a name boundary, ignoring case,
// a router prefix ("openai/gpt-4.1", "anthropic.claude-...") and, for
// Claude, dots in the version ("claude-sonnet-4.5").
func Price(model string) (inputPerMTok, outputPerMTok float64, ok bool) {
	p, ok := lookupPrice(prices, model)
	return p.in, p.out, ok
}

// Cost prices u for model in USD. overrides maps model prefixes (matched
// like Price) to {input, output} USD per million tokens and wins over the
// built-in table. Cached prompt tokens keep the built-in cache discount or
// premium relative to the input price when the model is in the table, and
// are billed at the input price otherwise. known is false, and usd 0, when
// neither the overrides nor the table know the model.
func Cost(model string, u agent.Usage, overrides map[string][2]float64) (usd float64, known bool) {
	p, ok := lookupPrice(prices, model)
	if o, found := lookupOverride(overrides, model); found {
		ratioRead, ratioWrite := 1.0, 1.0
		if ok && p.in > 0 {
			ratioRead, ratioWrite = p.cacheRead/p.in, p.cacheWrite/p.in
		}
		p = price{in: o[0], out: o[1], cacheRead: o[0] * ratioRead, cacheWrite: o[0] * ratioWrite}
		ok = true
	}
	if !ok {
		return 0, false
	}
	uncached := max(0, u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens)
	total := float64(uncached)*p.in +
		float64(u.CacheReadTokens)*p.cacheRead +
		float64(u.CacheWriteTokens)*p.cacheWrite +
		float64(u.OutputTokens)*p.out
	return total / 1e6, true
}

// Priced reports whether Cost can price model: the overrides or the
// built-in table know it.
func Priced(model string, overrides map[string][2]float64) bool {
	if _, ok := lookupOverride(overrides, model); ok {
		return true
	}
	_, ok := lookupPrice(prices, model)
	return ok
}

func lookupOverride(overrides map[string][2]float64, model string) ([2]float64, bool) {
	if len(overrides) == 0 {
		return [2]float64{}, false
	}
	table := make(map[string][2]float64, len(overrides))
	for k, v := range overrides {
		table[normalizeModel(k)] = v
	}
	return lookupPrice(table, model)
}

// lookupPrice finds the longest key of table that is a prefix of model and
// ends on a name boundary (end, '-', ':', '@').
func lookupPrice[V any](table map[string]V, model string) (V, bool) {
	name := normalizeModel(model)
	var best V
	bestLen, found := -1, false
	for k, v := range table {
		if !strings.HasPrefix(name, k) || len(k) <= bestLen {
			continue
		}
		if rest := name[len(k):]; rest != "" && !strings.ContainsRune("-:@", rune(rest[0])) {
			continue
		}
		best, bestLen, found = v, len(k), true
	}
	return best, found
}

// normalizeModel lowercases a model name and strips router and cloud
// prefixes: "openai/gpt-4.1" → "gpt-4.1", "us.anthropic.claude-opus-4-1-v1:0"
// → "claude-opus-4-1-v1:0", "anthropic/claude-sonnet-4.5" → "claude-sonnet-4-5".
func normalizeModel(model string) string {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.Index(name, "claude-"); i > 0 {
		name = name[i:]
	}
	if strings.HasPrefix(name, "claude-") {
		name = strings.ReplaceAll(name, ".", "-")
	}
	return name
}
