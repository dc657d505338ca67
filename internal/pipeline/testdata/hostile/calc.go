// Package calc is a fixture: a bug, and a test file that attacks the harness.
package calc

// Add returns a plus b.
func Add(a, b int) int {
	return a - b
}
