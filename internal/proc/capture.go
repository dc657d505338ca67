package proc

import (
	"bytes"
	"fmt"
	"sync"
)

// HeadTail is an io.Writer that keeps at most the first headMax and the last
// tailMax bytes written to it, whatever the total, and counts what it drops.
// A 10 MB output costs no more memory than a 2 MB one. It is safe for
// concurrent use.
type HeadTail struct {
	mu      sync.Mutex
	headMax int
	tailMax int
	head    []byte
	ring    []byte // allocated when the head is full; len == tailMax
	rpos    int    // next write position in ring
	rlen    int    // bytes held in ring
	total   int64
	lines   int64
}

// headInitialCap bounds the first allocation so small outputs stay small.
const headInitialCap = 64 << 10

// NewHeadTail returns a writer keeping at most headMax bytes of head and
// tailMax bytes of tail. Negative limits count as zero.
func NewHeadTail(headMax, tailMax int) *HeadTail {
	return &HeadTail{headMax: max(headMax, 0), tailMax: max(tailMax, 0)}
}

// Write records p. It never fails, so a child's pipe is always drained.
func (h *HeadTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	h.total += int64(n)
	h.lines += int64(bytes.Count(p, []byte{'\n'}))
	if room := h.headMax - len(h.head); room > 0 {
		k := min(room, len(p))
		if need := len(h.head) + k; need > cap(h.head) {
			// Grow by hand so the head never holds more than headMax bytes of capacity.
			grown := make([]byte, len(h.head), min(h.headMax, max(2*cap(h.head), need, headInitialCap)))
			copy(grown, h.head)
			h.head = grown
		}
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || h.tailMax == 0 {
		return n, nil
	}
	if h.ring == nil {
		h.ring = make([]byte, h.tailMax)
	}
	if len(p) >= h.tailMax {
		copy(h.ring, p[len(p)-h.tailMax:])
		h.rpos, h.rlen = 0, h.tailMax
		return n, nil
	}
	k := copy(h.ring[h.rpos:], p)
	copy(h.ring, p[k:])
	h.rpos = (h.rpos + len(p)) % h.tailMax
	h.rlen = min(h.rlen+len(p), h.tailMax)
	return n, nil
}

// Capture returns a snapshot of what is kept and what was dropped.
func (h *HeadTail) Capture() Capture {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := Capture{TotalBytes: h.total, TotalLines: h.lines}
	c.Head = bytes.Clone(h.head)
	if h.rlen > 0 {
		c.Tail = make([]byte, 0, h.rlen)
		if h.rlen < h.tailMax {
			c.Tail = append(c.Tail, h.ring[:h.rlen]...)
		} else {
			c.Tail = append(append(c.Tail, h.ring[h.rpos:]...), h.ring[:h.rpos]...)
		}
	}
	c.fill()
	return c
}

// Capture is a bounded view of a stream: its first bytes (Head), its last
// bytes (Tail) and how much lies between them. When nothing was omitted,
// Head followed by Tail is the whole stream. Line counts are newline counts.
type Capture struct {
	Head         []byte
	Tail         []byte
	TotalBytes   int64
	TotalLines   int64
	OmittedBytes int64
	OmittedLines int64
}

func (c *Capture) fill() {
	c.OmittedBytes = c.TotalBytes - int64(len(c.Head)) - int64(len(c.Tail))
	c.OmittedLines = c.TotalLines - countLines(c.Head) - countLines(c.Tail)
}

// Truncated reports whether part of the stream is missing from the view.
func (c Capture) Truncated() bool { return c.OmittedBytes > 0 }

// HeadLines is the number of complete lines in Head; when Head ends with a
// newline, line HeadLines+1 of the stream is the first one not shown.
func (c Capture) HeadLines() int64 { return countLines(c.Head) }

// Bytes returns Head and Tail joined; when something was omitted between
// them, a newline keeps the last head line and first tail line apart.
func (c Capture) Bytes() []byte {
	out := make([]byte, 0, len(c.Head)+len(c.Tail)+1)
	out = append(out, c.Head...)
	if c.Truncated() && len(c.Head) > 0 && c.Head[len(c.Head)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, c.Tail...)
}

// String renders Head, an "... N lines omitted ..." marker when something
// was dropped, and Tail.
func (c Capture) String() string {
	if !c.Truncated() {
		return string(c.Head) + string(c.Tail)
	}
	var b bytes.Buffer
	b.Grow(len(c.Head) + len(c.Tail) + 80)
	b.Write(c.Head)
	if len(c.Head) > 0 && c.Head[len(c.Head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "... %d lines omitted (%d bytes) ...\n", c.OmittedLines, c.OmittedBytes)
	b.Write(c.Tail)
	return b.String()
}

// Trim returns a smaller view keeping at most headMax bytes of head and
// tailMax bytes of tail, cut at line boundaries where a boundary lies in the
// second half of the kept part (a single huge line is cut mid-line).
// Omitted counts are updated to match.
func (c Capture) Trim(headMax, tailMax int) Capture {
	headMax, tailMax = max(headMax, 0), max(tailMax, 0)
	head, tail := c.Head, c.Tail
	out := Capture{TotalBytes: c.TotalBytes, TotalLines: c.TotalLines}
	if !c.Truncated() {
		all := c.Bytes()
		if len(all) <= headMax+tailMax {
			out.Head = all
			out.fill()
			return out
		}
		out.Head = alignHead(all[:headMax])
		start := len(all) - tailMax
		out.Tail = alignTail(all[start:], start > 0 && all[start-1] == '\n')
		out.fill()
		return out
	}
	out.Head = alignHead(head[:min(headMax, len(head))])
	if len(tail) > tailMax {
		start := len(tail) - tailMax
		out.Tail = alignTail(tail[start:], tail[start-1] == '\n')
	} else {
		// The byte before the kept tail was dropped: it may end a line or not.
		out.Tail = alignTail(tail, false)
	}
	out.fill()
	return out
}

// alignHead cuts b after its last newline when that keeps at least half of it.
func alignHead(b []byte) []byte {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 && i+1 >= len(b)/2 {
		return b[:i+1]
	}
	return b
}

// alignTail drops a partial first line when that keeps at least half of b.
func alignTail(b []byte, startsLine bool) []byte {
	if startsLine {
		return b
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i+1 <= len(b)/2 {
		return b[i+1:]
	}
	return b
}

func countLines(b []byte) int64 { return int64(bytes.Count(b, []byte{'\n'})) }
