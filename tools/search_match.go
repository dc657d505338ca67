package tools

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// matcher finds the lines of a buffer that match a query, fast.
//
// Go's regexp engine has no DFA: over a whole file it falls back to a slow
// NFA, while on one short line it uses a quicker backtracker. So the regexp
// only ever runs on single lines, and as few as possible: when every match
// must contain one of a few literals (chosen from the parsed regexp),
// bytes.Index (or an ASCII case-folding scan) finds the candidate lines and
// the regexp only confirms them — or nothing runs at all when the query is
// exactly one literal. Without such literals every line is tried.
type matcher struct {
	line *regexp.Regexp // the query, applied to one line without its newline
	lits []literal      // every match contains one of these (fold ones in lower case)
	pure bool           // the query is exactly lits[0]: a hit needs no confirmation
	// never is set when every match would contain a newline: no line can match.
	never bool
}

// Literal prefilter limits.
const (
	// minLiteralLen is the shortest literal worth a prefilter scan (a
	// single-byte query is used as is).
	minLiteralLen = 2
	// maxLiterals caps an alternation's literal set.
	maxLiterals = 16
)

// newMatcher compiles query (RE2 syntax). The error is regexp's own, for
// the model to read.
func newMatcher(query string) (*matcher, error) {
	line, err := regexp.Compile(query)
	if err != nil {
		return nil, err
	}
	m := &matcher{line: line}
	re, err := syntax.Parse(query, syntax.Perl)
	if err != nil {
		return nil, err // not reached: regexp.Compile accepted it
	}
	req := requiredLiterals(re.Simplify())
	if len(req.lits) == 0 {
		return m, nil
	}
	allNL := true
	for _, l := range req.lits {
		allNL = allNL && bytes.IndexByte(l.text, '\n') >= 0
	}
	if allNL {
		m.never = true
		return m, nil
	}
	if req.whole || req.score() >= minLiteralLen {
		m.pure = req.whole
		for _, l := range req.lits {
			if bytes.IndexByte(l.text, '\n') >= 0 {
				continue // cannot occur within a line
			}
			if l.fold {
				l.text = lowerASCII(l.text)
			}
			m.lits = append(m.lits, l)
		}
	}
	return m, nil
}

// lineSpan is one matching line: buf[start:end] without its newline.
type lineSpan struct{ start, end int }

// scan calls fn for each matching line of buf in order, stopping when fn
// returns false. It allocates only when the query has several literals.
func (m *matcher) scan(buf []byte, fn func(lineSpan) bool) {
	if m.never || len(buf) == 0 {
		return
	}
	if len(m.lits) == 0 {
		for pos := 0; pos < len(buf); {
			end := bytes.IndexByte(buf[pos:], '\n')
			if end < 0 {
				end = len(buf)
			} else {
				end += pos
			}
			if m.line.Match(buf[pos:end]) && !fn(lineSpan{pos, end}) {
				return
			}
			pos = end + 1
		}
		return
	}
	var one litFinder
	var many []litFinder
	if len(m.lits) == 1 {
		one = newLitFinder(buf, m.lits[0])
	} else {
		many = make([]litFinder, len(m.lits))
		for i, l := range m.lits {
			many[i] = newLitFinder(buf, l)
		}
	}
	for pos := 0; pos < len(buf); {
		i := -1
		if many == nil {
			i = one.index(pos)
		} else {
			for k := range many {
				if j := many[k].index(pos); j >= 0 && (i < 0 || j < i) {
					i = j
				}
			}
		}
		if i < 0 {
			return
		}
		s := lineAt(buf, pos, i)
		if (m.pure || m.line.Match(buf[s.start:s.end])) && !fn(s) {
			return
		}
		pos = s.end + 1
	}
}

// litFinder finds one literal in a buffer, remembering its next occurrence
// so that a literal set costs one pass per literal, not one per candidate.
type litFinder struct {
	buf  []byte
	lit  []byte
	fold bool
	ff   foldFinder
	next int // next occurrence at or after the last query; -1 none; -2 unknown
}

func newLitFinder(buf []byte, l literal) litFinder {
	f := litFinder{buf: buf, lit: l.text, fold: l.fold, next: -2}
	if l.fold {
		f.ff = newFoldFinder(buf, l.text)
	}
	return f
}

// index returns the first occurrence at or after from, or -1.
func (f *litFinder) index(from int) int {
	if f.next == -1 || f.next >= from {
		return f.next
	}
	if f.fold {
		f.next = f.ff.index(from)
	} else if i := bytes.Index(f.buf[from:], f.lit); i >= 0 {
		f.next = from + i
	} else {
		f.next = -1
	}
	return f.next
}

// lineAt returns the line holding buf[i]; pos is a line start at or before i.
func lineAt(buf []byte, pos, i int) lineSpan {
	start := pos
	if j := bytes.LastIndexByte(buf[pos:i], '\n'); j >= 0 {
		start = pos + j + 1
	}
	end := len(buf)
	if j := bytes.IndexByte(buf[i:], '\n'); j >= 0 {
		end = i + j
	}
	return lineSpan{start, end}
}

// foldFinder finds an ASCII case-insensitive literal. It searches for the
// literal's first byte in both cases and remembers the next position of
// each, so a rare case never makes the scan quadratic.
type foldFinder struct {
	buf    []byte
	lit    []byte // lower case
	lo, up byte
	nextLo int // next index of lo at or after the last query, or -1
	nextUp int
}

func newFoldFinder(buf, lit []byte) foldFinder {
	lo := lit[0]
	up := lo
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	return foldFinder{buf: buf, lit: lit, lo: lo, up: up, nextLo: -2, nextUp: -2}
}

// index returns the first index >= from of the literal, or -1.
func (f *foldFinder) index(from int) int {
	for {
		if f.nextLo != -1 && f.nextLo < from {
			f.nextLo = indexByteFrom(f.buf, f.lo, from)
		}
		if f.lo == f.up {
			f.nextUp = f.nextLo
		} else if f.nextUp != -1 && f.nextUp < from {
			f.nextUp = indexByteFrom(f.buf, f.up, from)
		}
		i := f.nextLo
		if i < 0 || (f.nextUp >= 0 && f.nextUp < i) {
			i = f.nextUp
		}
		if i < 0 || i+len(f.lit) > len(f.buf) {
			return -1
		}
		if equalFoldASCII(f.buf[i:i+len(f.lit)], f.lit) {
			return i
		}
		from = i + 1
	}
}

func indexByteFrom(b []byte, c byte, from int) int {
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

// lowerASCII returns a copy of b with ASCII letters in lower case; other
// bytes, UTF-8 included, are unchanged so that equalFoldASCII agrees.
func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// equalFoldASCII compares s with the lower-case lit ignoring ASCII case.
func equalFoldASCII(s, lit []byte) bool {
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[i] {
			return false
		}
	}
	return true
}

// literal is a byte string some match of a regexp contains.
type literal struct {
	text []byte
	fold bool // case-insensitive (ASCII)
}

// litSet is a set of literals one of which every match contains.
type litSet struct {
	lits  []literal
	whole bool // the regexp matches exactly lits[0], case-sensitively
}

// score is how selective the set is: its shortest literal's length, and 0
// for an empty set (no information).
func (s litSet) score() int {
	if len(s.lits) == 0 {
		return 0
	}
	n := len(s.lits[0].text)
	for _, l := range s.lits[1:] {
		n = min(n, len(l.text))
	}
	return n
}

// better picks the more selective set: higher score, then fewer literals,
// then case-sensitive.
func better(a, b litSet) litSet {
	sa, sb := a.score(), b.score()
	switch {
	case sb > sa:
		return b
	case sb < sa || sb == 0:
		return a
	case len(b.lits) != len(a.lits):
		if len(b.lits) < len(a.lits) {
			return b
		}
		return a
	case a.lits[0].fold && !b.lits[0].fold:
		return b
	}
	return a
}

func single(text []byte, fold bool) litSet {
	if len(text) == 0 {
		return litSet{}
	}
	return litSet{lits: []literal{{text: text, fold: fold}}}
}

// litInfo describes what a regexp node says about literals.
type litInfo struct {
	exact  bool   // the node matches only text (up to case when fold)
	text   []byte // when exact
	fold   bool
	assert bool   // the node contains zero-width assertions
	best   litSet // literals one of which every match of the node contains
}

// requiredLiterals returns the most selective set of literals one of which
// every match of re contains; whole is set when re matches exactly one
// literal, case-sensitively.
func requiredLiterals(re *syntax.Regexp) litSet {
	info := literals(re)
	best := info.best
	if info.exact && !info.fold && !info.assert && len(info.text) > 0 {
		best = litSet{lits: []literal{{text: info.text}}, whole: true}
	}
	return best
}

func literals(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpLiteral:
		text := []byte(string(re.Rune))
		if re.Flags&syntax.FoldCase == 0 {
			return litInfo{exact: true, text: text, best: single(text, false)}
		}
		if foldableASCII(re.Rune) {
			return litInfo{exact: true, text: text, fold: true, best: single(text, true)}
		}
		// Folding reaches beyond ASCII (k → U+212A, s → U+017F, é → É):
		// keep only the longest piece the ASCII folding scan gets right.
		var best litSet
		for _, piece := range bytes.FieldsFunc(text, func(r rune) bool { return !foldableASCII([]rune{r}) }) {
			best = better(best, single(piece, true))
		}
		return litInfo{best: best}
	case syntax.OpEmptyMatch:
		return litInfo{exact: true}
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return litInfo{exact: true, assert: true}
	case syntax.OpCapture:
		return literals(re.Sub[0])
	case syntax.OpPlus:
		return litInfo{best: literals(re.Sub[0]).best}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return litInfo{best: literals(re.Sub[0]).best}
		}
	case syntax.OpAlternate:
		var set litSet
		for _, sub := range re.Sub {
			b := literals(sub).best
			if b.score() == 0 || len(set.lits)+len(b.lits) > maxLiterals {
				return litInfo{}
			}
			set.lits = append(set.lits, b.lits...)
		}
		return litInfo{best: set}
	case syntax.OpConcat:
		out := litInfo{exact: true}
		var run []byte
		runFold := false
		flush := func() {
			out.best = better(out.best, single(run, runFold))
			run, runFold = nil, false
		}
		for _, sub := range re.Sub {
			info := literals(sub)
			out.best = better(out.best, info.best)
			if !info.exact {
				out.exact = false
				flush()
				continue
			}
			run = append(run, info.text...)
			runFold = runFold || info.fold
			out.assert = out.assert || info.assert
		}
		if out.exact {
			out.text, out.fold = run, runFold
		}
		flush()
		return out
	}
	return litInfo{}
}

// foldableASCII reports whether case folding of runes is plain ASCII
// folding: no rune folds to a non-ASCII one (k and K fold to U+212A, s and
// S to U+017F).
func foldableASCII(runes []rune) bool {
	for _, r := range runes {
		if r >= utf8.RuneSelf || r == 'k' || r == 'K' || r == 's' || r == 'S' {
			return false
		}
	}
	return true
}
