package cart

import "testing"

func TestTotal(t *testing.T) {
	items := []Item{{Name: "pen", Price: 150, Quantity: 2}, {Name: "book", Price: 1200, Quantity: 1}}
	if got := Total(items, 0); got != 1500 {
		t.Errorf("Total(items, 0) = %d, want 1500", got)
	}
	if got := Total(items, 10); got != 1350 {
		t.Errorf("Total(items, 10) = %d, want 1350", got)
	}
}

func TestTotalEmpty(t *testing.T) {
	if got := Total(nil, 50); got != 0 {
		t.Errorf("Total(nil, 50) = %d, want 0", got)
	}
}
