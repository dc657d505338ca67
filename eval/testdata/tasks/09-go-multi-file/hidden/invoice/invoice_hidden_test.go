package invoice

import "testing"

func TestTotalQuantities(t *testing.T) {
	if got := Total([]Line{{"a", 3, 100}, {"b", 10, 1}, {"c", 1, 0}}); got != 310 {
		t.Errorf("Total = %d, want 310", got)
	}
}
