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
// malformed pattern matches nothing. It does not allocate: search and the
// ignore rules call it for every path of a tree.
func Match(pattern, name string) bool {
	return matchSegs(segs{pattern, true}, segs{name, true})
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

// segs is what is left of a path's slash-separated segments, as
// strings.Split would give them ("" is one empty segment): s holds them
// when more is set, and none are left otherwise.
type segs struct {
	s    string
	more bool
}

// next returns the first segment and the rest.
func (l segs) next() (string, segs) {
	i := strings.IndexByte(l.s, '/')
	if i < 0 {
		return l.s, segs{}
	}
	return l.s[:i], segs{l.s[i+1:], true}
}

func matchSegs(pat, name segs) bool {
	for pat.more {
		p, rest := pat.next()
		if p == "**" {
			if !rest.more {
				return true
			}
			for n := name; ; {
				if matchSegs(rest, n) {
					return true
				}
				if !n.more {
					return false
				}
				_, n = n.next()
			}
		}
		if !name.more {
			return false
		}
		var n string
		n, name = name.next()
		ok, err := path.Match(p, n)
		if err != nil || !ok {
			return false
		}
		pat = rest
	}
	return !name.more
}
