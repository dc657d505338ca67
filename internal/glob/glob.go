// Package glob matches slash-separated, workspace-relative paths against
// patterns with `*` (within one segment), `?`, character classes and `**`
// (any number of whole segments, including none).
//
// Leaf engine: imports nothing above it.
package glob

import (
	"path"
	"strings"
)

// Match reports whether name matches pattern. Both use forward slashes. A
// malformed pattern matches nothing.
func Match(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

// Any reports whether name matches any of the patterns, and which one.
func Any(patterns []string, name string) (string, bool) {
	for _, p := range patterns {
		if Match(p, name) {
			return p, true
		}
	}
	return "", false
}

// AnyFold is Any ignoring case, the way protected paths are matched: on
// macOS and Windows file systems ".GITHUB/workflows/x.yml" is
// .github/workflows/x.yml.
func AnyFold(patterns []string, name string) (string, bool) {
	if p, ok := Any(patterns, name); ok {
		return p, true
	}
	low := strings.ToLower(name)
	for _, p := range patterns {
		if Match(strings.ToLower(p), low) {
			return p, true
		}
	}
	return "", false
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchSegs(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		ok, err := path.Match(pat[0], name[0])
		if err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
