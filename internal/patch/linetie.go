package patch

import "fmt"

// The line-number tie-break. A hunk is located by its content; when that
// content occurs at several places (after the hints of its "@@" lines
// had their say), the line number of its header ("@@ -120,7 ...") may
// settle it, as git apply uses it: the hunk goes to the place nearest that
// line, but only when the choice is not a guess:
//
//   - the header gives a line number (not 0; the envelope's bare "@@" and
//     "@@ scope" lines give none);
//   - every place was found (not cut at maxMatches);
//   - the nearest place is at most lineTieMaxDrift lines from the stated
//     line (further, the number is stale or invented, and says nothing);
//   - every other place is at least twice as far from it (two places at
//     about the same distance, equidistant ones included, are a guess).
//
// Otherwise the hunk stays refused as ambiguous, and the message says why
// the line number did not settle it.

// lineTieMaxDrift is how many lines the place a hunk's header points to
// may be from the line it states: the drift that edits above it, or a
// header computed against a slightly older file, account for.
const lineTieMaxDrift = 100

// byLine returns the place among cands (ascending, 0-based) that the
// header's old line number oldStart (1-based, 0 when absent) designates,
// or -1 with the reason it designates none.
func byLine(cands []int, oldStart int64) (int, string) {
	if oldStart <= 0 {
		return -1, "its header gives no line number to choose by"
	}
	if len(cands) >= maxMatches {
		return -1, "too many places to choose by line number"
	}
	stated := int(min(oldStart, int64(1)<<40)) - 1
	dist := func(p int) int {
		if p > stated {
			return p - stated
		}
		return stated - p
	}
	best, second := -1, -1 // indexes into cands of the nearest two
	for i, c := range cands {
		switch {
		case best < 0 || dist(c) < dist(cands[best]):
			best, second = i, best
		case second < 0 || dist(c) < dist(cands[second]):
			second = i
		}
	}
	d1 := dist(cands[best])
	switch {
	case d1 > lineTieMaxDrift:
		return -1, fmt.Sprintf("its header says line %d, and the nearest place is %d lines from it", oldStart, d1)
	case second >= 0 && dist(cands[second]) < 2*d1:
		return -1, fmt.Sprintf("its header says line %d, about as near to line %d as to line %d", oldStart,
			cands[best]+1, cands[second]+1)
	}
	return cands[best], ""
}
