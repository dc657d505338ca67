package failure

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

const (
	// readBuffer is the longest line read whole; longer lines are cut to
	// maxLine (their head is kept, the rest skipped).
	readBuffer = 64 << 10
	// readChunk is how much of the log the line reader reads at once
	// (1 MiB measured no faster; this keeps the live heap near what it was).
	readChunk = 256 << 10
	// maxCommand bounds the remembered script of the failed step.
	maxCommand = 1024
	// maxCommandLines bounds the lines of the remembered script.
	maxCommandLines = 20
)

// scanFlags reports, in one pass of eight bytes at a time, whether b
// holds an ESC (0x1b), a CR, and a byte of 0x80 or more (not ASCII).
func scanFlags(b []byte) (esc, cr, high bool) {
	const (
		ones = 0x0101010101010101
		tops = 0x8080808080808080
		e8   = 0x1b * ones
		c8   = 0x0d * ones
	)
	var he, hc, hh uint64
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		x, y := w^e8, w^c8
		he |= (x - ones) &^ x
		hc |= (y - ones) &^ y
		hh |= w
		b = b[8:]
	}
	// (v - ones) &^ v has a top bit set exactly when v has a zero byte
	// (without one no byte borrows, and b-1 >= 0x80 implies b >= 0x80).
	return scanFlagsSlow(b, he&tops != 0, hc&tops != 0, hh&tops != 0)
}

func scanFlagsSlow(b []byte, esc, cr, high bool) (bool, bool, bool) {
	for _, c := range b {
		switch {
		case c == 0x1b:
			esc = true
		case c == '\r':
			cr = true
		case c >= 0x80:
			high = true
		}
	}
	return esc, cr, high
}

// stripTimestamp removes an Actions "2024-05-01T12:34:56.1234567Z " prefix.
func stripTimestamp(b []byte) []byte {
	const stamp = len("2024-05-01T12:34:56")
	if len(b) < stamp+1 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' ||
		!isDigit(b[0]) || !isDigit(b[3]) || !isDigit(b[18]) {
		return b
	}
	i := stamp
	if len(b) > 28 && b[19] == '.' && b[27] == 'Z' && isDigit(b[20]) && isDigit(b[21]) && isDigit(b[22]) &&
		isDigit(b[23]) && isDigit(b[24]) && isDigit(b[25]) && isDigit(b[26]) {
		// The runner's own layout, seven fractional digits: what the loop
		// below reads, without it.
		i = 27
	} else if b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i >= len(b) || b[i] != 'Z' {
		return b
	}
	i++
	if i < len(b) && b[i] == ' ' {
		i++
	}
	return b[i:]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// stripANSI appends b without its escape sequences (CSI, OSC, two-byte),
// copying the runs between escapes whole.
func stripANSI(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, 0x1b)
		if i < 0 {
			return append(dst, b...)
		}
		dst = append(dst, b[:i]...)
		b = b[i:]
		if len(b) < 2 {
			return dst
		}
		j := 2 // the end of the sequence, b[:j+1] skipped
		switch b[1] {
		case '[': // CSI: parameters and intermediates, then a final byte.
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
		case ']': // OSC: up to BEL or ST.
			for j < len(b) && b[j] != 0x07 && !(b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\') {
				j++
			}
			if j < len(b) && b[j] == 0x1b {
				j++
			}
		default:
			j = 1
		}
		b = b[min(j+1, len(b)):]
	}
}

// repairUTF8 appends b with each invalid byte replaced by U+FFFD.
func repairUTF8(dst, b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, b[:n]...)
		}
		b = b[n:]
	}
	return dst
}

// view is a zero-copy string over a line buffer; see recognizer.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// step is one Actions step (or the whole input when it has no framing).
type step struct {
	name     string
	header   bool
	cmdDone  bool
	cmd      lines
	exitCode int
	exited   bool
	failed   bool
	col      *collector
	recs     *dispatcher
	gen      *genericRec
	start    int64 // where its first line starts in the input
	// later: the recognizers do not read the step now (see deferred).
	later bool
	// genLater: no generic excerpt is kept now; the step is read again
	// for it if the result needs it (see deferred).
	genLater bool
	q        quietStep
}

func newStep(name string, budget int, proj *project) *step {
	col := newCollector(proj)
	recs := newRecognizers(col)
	st := &step{name: name, col: col, recs: newDispatcher(recs), gen: newGeneric(budget),
		cmd: newLines(maxCommandLines, maxCommand), q: newQuietStep(recs)}
	if g := st.q.goText; g != nil {
		g.pkgSeen = true // (try the quiet path from the step's start)
	}
	return st
}

// segmenter splits a log into steps and keeps what failed.
type segmenter struct {
	opt     Options
	proj    *project
	cur     *step
	failed  *collector
	other   *collector
	meta    *step
	generic string
	otherG  string
	nFailed int

	// later, when set, keeps no generic excerpt while reading: it notes
	// where the steps are, to read again the one step whose excerpt the
	// result may need (see deferred).
	later *deferred
	// lineStart and lineEnd are where the line being fed starts and where
	// the next one starts, in the input.
	lineStart, lineEnd int64
	noGeneric          bool // no generic excerpt is kept
	perLine            bool // every line is fed (no quiet path; see Options.perLine)
	// excerptOnly feeds the lines to the generic excerpt only: the input
	// is known to hold nothing any recognizer finds (see deferred.read).
	excerptOnly bool
}

func extractLines(br io.Reader, opt Options) (*FailureContext, error) {
	s, err := scan(br, opt, newProject(opt.Workspace), nil, true, false)
	if err != nil {
		return nil, err
	}
	return s.result()
}

// scan feeds every line of r to a new segmenter (later: see segmenter);
// first says r starts the input (its BOM is dropped); noGeneric keeps no
// generic excerpt (the result then has none).
func scan(r io.Reader, opt Options, proj *project, later *deferred, first, noGeneric bool) (*segmenter, error) {
	s := &segmenter{opt: opt, proj: proj, failed: newCollector(proj), other: newCollector(proj), later: later,
		noGeneric: noGeneric, perLine: opt.perLine, excerptOnly: opt.excerptOnly}
	s.cur = newStep("", budgetOf(opt), proj)
	// With later, the first step's excerpt is deferred like the others'
	// (it is read again only when the result needs it).
	s.cur.genLater = later != nil
	lr := newLineReader(r)
	lr.first = first
	for {
		if g := s.cur.q.goText; g != nil && g.pkgSeen {
			g.pkgSeen = false
			if s.quietReady() && lr.skipQuiet() {
				g.quietReset()
			}
		}
		s.lineStart = lr.offset()
		b, err := lr.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		s.lineEnd = lr.offset()
		s.feed(view(b))
	}
	s.endStep(lr.offset())
	return s, nil
}

func (s *segmenter) feed(line string) {
	st := s.cur
	errorLine := false
	if strings.HasPrefix(line, "##[") {
		cmd, rest, ok := strings.Cut(line[3:], "]")
		if ok {
			switch cmd {
			case "group":
				if strings.HasPrefix(rest, "Run ") {
					s.endStep(s.lineStart)
					s.cur = newStep(keep(rest), budgetOf(s.opt), s.proj)
					s.cur.header = true
					s.cur.start = s.lineStart
					s.cur.later = s.later != nil
					return
				}
			case "endgroup":
				st.header = false
				return
			case "error":
				if code, ok := exitLine(rest); ok {
					st.exitCode, st.exited, st.failed = code, true, true
					s.endStep(s.lineEnd)
					s.cur = newStep("", budgetOf(s.opt), s.proj)
					s.cur.start = s.lineEnd
					s.cur.later = s.later != nil
					return
				}
				st.failed = true
				errorLine = true
			}
			line = rest
		}
	}
	if st.header {
		s.headerLine(line)
		return
	}
	if st.later {
		return
	}
	if s.excerptOnly {
		st.gen.line(line, errorLine)
		return
	}
	st.recs.line(line)
	if s.genActive() {
		st.gen.line(line, errorLine)
	}
}

// genActive reports whether the current step's lines go to its generic
// excerpt. Once something is recognized the generic excerpt is never
// used; nor is any later step's once a failed step gave its excerpt.
func (s *segmenter) genActive() bool {
	st := s.cur
	return !s.noGeneric && !st.genLater && st.col.empty() && (s.nFailed == 0 || s.generic == "")
}

// quietReady reports whether the lines ahead may take the quiet path (see
// quiet.go): the current step's recognizers read them, at rest, and no
// generic excerpt is being kept.
func (s *segmenter) quietReady() bool {
	st := s.cur
	return !s.perLine && !st.header && !st.later && !s.genActive() && st.q.rest()
}

// headerLine collects the script lines of a "Run" group, which come
// before the shell:, env: and with: lines.
func (s *segmenter) headerLine(line string) {
	st := s.cur
	if st.cmdDone {
		return
	}
	if strings.HasPrefix(line, "shell: ") || line == "env:" || line == "with:" {
		st.cmdDone = true
		return
	}
	st.cmd.add(line)
}

// exitLine parses "Process completed with exit code N.".
func exitLine(s string) (int, bool) {
	rest, ok := strings.CutPrefix(s, "Process completed with exit code ")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSuffix(rest, "."))
	return n, err == nil
}

// endStep finishes the current step, which ends at end in the input, and
// keeps its findings.
func (s *segmenter) endStep(end int64) {
	st := s.cur
	if !st.later {
		st.recs.finish()
	}
	if s.later != nil {
		ls := laterStep{stepSpan: stepSpan{start: st.start, end: end}, failed: st.failed, later: st.later}
		if !st.later && !st.genLater {
			ls.read, ls.text = true, st.gen.text()
		}
		s.later.step(ls)
	}
	if st.failed {
		s.nFailed++
		s.failed.merge(st.col) // (empty for a step read later)
		if s.meta == nil || (!s.meta.exited && st.exited) {
			s.meta = st
		}
		if s.generic == "" && s.later == nil {
			s.generic = st.gen.text()
		}
		return
	}
	s.other.merge(st.col) // (empty for a step read later)
	if s.later != nil {
		return
	}
	if g := st.gen.text(); g != "" {
		s.otherG = g
	}
}

// result is what the segmenter found. With later set, a generic excerpt
// the result needs is read again from the input; errRescan says that
// the steps noted do not tell which (the input must be read again whole,
// without later).
func (s *segmenter) result() (*FailureContext, error) {
	if s.later != nil {
		// The failed steps' findings, then (when they are used) the
		// others', merged in the order of the steps as one reading would.
		if err := s.later.merge(s.failed, true); err != nil {
			return nil, err
		}
		if s.nFailed == 0 || s.failed.empty() && s.meta != nil && !s.meta.exited {
			if err := s.later.merge(s.other, false); err != nil {
				return nil, err
			}
		}
	}
	col, generic := s.failed, s.generic
	fromOther := s.nFailed == 0 || (col.empty() && !s.other.empty() && s.meta != nil && !s.meta.exited)
	if fromOther {
		// No step is marked failed (raw output, or a log cut short): use
		// whatever was recognized anywhere.
		col, generic = s.other, s.otherG
	}
	if col.empty() && s.later != nil {
		// (Here fromOther means that no step failed.)
		g, err := s.later.generic(!fromOther)
		if err != nil {
			return nil, err
		}
		generic = g
	}
	fc := &FailureContext{
		Failures:    col.failures,
		BuildErrors: col.builds,
		Omitted:     col.omitted,
		Source:      strings.Join(col.sources, ","),
		Budget:      budgetOf(s.opt),
	}
	if m := s.meta; m != nil {
		fc.Command = m.cmd.String()
		fc.ExitCode = m.exitCode
		fc.Step = m.name
	}
	if col.empty() {
		fc.Generic = generic
		if generic != "" {
			fc.Source = "generic"
		}
	}
	newNormalizer(s.opt.Workspace).apply(fc)
	return fc, nil
}

// merge adds o's findings to c.
func (c *collector) merge(o *collector) {
	for _, f := range o.failures {
		c.addFailure("", f)
	}
	for _, b := range o.builds {
		c.addBuild("", b)
	}
	c.omitted += o.omitted
	for _, src := range o.sources {
		c.source(src)
	}
}
