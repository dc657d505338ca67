// Package glob matches slash-separated, workspace-relative paths against
// patterns with `*` (within one segment), `?`, character classes and `**`
// (any number of whole segments, including none).
//
// Leaf engine: imports nothing above it.
package glob

import (
	"errors"
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

// Check refuses patterns Match would silently never match: empty, absolute
// or backslashed ones, and malformed segments.
func Check(pattern string) error {
	if pattern == "" || strings.HasPrefix(pattern, "/") || strings.Contains(pattern, "\\") {
		return errors.New("want a relative, slash-separated glob")
	}
	for _, seg := range strings.Split(pattern, "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return err
		}
	}
	return nil
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
