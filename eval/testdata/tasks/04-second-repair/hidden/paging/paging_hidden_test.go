package paging

import "testing"

func TestPagesHidden(t *testing.T) {
	cases := []struct{ total, per, want int }{
		{1, 1, 1}, {1, 10, 1}, {99, 10, 10}, {100, 10, 10}, {101, 10, 11},
	}
	for _, c := range cases {
		if got := Pages(c.total, c.per); got != c.want {
			t.Errorf("Pages(%d, %d) = %d, want %d", c.total, c.per, got, c.want)
		}
	}
}
