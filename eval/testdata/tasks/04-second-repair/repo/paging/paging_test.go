package paging

import "testing"

func TestPagesPartialLastPage(t *testing.T) {
	if got := Pages(11, 5); got != 3 {
		t.Errorf("Pages(11, 5) = %d, want 3", got)
	}
}

func TestPagesExact(t *testing.T) {
	if got := Pages(10, 5); got != 2 {
		t.Errorf("Pages(10, 5) = %d, want 2", got)
	}
}

func TestPagesEmpty(t *testing.T) {
	if got := Pages(0, 5); got != 0 {
		t.Errorf("Pages(0, 5) = %d, want 0", got)
	}
}

func TestBounds(t *testing.T) {
	if from, to := Bounds(3, 5, 11); from != 10 || to != 11 {
		t.Errorf("Bounds(3, 5, 11) = %d, %d, want 10, 11", from, to)
	}
}
