package ledger

import "testing"

func TestBalancesDebits(t *testing.T) {
	got := Balances([]Entry{{"a", 500}, {"a", -200}, {"b", -50}})
	if got["a"] != 300 || got["b"] != -50 {
		t.Fatalf("Balances = %v, want a=300 b=-50", got)
	}
}
