package tools

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// matcher finds the lines of a buffer that match a query, fast.
//
// Go's regexp engine has no DFA: over a whole file it falls back to a slow
// NFA, while on one short line it uses a quicker backtracker. So the regexp
// only ever runs on single lines, and as few as possible: when every match
// must contain one of a few literals (chosen from the parsed regexp), or a
// run of byte classes ("[a-z][0-9][0-9][0-9][A-Z]" for
// "[a-z]+[0-9]{3}[A-Z]"), a scan for them finds the candidate lines and
// the regexp only confirms them — or nothing runs at all when the query is
// exactly one literal. Each scan is anchored on the needle's rarest byte.
// Without any such needle every line is tried.
type matcher struct {
	line    *regexp.Regexp // the query, applied to one line without its newline
	lits    []literal      // every match contains one of these (fold ones in lower case)
	needles []needle       // what the scan looks for: lits, or a class run
	pure    bool           // the query is exactly lits[0]: a hit needs no confirmation
	seq     seqFilter      // runs a matching line holds in order: checked before the regexp
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
	// maxClassCost is the most frequent class run worth a prefilter scan
	// (per 10^5 positions; see classSeqCost).
	maxClassCost = 10000
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
	re = re.Simplify()
	req := requiredLiterals(re)
	allNL := len(req.lits) > 0
	for _, l := range req.lits {
		allNL = allNL && bytes.IndexByte(l.text, '\n') >= 0
	}
	if allNL {
		m.never = true
		return m, nil
	}
	litCost := -1.0
	if req.whole || req.score() >= minLiteralLen {
		m.pure = req.whole
		litCost = 0
		for _, l := range req.lits {
			if bytes.IndexByte(l.text, '\n') >= 0 {
				continue // cannot occur within a line
			}
			if l.fold {
				l.text = lowerASCII(l.text)
			}
			m.lits = append(m.lits, l)
			m.needles = append(m.needles, newLitNeedle(l.text, l.fold))
			litCost += literalCost(l)
		}
	}
	if m.pure {
		return m, nil
	}
	m.seq = requiredSequence(re)
	// A class run far more selective than the literals replaces them.
	if cls := requiredClasses(re); len(cls) > 0 {
		if c := classSeqCost(cls); c <= maxClassCost && (litCost < 0 || c*4 < litCost) {
			m.needles = []needle{newClassNeedle(cls)}
		}
	}
	return m, nil
}

// literalCost is classSeqCost for a literal.
func literalCost(l literal) float64 {
	seq := make([]byteSet, len(l.text))
	for i, c := range l.text {
		seq[i].add(c)
		if l.fold && 'a' <= c && c <= 'z' {
			seq[i].add(c - 'a' + 'A')
		}
	}
	return classSeqCost(seq)
}

// lineSpan is one matching line: buf[start:end] without its newline.
type lineSpan struct{ start, end int }

// scan calls fn for each matching line of buf in order, stopping when fn
// returns false. It allocates only when the query has several needles.
func (m *matcher) scan(buf []byte, fn func(lineSpan) bool) {
	if m.never || len(buf) == 0 {
		return
	}
	if len(m.needles) == 0 {
		for pos := 0; pos < len(buf); {
			end := bytes.IndexByte(buf[pos:], '\n')
			if end < 0 {
				end = len(buf)
			} else {
				end += pos
			}
			if m.confirm(buf[pos:end]) && !fn(lineSpan{pos, end}) {
				return
			}
			pos = end + 1
		}
		return
	}
	var one needleFinder
	var many []needleFinder
	if len(m.needles) == 1 {
		one = newNeedleFinder(buf, &m.needles[0])
	} else {
		many = make([]needleFinder, len(m.needles))
		for i := range m.needles {
			many[i] = newNeedleFinder(buf, &m.needles[i])
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
		if (m.pure || m.confirm(buf[s.start:s.end])) && !fn(s) {
			return
		}
		pos = s.end + 1
	}
}

// confirm runs the sequence filter, then the regexp, on one line.
func (m *matcher) confirm(line []byte) bool {
	return (m.seq == nil || m.seq.pass(line)) && m.line.Match(line)
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
		fold := re.Flags&syntax.FoldCase != 0
		// U+FFFD in a query also matches each byte of invalid UTF-8, whose
		// text is not its encoding.
		bad := slices.Contains(re.Rune, utf8.RuneError)
		if !fold && !bad {
			return litInfo{exact: true, text: text, best: single(text, false)}
		}
		if fold && !bad && foldableASCII(re.Rune) {
			return litInfo{exact: true, text: text, fold: true, best: single(text, true)}
		}
		// Folding reaches beyond ASCII (k → U+212A, s → U+017F, é → É), or
		// U+FFFD stands for any invalid byte: keep only the longest piece
		// the byte scan gets right.
		var best litSet
		for _, piece := range bytes.FieldsFunc(text, func(r rune) bool {
			return r == utf8.RuneError || (fold && !foldableASCII([]rune{r}))
		}) {
			best = better(best, single(piece, fold))
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
