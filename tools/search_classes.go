package tools

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// A query without a usable literal ("[a-z]+[0-9]{3}[A-Z]", "\d+ms") often
// still says which bytes every match holds in a row: here a lower-case
// letter, three digits and an upper-case letter. requiredClasses finds the
// most selective such run of single-byte classes, for the scan to look
// for before the regexp runs on a line.
//
// Only classes of ASCII characters count: each matches exactly one byte,
// and an ASCII byte in a buffer is always that character to the regexp
// (invalid UTF-8 decodes one byte at a time and never swallows an ASCII
// byte). Anything that may match a non-ASCII rune, or fold to one, ends a
// run. Newline is removed from every class: no match spans lines.

// classInfo describes what a regexp node says about byte classes.
type classInfo struct {
	exact    bool      // every match is exactly one sequence of seq's classes
	seq      []byteSet // when exact
	pre, suf []byteSet // every match starts (ends) with these
	best     []byteSet // every match contains this run
}

// requiredClasses returns the most selective run of byte classes every
// match of re contains, or nil.
func requiredClasses(re *syntax.Regexp) []byteSet {
	info := classes(re)
	best := info.best
	for _, c := range [][]byteSet{info.seq, info.pre, info.suf} {
		best = betterClasses(best, c)
	}
	if len(best) > maxNeedleClasses {
		best = best[:maxNeedleClasses] // any part of a required run is required
	}
	return best
}

// classSeqCost estimates how often a run matches at a position, per 10^5
// positions, rounded up: lower is more selective; an empty run is the
// worst.
func classSeqCost(seq []byteSet) float64 {
	if len(seq) == 0 {
		return 1e5
	}
	p := 1e5
	for i := range seq {
		p *= float64(seq[i].freq()) / 1e5
	}
	return p
}

func betterClasses(a, b []byteSet) []byteSet {
	if len(b) > 0 && (len(a) == 0 || classSeqCost(b) < classSeqCost(a)) {
		return b
	}
	return a
}

// joinClasses concatenates two runs into a new slice. Runs are never cut
// while they are built (a cut run followed by more classes would claim
// classes adjacent that are not); their length is bounded by the compiled
// regexp's, and requiredClasses cuts the one it returns.
func joinClasses(a, b []byteSet) []byteSet {
	out := make([]byteSet, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

// repeatSeq is k copies of seq for the largest k <= n that stops at
// maxNeedleClasses classes, at least one copy; and whether k == n. Any k
// copies start and end every run of n.
func repeatSeq(seq []byteSet, n int) ([]byteSet, bool) {
	var out []byteSet
	k := 0
	for k < n && (k == 0 || len(out)+len(seq) <= maxNeedleClasses) {
		out = append(out, seq...)
		k++
	}
	return out, k == n
}

// runeClass returns the byte class matching exactly what one character of
// ranges (pairs lo, hi) matches, or false when it may match a non-ASCII
// rune or only a newline.
func runeClass(ranges []rune) (byteSet, bool) {
	var s byteSet
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i+1] >= utf8.RuneSelf {
			return byteSet{}, false
		}
		s.addRange(byte(ranges[i]), byte(ranges[i+1]))
	}
	s[0] &^= 1 << '\n'
	return s, s.count() > 0
}

// literalClass is runeClass for one literal rune, folded when fold.
func literalClass(r rune, fold bool) (byteSet, bool) {
	if !fold {
		return runeClass([]rune{r, r})
	}
	ranges := []rune{r, r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		ranges = append(ranges, f, f)
	}
	return runeClass(ranges)
}

func classes(re *syntax.Regexp) classInfo {
	switch re.Op {
	case syntax.OpLiteral:
		out := classInfo{exact: true}
		var run []byteSet
		for _, r := range re.Rune {
			c, ok := literalClass(r, re.Flags&syntax.FoldCase != 0)
			if !ok {
				if out.exact {
					out.pre = run
				}
				out.exact = false
				out.best = betterClasses(out.best, run)
				run = nil
				continue
			}
			run = append(run, c)
		}
		if out.exact {
			out.seq = run
		} else {
			out.suf = run
			out.best = betterClasses(out.best, run)
		}
		return out
	case syntax.OpCharClass:
		if c, ok := runeClass(re.Rune); ok {
			return classInfo{exact: true, seq: []byteSet{c}}
		}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return classInfo{exact: true}
	case syntax.OpCapture:
		return classes(re.Sub[0])
	case syntax.OpPlus:
		return repeatClasses(classes(re.Sub[0]), 1)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			sub := classes(re.Sub[0])
			if sub.exact && re.Min == re.Max {
				if seq, all := repeatSeq(sub.seq, re.Min); all {
					return classInfo{exact: true, seq: seq}
				}
			}
			return repeatClasses(sub, re.Min)
		}
	case syntax.OpAlternate:
		return alternateClasses(re.Sub)
	case syntax.OpConcat:
		return concatClasses(re.Sub)
	}
	return classInfo{}
}

// repeatClasses describes sub repeated at least min (>= 1) times, a
// variable number.
func repeatClasses(sub classInfo, min int) classInfo {
	if !sub.exact {
		return classInfo{pre: sub.pre, suf: sub.suf, best: sub.best}
	}
	// A run of up to min copies starts and ends every match.
	seq, _ := repeatSeq(sub.seq, min)
	return classInfo{pre: seq, suf: seq, best: seq}
}

func concatClasses(subs []*syntax.Regexp) classInfo {
	out := classInfo{exact: true}
	var run []byteSet // the exact run ending here
	for _, sub := range subs {
		info := classes(sub)
		out.best = betterClasses(out.best, info.best)
		if info.exact {
			run = joinClasses(run, info.seq)
			continue
		}
		joined := joinClasses(run, info.pre)
		if out.exact {
			out.pre = joined
			out.exact = false
		}
		out.best = betterClasses(out.best, joined)
		run = info.suf
	}
	if out.exact {
		out.seq = run
	} else {
		out.suf = run
	}
	out.best = betterClasses(out.best, run)
	return out
}

// alternateClasses merges alternatives position by position: when all are
// exact runs of one length, so is the alternation; otherwise their common
// leading and trailing positions are still required.
func alternateClasses(subs []*syntax.Regexp) classInfo {
	infos := make([]classInfo, len(subs))
	allExact, sameLen := true, true
	for i, sub := range subs {
		infos[i] = classes(sub)
		allExact = allExact && infos[i].exact
		sameLen = sameLen && infos[i].exact && len(infos[i].seq) == len(infos[0].seq)
	}
	if allExact && sameLen {
		seq := make([]byteSet, len(infos[0].seq))
		for _, info := range infos {
			for k := range seq {
				seq[k].union(&info.seq[k])
			}
		}
		return classInfo{exact: true, seq: seq}
	}
	edge := func(get func(classInfo) []byteSet, fromEnd bool) []byteSet {
		n := -1
		for _, info := range infos {
			if l := len(get(info)); n < 0 || l < n {
				n = l
			}
		}
		if n <= 0 {
			return nil
		}
		seq := make([]byteSet, n)
		for _, info := range infos {
			s := get(info)
			if fromEnd {
				s = s[len(s)-n:]
			}
			for k := range seq {
				seq[k].union(&s[k])
			}
		}
		return seq
	}
	pre := edge(func(c classInfo) []byteSet {
		if c.exact {
			return c.seq
		}
		return c.pre
	}, false)
	suf := edge(func(c classInfo) []byteSet {
		if c.exact {
			return c.seq
		}
		return c.suf
	}, true)
	return classInfo{pre: pre, suf: suf, best: betterClasses(pre, suf)}
}
