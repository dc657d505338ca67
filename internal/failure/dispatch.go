package failure

import (
	"math/bits"
	"strings"
)

// trigger is what a recognizer declares about the lines it can act on
// while it is idle (holds no report open): a line reaches an idle
// recognizer only when its first byte is in lead, its first byte after
// leading spaces is in first, or it contains one of has. Any other line
// would be a no-op for it, so the per-line prefilter skips the call.
type trigger struct {
	lead  string
	first string
	has   []string
}

// gated is a recognizer with a trigger. idle reports that it holds no
// state in which a line outside its trigger could matter.
type gated interface {
	recognizer
	trigger() trigger
	idle() bool
}

// skipper is a gated recognizer that still takes note of the lines the
// prefilter kept from it (cheaply, without parsing them).
type skipper interface {
	skipped(s string)
}

// dispatcher sends each line to the recognizers that could want it.
type dispatcher struct {
	recs    []recognizer
	lead    [256]uint16 // recognizers triggered by the line's first byte
	first   [256]uint16 // ... by the first byte after leading spaces
	always  uint16      // recognizers without a trigger
	busy    uint16      // gated recognizers that are not idle
	has     []hasGroup
	skips   []skipTarget
	gates   []gated // per recognizer, nil when not gated
	hasMask uint16  // recognizers with substring triggers
}

// hasGroup is the substring triggers that share an anchor byte: one
// search for the anchor serves them all.
type hasGroup struct {
	anchor byte
	subs   []anchoredSub
	mask   uint16 // the recognizers of subs
}

// anchoredSub is a substring trigger whose byte at is its group's anchor.
type anchoredSub struct {
	sub string
	at  int
	bit uint16
}

type skipTarget struct {
	bit uint16
	s   skipper
}

func newDispatcher(recs []recognizer) *dispatcher {
	if len(recs) > 16 {
		panic("failure: more than 16 recognizers")
	}
	d := &dispatcher{recs: recs, gates: make([]gated, len(recs))}
	var all []string // every substring trigger, to choose anchors
	for _, r := range recs {
		if g, ok := r.(gated); ok {
			all = append(all, g.trigger().has...)
		}
	}
	for i, r := range recs {
		bit := uint16(1) << i
		g, ok := r.(gated)
		if !ok {
			d.always |= bit
			continue
		}
		d.gates[i] = g
		t := g.trigger()
		for j := 0; j < len(t.lead); j++ {
			d.lead[t.lead[j]] |= bit
		}
		for j := 0; j < len(t.first); j++ {
			d.first[t.first[j]] |= bit
		}
		for _, h := range t.has {
			d.addHas(h, bit, all)
			d.hasMask |= bit
		}
		if sk, ok := r.(skipper); ok {
			d.skips = append(d.skips, skipTarget{bit, sk})
		}
		if !g.idle() {
			d.busy |= bit
		}
	}
	return d
}

// line sends s to every recognizer that could want it, in their order.
func (d *dispatcher) line(s string) {
	m := d.always | d.busy
	if len(s) > 0 {
		m |= d.lead[s[0]]
		fb := s[0]
		if fb == ' ' {
			i := 1
			for i < len(s) && s[i] == ' ' {
				i++
			}
			fb = 0
			if i < len(s) {
				fb = s[i]
			}
		}
		m |= d.first[fb]
		if rest := d.hasMask &^ m; rest != 0 {
			for i := range d.has {
				if g := &d.has[i]; rest&g.mask != 0 {
					got := g.match(s, rest)
					m |= got
					rest &^= got
				}
			}
		}
	}
	for _, sk := range d.skips {
		if m&sk.bit == 0 {
			sk.s.skipped(s)
		}
	}
	for m != 0 {
		i := bits.TrailingZeros16(m)
		bit := uint16(1) << i
		m &^= bit
		d.recs[i].line(s)
		if g := d.gates[i]; g != nil {
			if g.idle() {
				d.busy &^= bit
			} else {
				d.busy |= bit
			}
		}
	}
}

// addHas adds the substring trigger sub of the recognizer bit to the
// group of its anchor: the byte of sub most likely to be rare in a log
// line (an upper-case letter before any other byte), held by the most of
// all the triggers (so that one search serves them), else its last such
// byte.
func (d *dispatcher) addHas(sub string, bit uint16, all []string) {
	if sub == "" {
		panic("failure: empty substring trigger")
	}
	best, bestScore := 0, -1
	for i := 0; i < len(sub); i++ {
		score := 0
		for _, o := range all {
			if strings.IndexByte(o, sub[i]) >= 0 {
				score++
			}
		}
		if sub[i] >= 'A' && sub[i] <= 'Z' {
			score += 1 << 16
		}
		if score >= bestScore {
			best, bestScore = i, score
		}
	}
	anchor := sub[best]
	a := anchoredSub{sub: sub, at: strings.IndexByte(sub, anchor), bit: bit}
	for i := range d.has {
		if g := &d.has[i]; g.anchor == anchor {
			g.subs = append(g.subs, a)
			g.mask |= bit
			return
		}
	}
	d.has = append(d.has, hasGroup{anchor: anchor, subs: []anchoredSub{a}, mask: bit})
}

// match returns the bits, among want, of the recognizers with a trigger
// of the group that s contains (strings.Contains of each), looking for
// the anchor with a vectorised search and comparing the triggers where
// the anchor would be in them.
func (g *hasGroup) match(s string, want uint16) uint16 {
	want &= g.mask
	var got uint16
	for i := 0; i < len(s); i++ {
		j := strings.IndexByte(s[i:], g.anchor)
		if j < 0 {
			break
		}
		i += j
		for _, a := range g.subs {
			if start := i - a.at; want&^got&a.bit != 0 && start >= 0 && len(s)-start >= len(a.sub) &&
				s[start:start+len(a.sub)] == a.sub {
				got |= a.bit
			}
		}
		if got == want {
			break
		}
	}
	return got
}

func (d *dispatcher) finish() {
	for _, r := range d.recs {
		r.finish()
	}
}
