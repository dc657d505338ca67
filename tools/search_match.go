package tools

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// matcher finds the lines of a buffer that match a query, fast.
//
// Go's regexp engine is slow compared with a byte search, so the regexp runs
// as little as possible:
//   - when every match must contain a literal (the longest one is chosen
//     from the parsed regexp), bytes.Index (or an ASCII case-folding scan)
//     finds candidate lines and the regexp only confirms them — or nothing
//     runs at all when the query is exactly that literal;
//   - otherwise, when no match can cross a newline, the regexp runs once over
//     the whole buffer in multi-line mode and each match names its line;
//   - otherwise one whole-buffer check rejects files without a match and the
//     remaining files are matched line by line.
type matcher struct {
	line *regexp.Regexp // the query, applied to one line without its newline
	buf  *regexp.Regexp // the query in (?m) mode; nil when \A or \z make that unsound
	lit  []byte         // a literal every match contains (lower-case when fold)
	fold bool           // lit is matched ignoring ASCII case
	pure bool           // the query is exactly lit: a hit needs no confirmation
	// crossNL is set when a match may span a newline, so a buf match does
	// not name a single line.
	crossNL bool
	// never is set when every match would contain a newline: no line can match.
	never bool
}

// newMatcher compiles query (RE2 syntax). The error is regexp's own, for
// the model to read.
func newMatcher(query string) (*matcher, error) {
	line, err := regexp.Compile(query)
	if err != nil {
		return nil, err
	}
	m := &matcher{line: line}
	re, err := syntax.Parse("(?m)"+query, syntax.Perl)
	if err != nil {
		return nil, err // not reached: regexp.Compile accepted it
	}
	re = re.Simplify()
	if !hasOp(re, syntax.OpBeginText, syntax.OpEndText) {
		m.buf = regexp.MustCompile("(?m)" + query)
	}
	m.crossNL = canMatchNewline(re)
	lit := requiredLiteral(re)
	if bytes.IndexByte(lit.text, '\n') >= 0 {
		m.never = true
		return m, nil
	}
	if len(lit.text) >= 2 || (len(lit.text) == 1 && lit.whole) {
		m.lit, m.fold = lit.text, lit.fold
		m.pure = lit.whole && !lit.fold
		if m.fold {
			m.lit = lowerASCII(m.lit)
		}
	}
	return m, nil
}

// lineSpan is one matching line: buf[start:end] without its newline.
type lineSpan struct{ start, end int }

// scan calls fn for each matching line of buf in order, stopping when fn
// returns false. It does not allocate.
func (m *matcher) scan(buf []byte, fn func(lineSpan) bool) {
	if m.never || len(buf) == 0 {
		return
	}
	switch {
	case m.lit != nil:
		m.scanLiteral(buf, fn)
	case m.buf != nil && !m.crossNL:
		for pos := 0; pos < len(buf); {
			loc := m.buf.FindIndex(buf[pos:])
			if loc == nil {
				return
			}
			s := lineAt(buf, pos, pos+loc[0])
			if m.line.Match(buf[s.start:s.end]) && !fn(s) {
				return
			}
			pos = s.end + 1
		}
	default:
		if m.buf != nil && !m.buf.Match(buf) {
			return
		}
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
	}
}

func (m *matcher) scanLiteral(buf []byte, fn func(lineSpan) bool) {
	var ff foldFinder
	if m.fold {
		ff = newFoldFinder(buf, m.lit)
	}
	for pos := 0; pos < len(buf); {
		var i int
		if m.fold {
			i = ff.index(pos)
		} else if i = bytes.Index(buf[pos:], m.lit); i >= 0 {
			i += pos
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

// literal is a byte string every match of a regexp contains.
type literal struct {
	text  []byte
	fold  bool // case-insensitive (ASCII)
	whole bool // the regexp matches exactly text and nothing else
}

// litInfo describes what a regexp node says about literals.
type litInfo struct {
	exact  bool   // the node matches only text (up to case when fold)
	text   []byte // when exact
	fold   bool
	assert bool    // the node contains zero-width assertions
	best   literal // the longest literal every match of the node contains
}

// requiredLiteral returns the longest literal every match of re contains;
// whole is set when re matches exactly that literal, case-sensitively.
func requiredLiteral(re *syntax.Regexp) literal {
	info := literals(re)
	best := info.best
	best.whole = info.exact && !info.fold && !info.assert && len(info.text) > 0
	return best
}

func literals(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpLiteral:
		text := []byte(string(re.Rune))
		if re.Flags&syntax.FoldCase == 0 {
			return litInfo{exact: true, text: text, best: literal{text: text}}
		}
		if foldableASCII(re.Rune) {
			return litInfo{exact: true, text: text, fold: true, best: literal{text: text, fold: true}}
		}
		// Folding reaches beyond ASCII (k → U+212A, s → U+017F, é → É):
		// keep only the longest piece the ASCII folding scan gets right.
		var best literal
		for _, piece := range bytes.FieldsFunc(text, func(r rune) bool { return !foldableASCII([]rune{r}) }) {
			best = better(best, literal{text: piece, fold: true})
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
	case syntax.OpConcat:
		out := litInfo{exact: true}
		var run literal
		for _, sub := range re.Sub {
			info := literals(sub)
			out.best = better(out.best, info.best)
			if !info.exact {
				out.exact = false
				out.best = better(out.best, run)
				run = literal{}
				continue
			}
			run.text = append(run.text, info.text...)
			run.fold = run.fold || info.fold
			out.assert = out.assert || info.assert
		}
		out.best = better(out.best, run)
		if out.exact {
			out.text, out.fold = run.text, run.fold
		}
		return out
	}
	return litInfo{}
}

// better picks the longer literal, preferring a case-sensitive one.
func better(a, b literal) literal {
	if len(b.text) > len(a.text) || (len(b.text) == len(a.text) && a.fold && !b.fold) {
		return literal{text: b.text, fold: b.fold}
	}
	return literal{text: a.text, fold: a.fold}
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

// hasOp reports whether re contains any of ops.
func hasOp(re *syntax.Regexp, ops ...syntax.Op) bool {
	for _, op := range ops {
		if re.Op == op {
			return true
		}
	}
	for _, sub := range re.Sub {
		if hasOp(sub, ops...) {
			return true
		}
	}
	return false
}

// canMatchNewline reports whether some match of re may contain '\n'.
func canMatchNewline(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAnyChar:
		return true
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return true
			}
		}
	}
	for _, sub := range re.Sub {
		if canMatchNewline(sub) {
			return true
		}
	}
	return false
}
