package tools

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }
func (s *byteSet) count() int {
	return bits.OnesCount64(s[0]) + bits.OnesCount64(s[1]) + bits.OnesCount64(s[2]) + bits.OnesCount64(s[3])
}
func (s *byteSet) union(t *byteSet) {
	s[0], s[1], s[2], s[3] = s[0]|t[0], s[1]|t[1], s[2]|t[2], s[3]|t[3]
}
func (s *byteSet) addRange(lo, hi byte) {
	for c := int(lo); c <= int(hi); c++ {
		s.add(byte(c))
	}
}

// freq estimates how often a byte of the set occurs in source text, in
// occurrences per 100,000 bytes.
func (s *byteSet) freq() int {
	n := 0
	for c := range 256 {
		if s.has(byte(c)) {
			n += int(byteFreq[c])
		}
	}
	return n
}

// bytesOf lists the set's bytes.
func (s *byteSet) bytesOf() []byte {
	var out []byte
	for c := range 256 {
		if s.has(byte(c)) {
			out = append(out, byte(c))
		}
	}
	return out
}

// needle is one byte string or byte-class sequence that every match of a
// query contains (or one of a set of them does). It is found by scanning
// for its anchor, the position whose bytes are rarest in source text, and
// then checking the whole window around it: scanning for a rare byte skips
// far more text per step than scanning for a literal's first letter.
type needle struct {
	lit     []byte    // the literal (lower case when fold); nil for a class sequence
	fold    bool      // lit is matched ignoring ASCII case
	classes []byteSet // the sequence, for class needles
	n       int       // window length in bytes
	anchor  int       // offset of the anchor in the window
	scan    classScan // finds the anchor's bytes
}

// maxNeedleClasses caps the length of a class run needle, and of the
// repeated copies a run is built from; literals are compared whole.
const maxNeedleClasses = 64

// newLitNeedle builds the needle of a literal (lit in lower case when fold).
func newLitNeedle(lit []byte, fold bool) needle {
	nd := needle{lit: lit, fold: fold, n: len(lit)}
	best := -1
	for i, c := range lit {
		var s byteSet
		s.add(c)
		if fold && 'a' <= c && c <= 'z' {
			s.add(c - 'a' + 'A')
		}
		if f := s.freq(); best < 0 || f < best {
			best, nd.anchor, nd.scan = f, i, newClassScan(&s)
		}
	}
	return nd
}

// newClassNeedle builds the needle of a class sequence.
func newClassNeedle(classes []byteSet) needle {
	nd := needle{classes: classes, n: len(classes)}
	best := -1
	for i := range classes {
		if f := classes[i].freq(); best < 0 || f < best {
			best, nd.anchor = f, i
		}
	}
	nd.scan = newClassScan(&classes[nd.anchor])
	return nd
}

// matchAt reports whether the window starting at p matches.
func (nd *needle) matchAt(buf []byte, p int) bool {
	if p < 0 || p+nd.n > len(buf) {
		return false
	}
	w := buf[p : p+nd.n]
	switch {
	case nd.lit == nil:
		for i := range nd.classes {
			if !nd.classes[i].has(w[i]) {
				return false
			}
		}
		return true
	case nd.fold:
		return equalFoldASCII(w, nd.lit)
	default:
		return bytes.Equal(w, nd.lit)
	}
}

// classScan finds the next byte of a set: with bytes.IndexByte for sets of
// up to three bytes, else eight bytes at a time by range arithmetic (SWAR)
// when the set is a few ASCII ranges, else byte by byte.
type classScan struct {
	few    []byte   // the set's bytes, when at most maxFewBytes
	lo, hi []uint64 // per ASCII range: the SWAR addends
	set    byteSet
}

const (
	maxFewBytes   = 3
	maxSWARRanges = 4
	lanes7F       = 0x7f7f7f7f7f7f7f7f
	lanes80       = 0x8080808080808080
	lanes01       = 0x0101010101010101
)

func newClassScan(s *byteSet) classScan {
	cs := classScan{set: *s}
	if s.count() <= maxFewBytes {
		cs.few = s.bytesOf()
		return cs
	}
	if s[2]|s[3] != 0 {
		return cs // non-ASCII bytes: byte by byte
	}
	for c := 0; c < 128; {
		if !s.has(byte(c)) {
			c++
			continue
		}
		lo := c
		for c < 128 && s.has(byte(c)) {
			c++
		}
		hi := c - 1
		// For a lane y in 0..127: y + (0x80-lo) has its high bit set iff
		// y >= lo, and y + (0x7f-hi) iff y > hi; neither carries out.
		cs.lo = append(cs.lo, lanes01*uint64(0x80-lo))
		cs.hi = append(cs.hi, lanes01*uint64(0x7f-hi))
	}
	if len(cs.lo) > maxSWARRanges {
		cs.lo, cs.hi = nil, nil
	}
	return cs
}

// next returns the first index >= from of a byte of the set in buf, or -1.
// It is used only for sets of more than maxFewBytes bytes.
func (cs *classScan) next(buf []byte, from int) int {
	i := from
	if cs.lo != nil {
		for ; i+8 <= len(buf); i += 8 {
			x := binary.LittleEndian.Uint64(buf[i:])
			y := x & lanes7F
			var m uint64
			for k, lo := range cs.lo {
				m |= (y + lo) &^ (y + cs.hi[k])
			}
			if m &^= x; m&lanes80 != 0 {
				return i + bits.TrailingZeros64(m&lanes80)/8
			}
		}
	}
	for ; i < len(buf); i++ {
		if cs.set.has(buf[i]) {
			return i
		}
	}
	return -1
}

// needleFinder finds one needle in one buffer, remembering the next
// occurrence of its anchor bytes so that a needle set, or a two-case
// letter, costs one pass per byte, not one per candidate.
type needleFinder struct {
	buf   []byte
	nd    *needle
	nexts []int // per few byte: next index at or after the last query; -1 none; -2 unknown
	next  int   // next window start at or after the last query; -1 none; -2 unknown
	fails int   // anchor hits that were not matches
	plain bool  // bytes.Index instead: anchor hits mostly failed
}

func newNeedleFinder(buf []byte, nd *needle) needleFinder {
	f := needleFinder{buf: buf, nd: nd, next: -2}
	if len(nd.scan.few) > 1 {
		f.nexts = make([]int, len(nd.scan.few))
		for i := range f.nexts {
			f.nexts[i] = -2
		}
	}
	return f
}

// index returns the first window start >= from where the needle matches,
// or -1.
func (f *needleFinder) index(from int) int {
	if f.next == -1 || f.next >= from {
		return f.next
	}
	nd := f.nd
	if f.plain {
		f.next = -1
		if i := bytes.Index(f.buf[from:], nd.lit); i >= 0 {
			f.next = from + i
		}
		return f.next
	}
	for a := from + nd.anchor; ; a++ {
		a = f.anchorAt(a)
		if a < 0 || a-nd.anchor+nd.n > len(f.buf) {
			f.next = -1
			return -1
		}
		if p := a - nd.anchor; nd.matchAt(f.buf, p) {
			f.next = p
			return p
		}
		// Text made of the literal's own bytes ("aaaa" for "aaab") makes
		// every anchor a near miss: bytes.Index stays linear there.
		if f.fails++; f.fails > 64 && f.fails > a/8 && nd.lit != nil && !nd.fold {
			f.plain = true
			return f.index(from)
		}
	}
}

// anchorAt returns the first index >= from holding an anchor byte, or -1.
func (f *needleFinder) anchorAt(from int) int {
	cs := &f.nd.scan
	switch {
	case len(cs.few) == 1:
		return indexByteFrom(f.buf, cs.few[0], from)
	case cs.few != nil:
		best := -1
		for k, c := range cs.few {
			if f.nexts[k] != -1 && f.nexts[k] < from {
				f.nexts[k] = indexByteFrom(f.buf, c, from)
			}
			if j := f.nexts[k]; j >= 0 && (best < 0 || j < best) {
				best = j
			}
		}
		return best
	default:
		return cs.next(f.buf, from)
	}
}

func indexByteFrom(b []byte, c byte, from int) int {
	if from >= len(b) {
		return -1
	}
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

// byteFreq is how often each byte occurs in source text, per 100,000
// bytes, measured over Go, Python and C sources and rounded; it only ranks
// bytes for the choice of a needle's anchor. Bytes not listed are rare.
var byteFreq = func() [256]uint16 {
	var t [256]uint16
	for c := range t {
		t[c] = 1
		if c >= 0x80 {
			t[c] = 10 // UTF-8 text
		}
	}
	for c, f := range map[byte]uint16{
		' ': 20000, 'e': 5800, 't': 4200, 'n': 3400, 's': 3300, 'r': 3200, 'i': 3100, 'a': 2900, 'o': 2800,
		'\n': 2800, '_': 2400, 'l': 2100, 'c': 2000, 'd': 1800, 'f': 1600, '0': 1500, ',': 1500, '\t': 1500,
		'u': 1400, 'p': 1400, ')': 1100, '(': 1100, 'S': 1100, 'm': 1100, 'h': 1100, 'x': 1100, 'E': 1000,
		'T': 950, '.': 930, 'g': 830, 'I': 770, 'A': 760, '/': 740, 'R': 730, 'L': 720, 'N': 690, 'b': 680,
		'C': 680, 'O': 680, 'y': 660, ':': 650, '*': 640, '1': 630, '"': 600, '=': 570, 'P': 570, 'k': 540,
		'\'': 500, 'v': 490, '-': 480, '2': 470, 'D': 420, 'M': 380, 'w': 370, '#': 370, 'F': 340, '3': 330,
		'4': 310, '6': 290, 'B': 280, '5': 270, '{': 270, 'G': 270, '}': 260, 'U': 260, '8': 260, '9': 230,
		'X': 230, 'V': 230, ';': 210, '\\': 200, 'H': 180, '7': 160, '>': 150, '[': 140, ']': 140, 'K': 130,
		'Y': 120, 'W': 110, '<': 95, 'z': 93, '+': 73, 'q': 70, 'j': 68, '&': 66, '%': 57, '!': 55, '|': 49,
		'Q': 45, 'Z': 36, '`': 30, 'J': 26, '@': 24, '$': 20, '\r': 20, '?': 7, '^': 5, '~': 4,
	} {
		t[c] = f
	}
	return t
}()
