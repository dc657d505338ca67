package failure

import "bytes"

// The quiet path: most of a large `go test -v` log is packages that
// passed (=== RUN, --- PASS, t.Log lines, ok  pkg), and feeding each of
// their lines to every recognizer costs far more than finding the lines.
// A passing package changes nothing that outlives it: goText's state after
// its "ok  \tpkg" line is the same whatever the package printed, as long as
// nothing in it started a failure, a panic, a race or a build report, and
// the other recognizers ignore its lines while they hold no report open.
// So, when every recognizer is at rest (rester) and no generic excerpt is
// being kept, the line reader looks ahead over whole lines with a cheap
// test per line (quietLine) and a search per buffer for the few substrings
// that matter anywhere in a line (quietNeedles), up to the last "ok  \t"
// line before anything that could matter, and those packages are skipped:
// goText is then reset as their last line would have reset it. Anything
// else (a line that could start a report, an escape sequence, a carriage
// return inside a line, an over-long line) ends the look-ahead, and the
// lines after the last skipped package are read the ordinary way.
//
// The result is the same as with every line fed (TestQuietSame,
// FuzzQuiet): the tests are written against the recognizers' code, so a
// recognizer that starts to act on a line quietLine calls harmless must
// update quietLine (or its rest).

// rester is a recognizer that can say it holds nothing a quiet line could
// change: at rest, a line quietLine accepts and that holds no quietNeedle
// is a no-op for it (goText: its state is reset by the package line).
type rester interface {
	rest() bool
}

// quietNeedles are the substrings that matter wherever they are in a
// line: pytest's " FAILED"/" ERROR" (-v result lines), FAILURES/ERRORS
// banners, go's, jest's and vitest's FAIL lines, tsc's "error TS".
var quietNeedles = [...]string{"FAIL", "ERROR", "error TS"}

// quietLine reports whether a line (raw: the reader's cleaning would only
// remove a timestamp or a final carriage return, see skipQuiet) is one
// the recognizers at rest ignore, and whether it is a package's "ok"
// line, after which goText is at rest again. It looks at the first byte
// and the first byte after leading spaces, where every recognizer's
// trigger is, except the substrings of quietNeedles, searched separately.
func quietLine(line []byte) (harmless, pkgOK bool) {
	if len(line) == 0 {
		return true, false
	}
	switch c := line[0]; c {
	case '=':
		// === RUN/PAUSE/CONT/NAME: goText's state, reset by the package
		// line. pytest: only a banner ("==== title ====") can change it.
		return line[len(line)-1] != '=', false
	case '-':
		// --- PASS/SKIP: goText's. cargo: "---- name ----" opens a block.
		// (--- FAIL holds a needle.)
		return line[len(line)-1] != '-', false
	case 'o':
		return true, bytes.HasPrefix(line, []byte("ok  \t"))
	case ' ':
		i := 1
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i == len(line) {
			return true, false
		}
		return quietIndented(line[i:]), false
	case 'p':
		return !bytes.HasPrefix(line, []byte("panic: ")), false
	case 'W':
		return !bytes.HasPrefix(line, []byte("WARNING: DATA RACE")), false
	case '#':
		// goText's "# pkg" (build output), the runner's ##[ commands,
		// TAP's "# Subtest:".
		return false, false
	case 'e':
		return !bytes.HasPrefix(line, []byte("error")), false
	case '{':
		return !bytes.Contains(line, []byte(`"Action":"`)), false
	case 'f':
		return !bytes.Equal(line, []byte("failures:")), false
	case 'R', 'D', 'n', 0xe2:
		return quietIndented(line), false
	default:
		if isDigit(c) {
			if t := stripTimestamp(line); len(t) != len(line) {
				// The reader removes the timestamp: what follows is the line.
				return quietLine(t)
			}
		}
		return true, false
	}
}

// quietIndented tests a line's text after its leading spaces, where
// cargo, jest, vitest and node's reporters look (FAIL lines hold a
// needle).
func quietIndented(t []byte) bool {
	switch t[0] {
	case 'R':
		return !bytes.HasPrefix(t, []byte("Running "))
	case 'D':
		return !bytes.HasPrefix(t, []byte("Doc-tests "))
	case '#':
		return false
	case 'n':
		return !bytes.HasPrefix(t, []byte("not ok "))
	case 0xe2:
		// ● (jest), ▶ and ✖ (node's spec reporter); ✔ and ℹ end no report
		// at rest.
		return !bytes.HasPrefix(t, []byte("● ")) && !bytes.HasPrefix(t, []byte("▶ ")) &&
			!bytes.HasPrefix(t, []byte("✖"))
	}
	return true
}

// skipQuiet moves past the whole quiet packages that start at the next
// line (see the comment at the top of this file) and reports whether it
// did. The caller must know every recognizer to be at rest, and must then
// reset goText as the last skipped "ok" line would have.
func (lr *lineReader) skipQuiet() bool {
	if lr.first {
		return false // (the first line may start with a BOM)
	}
	if lr.end-lr.start < readBuffer && lr.err == nil {
		lr.fill()
	}
	buf := lr.buf[:lr.end]
	// The first needle after start: no line from there on can be skipped.
	stop := lr.end
	for i := range quietNeedles {
		stop = min(stop, nextAt(&lr.nextNeedle[i], buf, lr.start, quietIndex[i]))
	}
	committed := lr.start
	for p := lr.start; p < stop; {
		nl := bytes.IndexByte(buf[p:stop], '\n')
		if nl < 0 {
			break
		}
		e := p + nl
		line := buf[p:e]
		if nextAt(&lr.nextEsc, buf, p, indexEsc) < e || e-p > maxLine {
			// The reader would remove escapes (which can join what they
			// separate), or cut the line (quietLine looks at its end).
			break
		}
		if cr := nextAt(&lr.nextCR, buf, p, indexCR); cr < e {
			if cr != e-1 {
				break // a carriage return inside the line: progress output
			}
			line = line[:len(line)-1] // the reader's trim removes it
		}
		harmless, ok := quietLine(line)
		if !harmless {
			break
		}
		p = e + 1
		if ok {
			committed = p
		}
	}
	if committed == lr.start {
		return false
	}
	lr.start = committed
	return true
}

// quietIndex finds quietNeedles[i] (an index function per needle, for nextAt).
var quietIndex = [len(quietNeedles)]func([]byte) int{
	func(b []byte) int { return bytes.Index(b, []byte(quietNeedles[0])) },
	func(b []byte) int { return bytes.Index(b, []byte(quietNeedles[1])) },
	indexErrorTS,
}

// indexErrorTS is bytes.Index(b, "error TS"), by way of " TS": the
// standard search looks for the first byte and then the second, and "er"
// is everywhere in a log; " TS" is rare, and a space so common that the
// search soon switches to comparing whole blocks.
func indexErrorTS(b []byte) int {
	const pre = len("error")
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte(" TS"))
		if i < 0 {
			return -1
		}
		i += off
		if i >= pre && string(b[i-pre:i]) == "error" {
			return i - pre
		}
		off = i + 1
	}
}

// rest reports whether goText holds nothing that a quiet package could
// change: no failure, race or build error pending, no panic, race or
// build report, no example output being read.
func (g *goText) rest() bool {
	return g.mode == goNormal && g.example == nil && len(g.fails) == 0 && len(g.races) == 0 && g.build == nil
}

// quietReset is what the "ok  \t" line that ends a quiet package does to
// goText (pkgLine with nothing pending).
func (g *goText) quietReset() { g.flush("") }

func (j *goJSON) rest() bool { return true } // (acts only on lines with "Action":")

func (p *pytest) rest() bool { return !p.inBlock && p.section == pyNone }

func (j *jest) rest() bool { return !j.block.active }

func (v *vitest) rest() bool { return !v.block.active && len(v.merged) == 0 }

func (n *nodeTAP) rest() bool { return !n.inDiag && !n.pending }

func (n *nodeSpec) rest() bool { return n.cur == nil && !n.skipping && !n.inSummary }

func (c *cargo) rest() bool {
	return c.state == cargoNone && c.cur == nil && len(c.failed) == 0 && len(c.blocks) == 0
}

func (r *rustc) rest() bool { return r.pending == "" }

func (t *typescript) rest() bool { return t.last == nil }

// quietStep is the part of a step the quiet path needs: its recognizers'
// rest, and its goText to reset.
type quietStep struct {
	resters []rester
	goText  *goText
}

func newQuietStep(recs []recognizer) quietStep {
	var q quietStep
	for _, r := range recs {
		rs, ok := r.(rester)
		if !ok {
			// A recognizer that cannot say: never skip.
			return quietStep{}
		}
		q.resters = append(q.resters, rs)
		if g, ok := r.(*goText); ok {
			q.goText = g
		}
	}
	if q.goText == nil {
		return quietStep{}
	}
	return q
}

// rest reports whether every recognizer is at rest.
func (q *quietStep) rest() bool {
	if q.goText == nil {
		return false
	}
	for _, r := range q.resters {
		if !r.rest() {
			return false
		}
	}
	return true
}
