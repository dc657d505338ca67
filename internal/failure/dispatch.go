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
	has     []hasTrigger
	skips   []skipTarget
	gates   []gated // per recognizer, nil when not gated
	hasMask uint16  // recognizers with substring triggers
}

type hasTrigger struct {
	sub string // looked for by its last byte (see containsEnding)
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
			d.has = append(d.has, hasTrigger{h, bit})
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
			for _, h := range d.has {
				if rest&h.bit != 0 && containsEnding(s, h.sub) {
					m |= h.bit
					rest &^= h.bit
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

// containsEnding is strings.Contains(s, sub) for a sub whose last byte is
// rare: it looks for that byte (vectorised) and compares sub where it
// would end there.
func containsEnding(s, sub string) bool {
	n := len(sub) - 1
	if n < 0 {
		return true
	}
	key := sub[n]
	for i := n; i < len(s); i++ {
		j := strings.IndexByte(s[i:], key)
		if j < 0 {
			return false
		}
		i += j
		if s[i-n:i+1] == sub {
			return true
		}
	}
	return false
}

func (d *dispatcher) finish() {
	for _, r := range d.recs {
		r.finish()
	}
}
