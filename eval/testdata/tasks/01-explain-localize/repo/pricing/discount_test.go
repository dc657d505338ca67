package pricing

import "testing"

func TestSubtotal(t *testing.T) {
	if got := Subtotal([]int{250, 750}); got != 1000 {
		t.Fatalf("Subtotal = %d, want 1000", got)
	}
}

func TestDiscountAtThreshold(t *testing.T) {
	if got := Discount(DiscountThreshold); got != 1000 {
		t.Fatalf("Discount(%d) = %d, want 1000", DiscountThreshold, got)
	}
}
