package sum

// Sum adds the numbers; the bug: it skips the first one.
func Sum(xs []int) int {
	t := 0
	for i := 1; i < len(xs); i++ {
		t += xs[i]
	}
	return t
}
