// Package money formats amounts held in cents.
package money

import "fmt"

// Format renders cents as "units.cc CUR", e.g. 1205 → "12.05 EUR".
func Format(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%d %s", sign, cents/100, cents%100, currency)
}
