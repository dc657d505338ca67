package failure

import (
	"strings"
	"testing"
)

// TestContainsEnding compares containsEnding with strings.Contains on
// every cut of strings that hold the triggers, near misses and repeats.
func TestContainsEnding(t *testing.T) {
	t.Parallel()
	subs := []string{" FAILED", " ERROR", "error TS", "D", "", "aa"}
	texts := []string{"x FAILED y", "FAILED", " FAILE D FAILED", "error TSerror TS", "errorerror T error TS",
		"aaa", "DDD", " ERRO R ERROR", "  FAILEDD", "error T", "ÉD error TS\xff"}
	for _, text := range texts {
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				for _, sub := range subs {
					s := text[i:j]
					if got, want := containsEnding(s, sub), strings.Contains(s, sub); got != want {
						t.Errorf("containsEnding(%q, %q) = %v, want %v", s, sub, got, want)
					}
				}
			}
		}
	}
}
