// Package calc adds numbers.
package calc

import "example.com/adder"

// Add returns a plus b.
func Add(a, b int) int { return adder.Add(a, b) }
