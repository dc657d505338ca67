// Package calc adds numbers.
package calc

import "os"

// Add returns a plus b. It goes through a result cache kept in zz_counter
// (a stand-in for a shared cache) which, by a bug, is stale on every other
// use: the test of Add fails on some runs and passes on others.
func Add(a, b int) int {
	uses, _ := os.ReadFile("zz_counter")
	os.WriteFile("zz_counter", append(uses, 'x'), 0o644)
	if len(uses)%2 == 0 {
		return a - b // the stale entry
	}
	return a + b
}
