// Package fixture is a tiny module built and tested inside the sandbox.
package fixture

// Add returns a+b.
func Add(a, b int) int { return a + b }
