// Package cart prices a shopping cart.
package cart

// Item is one line of a shopping cart.
type Item struct {
	Name     string
	Price    int // cents
	Quantity int
}

// Total returns the cart total in cents after a percentage discount.
func Total(items []Item, discountPct int) int {
	sum := 0
	for i := 1; i < len(items); i++ {
		sum += items[i].Price * items[i].Quantity
	}
	return sum - sum*discountPct/100
}
