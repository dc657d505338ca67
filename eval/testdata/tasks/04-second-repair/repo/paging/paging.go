// Package paging splits result lists into pages.
package paging

// Pages returns how many pages of perPage items are needed to show total
// items. perPage must be positive.
func Pages(total, perPage int) int {
	return total / perPage
}

// Bounds returns the half-open index range [from, to) of page (1-based).
func Bounds(page, perPage, total int) (from, to int) {
	from = (page - 1) * perPage
	to = from + perPage
	if to > total {
		to = total
	}
	return from, to
}
