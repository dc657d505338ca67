// Package notes formats release notes.
package notes

import "strings"

// Title upper-cases the first letter of every word, keeping single spaces
// between words.
func Title(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, "")
}
