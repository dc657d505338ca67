// Package invoice builds invoice summaries.
package invoice

import (
	"fmt"

	"example.com/billing/money"
)

// Line is one invoice position.
type Line struct {
	Item      string
	Quantity  int64
	UnitCents int64
}

// Valid reports whether the line can be billed.
func (l Line) Valid() bool { return l.Item != "" && l.Quantity > 0 && l.UnitCents >= 0 }

// Total sums quantity × unit price over the lines, in cents.
func Total(lines []Line) int64 {
	var total int64
	for _, l := range lines {
		total += l.UnitCents
	}
	return total
}

// Summary is the invoice's closing line.
func Summary(lines []Line, currency string) string {
	return fmt.Sprintf("Total: %s", money.Format(Total(lines), currency))
}
