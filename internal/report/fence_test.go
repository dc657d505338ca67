package report

import (
	"strings"
	"testing"
)

func TestFence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		atLeast int
		want    int
	}{
		{"no backticks", 3, 3},
		{"a ``` fence", 3, 4},
		{"`x` and ````` five", 3, 6},
		{"``", 4, 4},
		{strings.Repeat("`", 9) + "\n`", 3, 10},
	} {
		got := Fence(c.in, c.atLeast)
		if got != strings.Repeat("`", c.want) {
			t.Errorf("Fence(%q, %d) = %d backticks, want %d", c.in, c.atLeast, len(got), c.want)
		}
		if strings.Contains(c.in, got) {
			t.Errorf("Fence(%q) can be closed by the text", c.in)
		}
	}
}
