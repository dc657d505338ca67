// Package ledger keeps running balances.
package ledger

// Entry is one booking in cents; negative amounts are debits.
type Entry struct {
	Account string
	Amount  int64
}

// Balances sums the entries per account.
func Balances(entries []Entry) map[string]int64 {
	out := map[string]int64{}
	for _, e := range entries {
		if e.Amount > 0 {
			out[e.Account] += e.Amount
		}
	}
	return out
}
