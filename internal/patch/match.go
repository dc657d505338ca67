package patch

import (
	"strings"
	"unicode"
	"unsafe"
)

// lines indexes a file's lines without copying them: line i is
// s[start[i]:start[i+1]], its ending included. The ending is "\n", "\r\n"
// or "" (only for a last line without a newline).
type lines struct {
	s     string
	start []int32
}

// splitLines indexes data, which must not change afterwards (the index
// shares its bytes; a file is at most MaxFileBytes, so offsets fit int32).
func splitLines(data []byte) *lines {
	s := ""
	if len(data) > 0 {
		s = unsafe.String(&data[0], len(data))
	}
	n := strings.Count(s, "\n")
	if len(s) > 0 && s[len(s)-1] != '\n' {
		n++
	}
	st := make([]int32, 0, n+1)
	st = append(st, 0)
	for off := 0; off < len(s); {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			off = len(s)
		} else {
			off += i + 1
		}
		st = append(st, int32(off))
	}
	return &lines{s: s, start: st}
}

// n is the number of lines.
func (l *lines) n() int { return len(l.start) - 1 }

// full is line i with its ending.
func (l *lines) full(i int) string { return l.s[l.start[i]:l.start[i+1]] }

// text is line i without its ending.
func (l *lines) text(i int) string {
	t := l.full(i)
	if t, ok := strings.CutSuffix(t, "\n"); ok {
		return strings.TrimSuffix(t, "\r")
	}
	return t
}

// eol is the ending of line i.
func (l *lines) eol(i int) string {
	t := l.full(i)
	switch {
	case strings.HasSuffix(t, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(t, "\n"):
		return "\n"
	}
	return ""
}

// dominantEOL is the line ending new lines get: CRLF if most lines use it.
func (l *lines) dominantEOL() string {
	crlf, lf := 0, 0
	for i := range l.n() {
		switch l.eol(i) {
		case "\r\n":
			crlf++
		case "\n":
			lf++
		}
	}
	if crlf > lf {
		return "\r\n"
	}
	return "\n"
}

// Matching levels, tried in order; the first level with any match decides.
const (
	levelExact = iota
	levelTrailing
	levelTrim
	levelUnicode
	numLevels
)

var levelNames = [numLevels]string{"exactly", "ignoring trailing whitespace", "ignoring indentation", "after normalizing Unicode punctuation"}

func normalize(s string, level int) string {
	switch level {
	case levelTrailing:
		return strings.TrimRightFunc(s, unicode.IsSpace)
	case levelTrim:
		return strings.TrimSpace(s)
	case levelUnicode:
		return strings.TrimSpace(asciiPunct(s))
	}
	return s
}

var punct = strings.NewReplacer(
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-", "\ufe58", "-", "\ufe63", "-", "\uff0d", "-",
	"\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'", "\u2032", "'", "\uff07", "'",
	"\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u201f", `"`, "\u2033", `"`, "\uff02", `"`,
	"\u00a0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200a", " ", "\u202f", " ", "\u205f", " ", "\u3000", " ",
	"\u200b", "", "\ufeff", "",
	"\u2026", "...",
)

// asciiPunct maps Unicode dashes, quotes and spaces to ASCII.
func asciiPunct(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return punct.Replace(s)
		}
	}
	return s
}

// maxMatches caps the places a hunk may match: past it the hunk is
// ambiguous anyway, and the cap bounds the verification work.
const maxMatches = 1000

// target is a file being matched, with its lines normalized and hashed
// lazily per level.
type target struct {
	lines  *lines
	norm   [numLevels][]string
	hashes [numLevels][]uint64
	index  [numLevels]map[uint64][]int // line hash -> line numbers
}

func (t *target) level(lv int) []string {
	if t.norm[lv] == nil {
		n := make([]string, t.lines.n())
		h := make([]uint64, t.lines.n())
		for i := range n {
			n[i] = normalize(t.lines.text(i), lv)
			h[i] = lineHash(n[i])
		}
		idx := make(map[uint64][]int)
		for i, x := range h {
			idx[x] = append(idx[x], i)
		}
		t.norm[lv], t.hashes[lv], t.index[lv] = n, h, idx
	}
	return t.norm[lv]
}

// lineHash is FNV-1a; any decent spread will do, matches are verified.
func lineHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

const rollBase = 0x9E3779B97F4A7C15 // odd multiplier for the rolling hash

// find returns the positions p >= from where pat matches at level lv (at
// most maxMatches of them). A rolling hash over line hashes keeps it linear
// in the file size; every hash hit is verified line by line.
func (t *target) find(pat []string, lv, from int, atEOF bool) []int {
	if lv == levelExact {
		if out, ok := t.findExact(pat, from, atEOF); ok {
			return out
		}
	}
	lines := t.level(lv)
	hs := t.hashes[lv]
	m := len(pat)
	np := make([]string, m)
	var want, pow uint64 = 0, 1
	for i, s := range pat {
		np[i] = normalize(s, lv)
		want = want*rollBase + lineHash(np[i])
		if i > 0 {
			pow *= rollBase
		}
	}
	last := len(lines) - m
	first := max(from, 0)
	if atEOF {
		first = max(first, last)
	}
	if m == 0 || first > last {
		return nil
	}
	// Anchor on the pattern's rarest line when that is cheaper than a scan.
	rare, occ := 0, -1
	for j := range np {
		if n := len(t.index[lv][lineHash(np[j])]); occ < 0 || n < occ {
			rare, occ = j, n
		}
	}
	if occ*m <= len(lines) {
		var out []int
		for _, i := range t.index[lv][lineHash(np[rare])] {
			if p := i - rare; p >= first && p <= last && equalAt(lines, np, p) {
				out = append(out, p)
				if len(out) == maxMatches {
					break
				}
			}
		}
		return out
	}
	var h uint64
	for j := 0; j < m; j++ {
		h = h*rollBase + hs[first+j]
	}
	var out []int
	for p := first; ; p++ {
		if h == want && equalAt(lines, np, p) {
			out = append(out, p)
			if len(out) == maxMatches {
				return out
			}
		}
		if p == last {
			return out
		}
		h = (h-hs[p]*pow)*rollBase + hs[p+m]
	}
}

// findExact is find at the exact level without any index: it scans for the
// pattern's longest line and verifies each hit, returning the same
// positions in the same order. ok is false when the scan would cost more
// than the indexed search (a repetitive file); the caller then indexes.
func (t *target) findExact(pat []string, from int, atEOF bool) (out []int, ok bool) {
	n, m := t.lines.n(), len(pat)
	last := n - m
	first := max(from, 0)
	if atEOF {
		first = max(first, last)
	}
	if m == 0 || first > last {
		return nil, true
	}
	k := 0
	for j := range pat {
		if len(pat[j]) > len(pat[k]) {
			k = j
		}
	}
	budget := 4*n + 1024 // line comparisons allowed
	for p := first; p <= last; p++ {
		if t.lines.text(p+k) != pat[k] {
			continue
		}
		j := 0
		for ; j < m && t.lines.text(p+j) == pat[j]; j++ {
		}
		if budget -= j + 1; budget < 0 {
			return nil, false
		}
		if j == m {
			out = append(out, p)
			if len(out) == maxMatches {
				break
			}
		}
	}
	return out, true
}

func equalAt(lines, pat []string, p int) bool {
	for j := range pat {
		if lines[p+j] != pat[j] {
			return false
		}
	}
	return true
}

// hintMatch reports whether a file line is the scope line a hint names:
// equal after normalizing, or starting with it (git truncates the function
// context it prints after "@@").
func hintMatch(line, hint string) bool {
	l, h := normalize(line, levelUnicode), normalize(hint, levelUnicode)
	return h != "" && (l == h || strings.HasPrefix(l, h))
}

// byHints keeps the candidates that sit under the hunk's scope lines: going
// up from the candidate, the hints are found innermost first, and no other
// candidate lies between the outermost hint found and the candidate.
func (t *target) byHints(cands []int, hints []string) []int {
	if len(hints) == 0 || len(cands) < 2 {
		return cands
	}
	var kept []int
	for ci, c := range cands {
		// Hints above the previous candidate cannot make this one unique,
		// so the upward walk stops there; this keeps the work linear.
		floor := 0
		if ci > 0 {
			floor = cands[ci-1] + 1
		}
		at := c + 1 // the hunk's own first line may be the scope line
		found := true
		for k := len(hints) - 1; k >= 0 && found; k-- {
			found = false
			for at--; at >= floor; at-- {
				if hintMatch(t.lines.text(at), hints[k]) {
					found = true
					break
				}
			}
		}
		if found {
			kept = append(kept, c)
		}
	}
	return kept
}

// reindent adapts the indentation of added lines when the hunk matched only
// after ignoring indentation, if the matched lines show one consistent
// mapping (a constant prefix added or removed, or tabs <-> spaces).
func reindent(h *Hunk, file *lines, pos int) {
	type pair struct{ p, f string }
	var pairs []pair
	j := pos
	for _, l := range h.Lines {
		if l.Kind == '+' {
			continue
		}
		if strings.TrimSpace(l.Text) != "" {
			pairs = append(pairs, pair{indent(l.Text), indent(file.text(j))})
		}
		j++
	}
	if len(pairs) == 0 {
		return
	}
	var mappings []func(string) (string, bool)
	// Constant prefix added by the file.
	if d, ok := strings.CutSuffix(pairs[0].f, pairs[0].p); ok {
		mappings = append(mappings, func(s string) (string, bool) { return d + s, true })
	}
	// Constant prefix the patch has too much.
	if d, ok := strings.CutSuffix(pairs[0].p, pairs[0].f); ok {
		mappings = append(mappings, func(s string) (string, bool) { return strings.CutPrefix(s, d) })
	}
	for _, w := range []int{4, 8, 2} {
		sp := strings.Repeat(" ", w)
		mappings = append(mappings,
			func(s string) (string, bool) { return strings.ReplaceAll(s, "\t", sp), true },
			func(s string) (string, bool) {
				n := strings.Count(s, " ")
				if n%w != 0 || strings.Contains(s, " \t") {
					return "", false
				}
				return strings.Repeat("\t", strings.Count(s, "\t")+n/w), true
			})
	}
	for _, m := range mappings {
		ok := true
		for _, pr := range pairs {
			if got, good := m(pr.p); !good || got != pr.f {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		newLines := make([]Line, len(h.Lines))
		copy(newLines, h.Lines)
		for k, l := range newLines {
			if l.Kind != '+' || strings.TrimSpace(l.Text) == "" {
				continue
			}
			ind := indent(l.Text)
			got, good := m(ind)
			if !good {
				return // cannot map every added line: leave them as written
			}
			newLines[k].Text = got + l.Text[len(ind):]
		}
		h.Lines = newLines
		return
	}
}

func indent(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// nearest finds the region of the file that best resembles pat: the start
// with most lines equal after full normalization, voting by alignment.
// It returns the start and the number of matching lines.
func (t *target) nearest(pat []string) (start, score int) {
	idx := map[string][]int{}
	lines := t.level(levelUnicode)
	for i, l := range lines {
		if l != "" {
			idx[l] = append(idx[l], i)
		}
	}
	votes := map[int]int{}
	for j, s := range pat {
		n := normalize(s, levelUnicode)
		occ := idx[n]
		if n == "" || len(occ) > 50 {
			continue // blank or too common to say anything
		}
		for _, i := range occ {
			votes[i-j]++
		}
	}
	start, score = -1, 0
	for s, v := range votes {
		if v > score || (v == score && s < start) {
			start, score = s, v
		}
	}
	if score > 0 {
		return start, score
	}
	// No line is equal: anchor on the file line most similar to one of the
	// hunk's first lines (a stale view usually differs by a few characters).
	best := 0.0
	for j, s := range pat[:min(len(pat), nearestProbe)] {
		n := normalize(s, levelUnicode)
		if n == "" {
			continue
		}
		for i, l := range lines {
			if sim := similarity(n, l); sim > best {
				best, start = sim, i-j
			}
		}
	}
	if best < minSimilarity {
		return -1, 0
	}
	return start, 0
}

// Tuning of the similarity fallback of nearest.
const (
	nearestProbe  = 5
	minSimilarity = 0.5
)

// similarity is the share of the longer string covered by the common
// prefix and suffix of a and b: cheap, and good at "one token changed".
func similarity(a, b string) float64 {
	if a == "" || b == "" {
		return 0
	}
	n := min(len(a), len(b))
	p := 0
	for p < n && a[p] == b[p] {
		p++
	}
	s := 0
	for s < n-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return float64(p+s) / float64(max(len(a), len(b)))
}
