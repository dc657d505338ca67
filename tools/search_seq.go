package tools

import "regexp/syntax"

// A query without a usable literal ("[a-z]+_[a-z]+_[a-z]+\(") finds its
// candidate lines by one class run ("[a-z]_[a-z]"), and many lines hold one
// run without matching: each then cost a run of the regexp's backtracker,
// most of such a search's time. A concatenation says more: its runs occur
// in order, each at least some bytes after the previous one's start
// ("[a-z]_[a-z]", then "[a-z]_[a-z]" two bytes on, then "[a-z](" two bytes
// on). seqFilter checks that on the line first, by scanning, and only the
// lines that pass meet the regexp.

// seqStep is one run of a seqFilter and how far the next run starts after
// this one's start, at least.
type seqStep struct {
	nd  needle
	gap int
}

// seqFilter is a sequence of class runs every match contains in order.
type seqFilter []seqStep

// requiredSequence returns the runs of re's top-level concatenation, in
// order, or nil when re is not one or holds fewer than two runs.
func requiredSequence(re *syntax.Regexp) seqFilter {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat {
		return nil
	}
	var (
		out     seqFilter
		run     []byteSet // the exact run ending at the current position
		pending int       // least distance from the last step's start to run's start
	)
	emit := func(cls []byteSet, next int) {
		if len(out) > 0 {
			out[len(out)-1].gap = pending
		}
		if len(cls) > maxNeedleClasses {
			cls = cls[:maxNeedleClasses] // a prefix starts where the run does
		}
		out = append(out, seqStep{nd: newClassNeedle(cls)})
		pending = next
	}
	for _, sub := range re.Sub {
		info := classes(sub)
		if info.exact {
			run = joinClasses(run, info.seq)
			continue
		}
		// sub's match spans at least minLen bytes, starts with pre and
		// ends with suf: the next run starts at least this far on.
		skip := max(0, minLen(sub)-len(info.suf))
		if joined := joinClasses(run, info.pre); len(joined) > 0 {
			emit(joined, len(run)+skip)
		} else {
			pending += skip
		}
		run = info.suf
	}
	if len(run) > 0 {
		emit(run, 0)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// minLen is a lower bound of the bytes a match of re spans: each rune
// takes at least one.
func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n += minLen(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range re.Sub {
			if l := minLen(s); n < 0 || l < n {
				n = l
			}
		}
		return max(n, 0)
	}
	return 0
}

// pass reports whether line holds the runs in order, each starting at
// least the previous step's gap after the previous run's start. Taking
// each run's leftmost place is safe: a later place only leaves less room.
func (f seqFilter) pass(line []byte) bool {
	pos := 0
	for i := range f {
		p := f[i].nd.indexIn(line, pos)
		if p < 0 {
			return false
		}
		pos = p + f[i].gap
	}
	return true
}

// indexIn returns the first window start >= from where the needle matches
// in buf, or -1; unlike needleFinder it keeps no state, for short buffers.
func (nd *needle) indexIn(buf []byte, from int) int {
	for a := from + nd.anchor; a < len(buf); a++ {
		if a = nd.scan.index(buf, a); a < 0 {
			return -1
		}
		if p := a - nd.anchor; nd.matchAt(buf, p) {
			return p
		}
	}
	return -1
}

// index returns the first index >= from of a byte of the set in buf, or -1.
func (cs *classScan) index(buf []byte, from int) int {
	if cs.few == nil {
		return cs.next(buf, from)
	}
	best := -1
	for _, c := range cs.few {
		end := len(buf)
		if best >= 0 {
			end = best
		}
		if from >= end {
			break
		}
		if j := indexByteFrom(buf[:end], c, from); j >= 0 {
			best = j
		}
	}
	return best
}
