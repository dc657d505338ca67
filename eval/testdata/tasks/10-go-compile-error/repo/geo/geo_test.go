package geo

import "testing"

func TestDist(t *testing.T) {
	if got := Dist(Point{0, 0}, Point{3, 4}); got != 5 {
		t.Errorf("Dist = %v, want 5", got)
	}
}

func TestLength(t *testing.T) {
	if got := Length([]Point{{0, 0}, {3, 4}, {3, 0}}); got != 9 {
		t.Errorf("Length = %v, want 9", got)
	}
}
