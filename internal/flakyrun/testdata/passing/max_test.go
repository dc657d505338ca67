package max

import "testing"

func TestMax(t *testing.T) {
	if got := Max([]int{3, 9, 4}); got != 9 {
		t.Errorf("Max(3, 9, 4) = %d, want 9", got)
	}
}

func TestMaxNegative(t *testing.T) {
	if got := Max([]int{-3, -1}); got != -1 {
		t.Errorf("Max(-3, -1) = %d, want -1", got)
	}
}
