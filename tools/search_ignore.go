package tools

import (
	"bytes"
	"strings"
)

// The ignore rules, as git applies them (gitignore(5)): search lists the
// files `git ls-files --cached --others --exclude-standard` would, and its
// own walk (search_list.go) must exclude exactly what git excludes.

// ignoreFile is one parsed .gitignore file (or the repository's
// info/exclude, based at the root).
type ignoreFile struct {
	base  string // directory holding the file, "." for the root
	rules []ignoreRule
}

// ignoreRule is one pattern line.
type ignoreRule struct {
	pattern  string // without "!", one trailing "/", and (anchored) one leading "/"
	negate   bool   // "!pattern" re-includes
	dirOnly  bool   // "pattern/" matches directories only
	anchored bool   // has a slash (not counting a trailing one): matched against the path below base
	literal  bool   // no wildcard or escape: compared as a string
	prefix   int    // length of the leading part without wildcard or escape
	tail     string // the trailing part after the last wildcard, escape or slash: a match ends with it
	suffix   string // "*literal" (basename rules): compared as a suffix
}

// parseIgnore parses the lines of a .gitignore file as git does: a UTF-8
// BOM skipped; CR before LF dropped; "#" comments; trailing spaces (not
// tabs) dropped unless escaped; "!" negates; one trailing "/" means
// directories only; any other "/" anchors the pattern to base.
func parseIgnore(data []byte, base string) *ignoreFile {
	ig := &ignoreFile{base: base}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		// git reads the line as a C string: a CR before the LF, and
		// anything from a NUL on, are not part of it.
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		if line = trimTrailingSpaces(line); len(line) == 0 {
			continue // an empty pattern matches nothing
		}
		r := ignoreRule{}
		if line[0] == '!' {
			r.negate = true
			line = line[1:]
		}
		if n := len(line); n > 0 && line[n-1] == '/' {
			r.dirOnly = true
			line = line[:n-1]
		}
		if bytes.IndexByte(line, '/') >= 0 {
			r.anchored = true
			if line[0] == '/' {
				line = line[1:]
			}
		}
		r.pattern = string(line)
		r.tail = r.pattern[strings.LastIndexAny(r.pattern, "*?[]\\/")+1:]
		r.prefix = strings.IndexAny(r.pattern, `*?[\`)
		if r.literal = r.prefix < 0; r.literal {
			r.prefix = len(r.pattern)
		}
		if !r.anchored && len(r.pattern) > 1 && r.pattern[0] == '*' && !strings.ContainsAny(r.pattern[1:], `*?[\`) {
			r.suffix = r.pattern[1:]
		}
		ig.rules = append(ig.rules, r)
	}
	return ig
}

// trimTrailingSpaces drops trailing spaces, keeping one escaped by a
// backslash (the backslash stays: the matcher reads "\ " as a space).
func trimTrailingSpaces(line []byte) []byte {
	end := len(line)
	for end > 0 && line[end-1] == ' ' {
		end--
	}
	if end < len(line) {
		// An odd run of backslashes before the spaces escapes the first.
		bs := 0
		for i := end - 1; i >= 0 && line[i] == '\\'; i-- {
			bs++
		}
		if bs%2 == 1 {
			end++
		}
	}
	return line[:end]
}

// match reports whether rule r matches rel (workspace-relative, inside
// base), whose last element is name, as git's match_basename and
// match_pathname do: a literal compared as a string, "*literal" as a
// suffix; an anchored pattern's literal prefix compared first and only
// the rest given to wildmatch (where, as in git, a "**" right after the
// prefix counts as at the pattern's start).
func (r *ignoreRule) match(base, rel, name string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if !r.anchored {
		switch {
		case r.literal:
			return r.pattern == name
		case r.suffix != "":
			return strings.HasSuffix(name, r.suffix)
		}
		return strings.HasSuffix(name, r.tail) && wildmatch(r.pattern, name, false)
	}
	sub := rel
	if base != "." {
		sub = rel[len(base)+1:]
	}
	n := r.prefix
	if len(sub) < n || sub[:n] != r.pattern[:n] {
		return false
	}
	if n == len(r.pattern) {
		return len(sub) == n
	}
	return strings.HasSuffix(sub, r.tail) && wildmatch(r.pattern[n:], sub[n:], true)
}

// ignored applies the ignore files of rel's directory chain (outermost
// first): the last matching rule wins, deeper files over shallower ones,
// as in git. It does not look at rel's parents: the walk never enters an
// ignored directory.
func ignored(stack []*ignoreFile, rel string, isDir bool) bool {
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	for i := len(stack) - 1; i >= 0; i-- {
		ig := stack[i]
		for k := len(ig.rules) - 1; k >= 0; k-- {
			if r := &ig.rules[k]; r.match(ig.base, rel, name, isDir) {
				return !r.negate
			}
		}
	}
	return false
}

// wildmatch reports whether t matches pattern p as git's wildmatch does,
// byte by byte: "*" any bytes ("/" only without pathname), "?" one byte,
// "[...]" a class ("!" or "^" negates, ranges, "[:alpha:]" and the other
// POSIX names, "\" escapes; a "/" inside one is a member, never a
// separator), "\x" the byte x. With pathname, "*", "?" and classes never
// match "/", and two or more stars between slashes (or the pattern's ends)
// match across them, "**/" also nothing. A malformed class or a trailing
// backslash matches nothing. Once star backtracking has taken more than a
// few steps, failed (star, text) positions are remembered, so the search
// stays polynomial whatever the pattern (the patterns come from the
// repository).
func wildmatch(p, t string, pathname bool) bool {
	m := wmState{p: p, t: t, pathname: pathname, budget: 4 * (len(p) + len(t))}
	return m.match(0, 0)
}

type wmState struct {
	p, t     string
	pathname bool
	budget   int    // star attempts left before failures are remembered
	failed   []bool // (pattern index, text index) pairs known not to match
}

func (m *wmState) try(pi, ti int) bool {
	if m.failed == nil {
		if m.budget--; m.budget >= 0 {
			return m.match(pi, ti)
		}
		m.failed = make([]bool, (len(m.p)+1)*(len(m.t)+1))
	}
	k := pi*(len(m.t)+1) + ti
	if m.failed[k] {
		return false
	}
	ok := m.match(pi, ti)
	m.failed[k] = !ok
	return ok
}

func (m *wmState) match(pi, ti int) bool {
	p, t := m.p, m.t
	for pi < len(p) {
		switch c := p[pi]; c {
		case '*':
			start := pi
			for pi < len(p) && p[pi] == '*' {
				pi++
			}
			crossSlash := !m.pathname
			if pi-start >= 2 {
				crossSlash = false
				if (start == 0 || p[start-1] == '/') &&
					(pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && pi+1 < len(p) && p[pi+1] == '/')) {
					if pi < len(p) && p[pi] == '/' && m.try(pi+1, ti) {
						return true // "**/" matching no directory
					}
					crossSlash = true
				}
			}
			if pi == len(p) {
				return crossSlash || strings.IndexByte(t[ti:], '/') < 0
			}
			for k := ti; k < len(t); k++ {
				if m.try(pi, k) {
					return true
				}
				if !crossSlash && t[k] == '/' {
					return false
				}
			}
			return false
		case '?':
			if ti >= len(t) || (m.pathname && t[ti] == '/') {
				return false
			}
			pi++
		case '[':
			if ti >= len(t) {
				return false
			}
			in, next, valid := matchClass(p, pi, t[ti])
			if !valid || !in || (m.pathname && t[ti] == '/') {
				return false
			}
			pi = next
		case '\\':
			if pi+1 >= len(p) || ti >= len(t) || t[ti] != p[pi+1] {
				return false
			}
			pi += 2
		default:
			if ti >= len(t) || t[ti] != c {
				return false
			}
			pi++
		}
		ti++
	}
	return ti == len(t)
}

// matchClass matches byte c against the class starting at p[i] == '['. It
// returns whether c is in it, the index after the class, and false for
// valid when the class is malformed (unterminated, a bad [:name:]).
func matchClass(p string, i int, c byte) (in bool, next int, valid bool) {
	i++
	negated := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negated = true
		i++
	}
	matched := false
	var prev byte
	havePrev := false
	for first := true; ; first = false {
		if i >= len(p) {
			return false, 0, false
		}
		ch := p[i]
		if ch == ']' && !first {
			i++
			break
		}
		switch {
		case ch == '\\':
			i++
			if i >= len(p) {
				return false, 0, false
			}
			ch = p[i]
			if c == ch {
				matched = true
			}
			prev, havePrev = ch, true
			i++
		case ch == '-' && havePrev && i+1 < len(p) && p[i+1] != ']':
			i++
			hi := p[i]
			if hi == '\\' {
				i++
				if i >= len(p) {
					return false, 0, false
				}
				hi = p[i]
			}
			if prev <= c && c <= hi {
				matched = true
			}
			havePrev = false
			i++
		case ch == '[' && i+1 < len(p) && p[i+1] == ':':
			end := strings.IndexByte(p[i+2:], ']')
			if end < 0 {
				return false, 0, false
			}
			name := p[i+2 : i+2+end]
			if !strings.HasSuffix(name, ":") {
				// Not "[:name:]": the "[" is an ordinary member.
				if c == '[' {
					matched = true
				}
				prev, havePrev = '[', true
				i++
				continue
			}
			in, ok := posixClass(strings.TrimSuffix(name, ":"), c)
			if !ok {
				return false, 0, false
			}
			matched = matched || in
			havePrev = false
			i += 2 + end + 1
		default:
			if c == ch {
				matched = true
			}
			prev, havePrev = ch, true
			i++
		}
	}
	return matched != negated, i, true
}

// posixClass reports whether c is in the named class, and false for ok
// when the name is unknown.
func posixClass(name string, c byte) (in, ok bool) {
	lower := 'a' <= c && c <= 'z'
	upper := 'A' <= c && c <= 'Z'
	digit := '0' <= c && c <= '9'
	switch name {
	case "alnum":
		return lower || upper || digit, true
	case "alpha":
		return lower || upper, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return lower, true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !lower && !upper && !digit, true
	case "space":
		return c == ' ' || ('\t' <= c && c <= '\r'), true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F'), true
	}
	return false, false
}
