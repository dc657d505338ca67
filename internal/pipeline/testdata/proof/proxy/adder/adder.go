// Package adder adds.
package adder

// Add returns a plus b.
func Add(a, b int) int { return a - b }
