// Package pricing computes order prices in cents.
package pricing

// DiscountThreshold is the order total (in cents) from which the volume
// discount applies: 100.00 and above.
const DiscountThreshold = 10000

// Subtotal sums the line prices.
func Subtotal(lines []int) int {
	total := 0
	for _, l := range lines {
		total += l
	}
	return total
}

// Discount returns the volume discount for a total: 10% from
// DiscountThreshold upwards, nothing below.
func Discount(total int) int {
	if total > DiscountThreshold {
		return total / 10
	}
	return 0
}
