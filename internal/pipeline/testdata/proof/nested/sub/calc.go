// Package calc adds numbers.
package calc

// addFn is the implementation Add calls.
var addFn = func(a, b int) int { return a - b }

// Add returns a plus b.
func Add(a, b int) int { return addFn(a, b) }
