package failure

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"unicode/utf8"
)

// lineReader reads lines from a log, cut to maxLine bytes, with Actions
// timestamps, a leading BOM, ANSI escapes and carriage-return overwrites
// removed and invalid UTF-8 repaired. The returned slice is valid until the
// next call.
//
// It reads the log in chunks of readChunk bytes and finds line ends with
// bytes.IndexByte. Whether a line needs cleaning (holds an ESC, a CR or a
// byte of 0x80 or more) is answered from the position of the next such
// byte in the chunk, found once per chunk and not per line. A line with no
// newline within its first readBuffer bytes keeps its first maxLine bytes
// and the rest is skipped, as a bufio.Reader of readBuffer bytes would.
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int   // unread bytes: buf[start:end]
	err        error // the reader's error (io.EOF at the end), once seen
	base       int64 // how many bytes of the input come before buf[0]
	empty      int   // consecutive empty reads

	// nextEsc, nextCR, nextHigh are the index in buf of the first ESC, CR
	// or non-ASCII byte at or after the index they were looked for from
	// (end when none is buffered); -1 when not looked for since the last
	// read.
	nextEsc, nextCR, nextHigh int
	// nextNeedle is the same for each of quietNeedles.
	nextNeedle [len(quietNeedles)]int

	scratch []byte
	long    []byte
	clean   []byte
	first   bool
}

func newLineReader(r io.Reader) *lineReader {
	return newLineReaderSize(r, readChunk)
}

// newLineReaderSize reads chunks of size bytes (at least readBuffer).
func newLineReaderSize(r io.Reader, size int) *lineReader {
	size = max(size, readBuffer)
	return &lineReader{r: r, first: true, buf: make([]byte, size),
		nextEsc: -1, nextCR: -1, nextHigh: -1, nextNeedle: [len(quietNeedles)]int{-1, -1, -1},
		scratch: make([]byte, 0, maxLine), long: make([]byte, 0, maxLine), clean: make([]byte, 0, maxLine)}
}

// next returns the next cleaned line, or io.EOF.
func (lr *lineReader) next() ([]byte, error) {
	for {
		window := lr.buf[lr.start:min(lr.end, lr.start+readBuffer)]
		if i := bytes.IndexByte(window, '\n'); i >= 0 {
			a := lr.start
			lr.start += i + 1
			return lr.cleanAt(a, a+i), nil
		}
		if len(window) >= readBuffer {
			return lr.longLine()
		}
		if lr.err != nil {
			if lr.start < lr.end {
				// The last line, without a newline.
				a := lr.start
				lr.start = lr.end
				return lr.cleanAt(a, lr.end), nil
			}
			return nil, lr.err
		}
		lr.fill()
	}
}

// offset is where in the input the next line starts (after the last
// line returned, its newline and, for a cut long line, its skipped rest).
func (lr *lineReader) offset() int64 { return lr.base + int64(lr.start) }

// fill reads more of the log after the unread bytes, moved to the front.
func (lr *lineReader) fill() {
	if lr.start > 0 {
		lr.base += int64(lr.start)
		lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start = 0
	}
	lr.nextEsc, lr.nextCR, lr.nextHigh = -1, -1, -1
	for i := range lr.nextNeedle {
		lr.nextNeedle[i] = -1
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	if err != nil {
		lr.err = err
		return
	}
	if n > 0 {
		lr.empty = 0
	} else if lr.empty++; lr.empty >= 100 {
		lr.err = io.ErrNoProgress
	}
}

// longLine keeps the head of a line longer than readBuffer and skips the
// rest of it.
func (lr *lineReader) longLine() ([]byte, error) {
	// (Not in scratch: repairing the line writes there.)
	lr.long = append(lr.long[:0], lr.buf[lr.start:lr.start+maxLine]...)
	lr.start += readBuffer
	for {
		if i := bytes.IndexByte(lr.buf[lr.start:lr.end], '\n'); i >= 0 {
			lr.start += i + 1
			break
		}
		lr.start = lr.end
		if lr.err != nil {
			if !errors.Is(lr.err, io.EOF) {
				return nil, lr.err
			}
			break
		}
		lr.fill()
	}
	line := lr.trim(lr.long)
	esc, cr, high := scanFlags(line)
	return lr.repair(line, esc, cr, high), nil
}

// cleanAt cleans the line buf[a:b] (b at its newline or the end).
func (lr *lineReader) cleanAt(a, b int) []byte {
	line := lr.trim(lr.buf[a:b])
	// line is buf[a:b] cut at both ends; its place in buf from the capacity.
	a = len(lr.buf) - cap(line)
	b = a + len(line)
	esc := nextAt(&lr.nextEsc, lr.buf[:lr.end], a, indexEsc) < b
	cr := nextAt(&lr.nextCR, lr.buf[:lr.end], a, indexCR) < b
	high := nextAt(&lr.nextHigh, lr.buf[:lr.end], a, indexHigh) < b
	return lr.repair(line, esc, cr, high)
}

// nextAt returns the index of the first byte found by index in buf at or
// after a (len(buf) when none), using and updating the cached *pos. The
// cache stays right while a only grows and buf is unchanged.
func nextAt(pos *int, buf []byte, a int, index func([]byte) int) int {
	if *pos >= a {
		return *pos
	}
	if i := index(buf[a:]); i >= 0 {
		*pos = a + i
	} else {
		*pos = len(buf)
	}
	return *pos
}

func indexEsc(b []byte) int { return bytes.IndexByte(b, 0x1b) }
func indexCR(b []byte) int  { return bytes.IndexByte(b, '\r') }

// indexHigh returns the index of the first byte of 0x80 or more, or -1.
// It tests 32 bytes at a time, then 8, from a shrinking slice (whose
// length proves the loads in bounds).
func indexHigh(b []byte) int {
	const tops = 0x8080808080808080
	n := len(b)
	for len(b) >= 32 {
		w := binary.LittleEndian.Uint64(b[0:8]) | binary.LittleEndian.Uint64(b[8:16]) |
			binary.LittleEndian.Uint64(b[16:24]) | binary.LittleEndian.Uint64(b[24:32])
		if w&tops != 0 {
			break
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b[0:8])&tops != 0 {
			break
		}
		b = b[8:]
	}
	for i, c := range b {
		if c >= 0x80 {
			return n - len(b) + i
		}
	}
	return -1
}

// trim cuts the line's CR before the newline, its bytes past maxLine, a
// leading BOM (first line only) and an Actions timestamp; it slices line.
func (lr *lineReader) trim(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > maxLine {
		line = line[:maxLine]
	}
	if lr.first {
		lr.first = false
		line = bytes.TrimPrefix(line, []byte("\uFEFF"))
	}
	return stripTimestamp(line)
}

// repair removes escapes and CR overwrites and repairs invalid UTF-8, as
// the flags (does line hold ESC, CR, non-ASCII bytes) say is needed. It
// may alias line.
func (lr *lineReader) repair(line []byte, esc, cr, high bool) []byte {
	if esc {
		lr.clean = stripANSI(lr.clean[:0], line)
		line = lr.clean
	}
	if !cr {
		// Most lines: no carriage return.
	} else if i := bytes.LastIndexByte(line, '\r'); i >= 0 {
		// Progress output: the terminal shows what follows the last CR.
		if i+1 < len(line) {
			line = line[i+1:]
		} else {
			line = bytes.TrimRight(line, "\r")
		}
	}
	if high && !utf8.Valid(line) {
		lr.scratch = repairUTF8(lr.scratch[:0], line)
		line = lr.scratch
	}
	return line
}
