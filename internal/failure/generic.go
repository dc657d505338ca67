package failure

import (
	"fmt"
	"strings"
)

const (
	// genTail is how many last lines of the step the generic excerpt keeps.
	genTail = 30
	// genBefore and genAfter are the context lines around an error line.
	genBefore = 3
	genAfter  = 3
	// genFirst and genLast are how many windows are kept from the start
	// and from the end of the step.
	genFirst = 3
	genLast  = 5
	// genWindowLines bounds one window.
	genWindowLines = 20
	// genLineBytes bounds one line kept by the generic excerpt.
	genLineBytes = 512
)

// genericRec keeps windows around error-looking lines and the tail of a
// step, for when no recognizer understood the output. Its buffers are
// reused from window to window: a long log allocates nothing per line.
type genericRec struct {
	budget int
	ring   [genTail][]byte
	n      int // lines seen
	cur    lines
	open   bool // a window is open (in cur)
	after  int
	start  int // line index where the open window starts
	first  []genWindow
	last   [genLast]genWindow
	nLast  int
}

// genWindow is the text around error lines, from line index start.
type genWindow struct {
	start int
	text  []byte
}

func newGeneric(budget int) *genericRec {
	return &genericRec{budget: budget, cur: newLines(genWindowLines, genWindowLines*genLineBytes)}
}

func (g *genericRec) line(s string, errorLine bool) {
	if len(s) > genLineBytes {
		s = s[:genLineBytes]
	}
	isErr := errorLine || looksLikeError(s)
	if g.open {
		g.cur.add(s)
		if isErr {
			g.after = genAfter
		} else if g.after--; g.after <= 0 {
			g.closeWindow()
		}
	} else if isErr {
		g.cur.clear()
		g.open = true
		g.start = max(0, g.n-genBefore)
		for i := g.start; i < g.n; i++ {
			g.cur.add(view(g.ring[i%genTail]))
		}
		g.cur.add(s)
		g.after = genAfter
	}
	slot := &g.ring[g.n%genTail]
	*slot = append((*slot)[:0], s...)
	g.n++
}

func (g *genericRec) closeWindow() {
	g.open = false
	text := g.cur.trimmed()
	if len(g.first) < genFirst {
		g.first = append(g.first, genWindow{start: g.start, text: append([]byte(nil), text...)})
		return
	}
	w := &g.last[g.nLast%genLast]
	w.start, w.text = g.start, append(w.text[:0], text...)
	g.nLast++
}

// text renders the windows and the tail within the budget ("" when the
// step printed nothing).
func (g *genericRec) text() string {
	if g.n == 0 {
		return ""
	}
	if g.open {
		g.closeWindow()
	}
	tail := min(g.n, genTail)
	tailStart := g.n - tail
	var b strings.Builder
	for _, w := range g.first {
		if w.start < tailStart { // windows inside the tail are shown there
			b.Write(w.text)
			b.WriteString("\n…\n")
		}
	}
	if g.nLast > genLast {
		fmt.Fprintf(&b, "(%d more error windows omitted)\n…\n", g.nLast-genLast)
	}
	for i := max(0, g.nLast-genLast); i < g.nLast; i++ {
		if w := g.last[i%genLast]; w.start < tailStart {
			b.Write(w.text)
			b.WriteString("\n…\n")
		}
	}
	if b.Len() > 0 {
		fmt.Fprintf(&b, "--- last %d lines ---\n", tail)
	}
	for i := tailStart; i < g.n; i++ {
		b.Write(g.ring[i%genTail])
		b.WriteByte('\n')
	}
	out := b.String()
	if limit := g.budget * 3 / 4; len(out) > limit {
		// Keep the first windows and the tail; cut the middle.
		head := clip(out, limit/2)
		out = head + "\n" + out[len(out)-limit/2:]
		out = strings.ToValidUTF8(out, "")
	}
	return strings.TrimRight(out, "\n")
}

// errorWords are the words that make a line look like an error.
var errorWords = []string{"error", "fail", "fatal", "panic", "exception", "traceback", "abort",
	"denied", "not found", "cannot ", "unable to", "timed out", "segmentation fault", "killed"}

// errorWordsBy indexes errorWords by their first letter.
var errorWordsBy = func() (t [256][]string) {
	for _, w := range errorWords {
		t[w[0]] = append(t[w[0]], w)
	}
	return t
}()

// errorTrigrams is the set of trigram keys (see trigramKey) at offsets
// 0, 1 and 2 of each error word, a byte past the word's end standing for
// any byte. looksLikeError looks at every third position j (2, 5, 8...):
// wherever a word starts, at i, one of i+2, i+3, i+4 is such a j, and the
// trigram ending there is in the set.
var errorTrigrams = func() (set [1 << 9]uint64) {
	for _, w := range errorWords {
		for k := 0; k < 3; k++ {
			for c := 0; c < 32; c++ {
				third := byte(c)
				if k+2 < len(w) {
					third = w[k+2]
				}
				h := trigramKey(w[k], w[k+1], third)
				set[h>>6] |= 1 << (h & 63)
				if k+2 < len(w) {
					break
				}
			}
		}
	}
	return set
}()

// trigramKey is the low five bits of each byte: equal for a letter in
// either case (and for some other bytes, which only cost a comparison).
func trigramKey(a, b, c byte) uint32 {
	return uint32(a&31) | uint32(b&31)<<5 | uint32(c&31)<<10
}

// looksLikeError reports whether s contains an error word, ignoring case
// (a byte matches a word's letter when byte|0x20 equals it). It looks at
// every third position only: the trigram ending there must be in
// errorTrigrams before a word is compared at the three starts it allows.
// (The trigrams are taken two at a time, from s[off:off+6], with the
// bounds checks proved away; trigram n ends at index 3n+2.)
func looksLikeError(s string) bool {
	t, off := s, 0
	for ; len(t) >= 6; off += 6 {
		h1 := trigramKey(t[0], t[1], t[2])
		h2 := trigramKey(t[3], t[4], t[5])
		t = t[6:]
		m1 := errorTrigrams[h1>>6] & (1 << (h1 & 63))
		m2 := errorTrigrams[h2>>6] & (1 << (h2 & 63))
		if m1|m2 == 0 {
			continue
		}
		if m1 != 0 && errorWordNear(s, off) || m2 != 0 && errorWordNear(s, off+3) {
			return true
		}
	}
	if len(t) >= 3 {
		if h := trigramKey(t[0], t[1], t[2]); errorTrigrams[h>>6]&(1<<(h&63)) != 0 && errorWordNear(s, off) {
			return true
		}
	}
	// A four-byte word ending the line starts at len(s)-4, whose i+4 is
	// past the end: no trigram covers it.
	return len(s) >= 4 && errorWordAt(s, len(s)-4)
}

// errorWordNear reports whether an error word starts at s[i], s[i-1] or
// s[i-2]: the starts whose word the trigram s[i:i+3] can be part of.
func errorWordNear(s string, i int) bool {
	return errorWordAt(s, i) || i >= 1 && errorWordAt(s, i-1) || i >= 2 && errorWordAt(s, i-2)
}

// errorWordAt reports whether an error word starts at s[i].
func errorWordAt(s string, i int) bool {
	for _, w := range errorWordsBy[s[i]|0x20] {
		if hasFoldPrefix(s[i:], w) {
			return true
		}
	}
	return false
}

func hasFoldPrefix(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if s[i]|0x20 != prefix[i] && s[i] != prefix[i] {
			return false
		}
	}
	return true
}
