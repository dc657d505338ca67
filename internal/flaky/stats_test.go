package flaky

import (
	"errors"
	"math"
	"testing"
)

func TestWilson(t *testing.T) {
	t.Parallel()
	// Expected values worked by hand from the score-interval formula with
	// z = 1.959964 (and matching published tables: 0/10 → 0.2775).
	tests := []struct {
		failures, runs int
		lo, hi         float64
	}{
		{0, 10, 0, 0.2775},
		{10, 10, 0.7225, 1},
		{3, 10, 0.1078, 0.6032},
		{1, 1, 0.2065, 1},
		{0, 1, 0, 0.7935},
		{5, 100, 0.0215, 0.1118},
		{50, 100, 0.4038, 0.5962},
	}
	for _, tc := range tests {
		got, err := Wilson(tc.failures, tc.runs)
		if err != nil {
			t.Fatalf("Wilson(%d, %d): %v", tc.failures, tc.runs, err)
		}
		if math.Abs(got.Lo-tc.lo) > 5e-5 || math.Abs(got.Hi-tc.hi) > 5e-5 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.failures, tc.runs, got.Lo, got.Hi, tc.lo, tc.hi)
		}
		p := float64(tc.failures) / float64(tc.runs)
		if got.Lo > p || got.Hi < p || got.Lo < 0 || got.Hi > 1 {
			t.Errorf("Wilson(%d, %d) = %+v does not contain %v inside [0,1]", tc.failures, tc.runs, got, p)
		}
	}
}

func TestWilsonExactEdges(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 1000; n++ {
		zero, _ := Wilson(0, n)
		all, _ := Wilson(n, n)
		if zero.Lo != 0 || all.Hi != 1 {
			t.Fatalf("n=%d: 0/n lo=%v, n/n hi=%v; want exactly 0 and 1", n, zero.Lo, all.Hi)
		}
		// Symmetry: f/n failures is (n-f)/n passes.
		if math.Abs(zero.Hi-(1-all.Lo)) > 1e-12 {
			t.Fatalf("n=%d: 0/n hi=%v and n/n lo=%v are not mirror images", n, zero.Hi, all.Lo)
		}
	}
}

func TestWilsonRefuses(t *testing.T) {
	t.Parallel()
	if _, err := Wilson(0, 0); !errors.Is(err, ErrNoRuns) {
		t.Errorf("Wilson(0, 0) error = %v, want ErrNoRuns", err)
	}
	for _, c := range [][2]int{{-1, 5}, {1, -1}, {6, 5}} {
		if _, err := Wilson(c[0], c[1]); err == nil {
			t.Errorf("Wilson(%d, %d) accepted impossible counts", c[0], c[1])
		}
		if _, err := Rate(c[0], c[1]); err == nil {
			t.Errorf("Rate(%d, %d) accepted impossible counts", c[0], c[1])
		}
	}
	if _, err := Rate(0, 0); !errors.Is(err, ErrNoRuns) {
		t.Errorf("Rate(0, 0) error = %v, want ErrNoRuns", err)
	}
}
