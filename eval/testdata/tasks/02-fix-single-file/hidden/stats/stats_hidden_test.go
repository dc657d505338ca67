package stats

import "testing"

// Hidden check: cases the visible test does not pin down.
func TestMeanHidden(t *testing.T) {
	cases := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{1, 2}, 1.5},
		{[]float64{-3, 3, 9}, 3},
	}
	for _, c := range cases {
		if got := Mean(c.in); got != c.want {
			t.Errorf("Mean(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
