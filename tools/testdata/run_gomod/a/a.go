// Package a is a run_test fixture.
package a

// Add adds.
func Add(x, y int) int { return x + y }
