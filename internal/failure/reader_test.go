package failure

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// refLineReader is the line reader as it was before it read chunks (a
// bufio.Reader of readBuffer bytes, one ReadSlice per line, flags scanned
// per line): the reference the chunked lineReader must match exactly.
// (It reads lines from a log, cut to maxLine bytes, with Actions
// timestamps, a leading BOM, ANSI escapes and carriage-return overwrites
// removed and invalid UTF-8 repaired. The returned slice is valid until the
// next call.)
type refLineReader struct {
	r       *bufio.Reader
	scratch []byte
	long    []byte
	clean   []byte
	first   bool
	read    int64
}

func newRefLineReader(r *bufio.Reader) *refLineReader {
	return &refLineReader{r: r, first: true,
		scratch: make([]byte, 0, maxLine), long: make([]byte, 0, maxLine), clean: make([]byte, 0, maxLine)}
}

// next returns the next cleaned line, or io.EOF.
func (lr *refLineReader) next() ([]byte, error) {
	line, err := lr.r.ReadSlice('\n')
	lr.read += int64(len(line))
	if errors.Is(err, bufio.ErrBufferFull) {
		// A very long line: keep its head, skip the rest.
		// (Not in scratch: repairing the line writes there.)
		lr.long = append(lr.long[:0], line[:maxLine]...)
		line = lr.long
		for errors.Is(err, bufio.ErrBufferFull) {
			var more []byte
			more, err = lr.r.ReadSlice('\n')
			lr.read += int64(len(more))
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(line) == 0 && err != nil {
		return nil, io.EOF
	}
	return lr.cleanLine(line), nil
}

// cleanLine strips framing and repairs the line; it may alias line.
func (lr *refLineReader) cleanLine(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
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
	line = stripTimestamp(line)
	esc, cr, high := scanFlags(line)
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

// readAll returns every line of next, then the error that ended them.
func readAll(next func() ([]byte, error)) ([]string, error) {
	var got []string
	for {
		b, err := next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return got, err
		}
		got = append(got, string(b))
	}
}

// checkSameLines reads in with the reference reader and with lineReader
// over several read patterns and chunk sizes, and reports any difference.
func checkSameLines(t *testing.T, in []byte) {
	t.Helper()
	want, err := readAll(newRefLineReader(bufio.NewReaderSize(bytes.NewReader(in), readBuffer)).next)
	if err != nil {
		t.Fatal(err)
	}
	readers := []struct {
		name string
		r    func() io.Reader
	}{
		{"whole", func() io.Reader { return bytes.NewReader(in) }},
		{"halves", func() io.Reader { return iotest.HalfReader(bytes.NewReader(in)) }},
		{"data+EOF", func() io.Reader { return iotest.DataErrReader(bytes.NewReader(in)) }},
	}
	if len(in) < 20000 {
		readers = append(readers, struct {
			name string
			r    func() io.Reader
		}{"bytes", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(in)) }})
	}
	for _, rd := range readers {
		for _, size := range []int{readChunk, readBuffer, readBuffer + 4099} {
			lr := newLineReaderSize(rd.r(), size)
			var offsets []int64
			got, err := readAll(func() ([]byte, error) {
				b, err := lr.next()
				if err == nil {
					offsets = append(offsets, lr.offset())
				}
				return b, err
			})
			if err != nil {
				t.Fatalf("%s/%d: %v", rd.name, size, err)
			}
			if d := offsetDiff(offsets, in); d != "" {
				t.Fatalf("%s/%d: %s", rd.name, size, d)
			}
			if d := lineDiff(got, want); d != "" {
				t.Fatalf("%s/%d: %s", rd.name, size, d)
			}
		}
	}
}

// offsetDiff checks that the reader's offset after each line is just
// past the line's newline in the input (its end, for a last line without
// one).
func offsetDiff(got []int64, in []byte) string {
	var want []int64
	for i, c := range in {
		if c == '\n' {
			want = append(want, int64(i+1))
		}
	}
	if len(in) > 0 && in[len(in)-1] != '\n' {
		want = append(want, int64(len(in)))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Sprintf("offsets %v, want %v", clip(fmt.Sprint(got), 300), clip(fmt.Sprint(want), 300))
	}
	return ""
}

func lineDiff(got, want []string) string {
	for i := 0; i < min(len(got), len(want)); i++ {
		if got[i] != want[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i, clip(got[i], 200), clip(want[i], 200))
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d lines, want %d", len(got), len(want))
	}
	return ""
}

// TestLineReaderMatchesBufio: the chunked reader gives the lines of the
// per-line bufio reader, around the long-line cut, chunk boundaries and
// bytes that need cleaning.
func TestLineReaderMatchesBufio(t *testing.T) {
	t.Parallel()
	var cases [][]byte
	for _, n := range []int{maxLine - 1, maxLine, maxLine + 1, readBuffer - 2, readBuffer - 1, readBuffer, readBuffer + 1, 3*readBuffer + 5} {
		for _, end := range []string{"\n", "\r\n", "\r\r\n", ""} {
			body := strings.Repeat("ab\x1b[31mc\xffé\rd", n/12+1)[:n]
			cases = append(cases,
				[]byte(body+end+"next\n"),
				[]byte("\uFEFF2024-05-01T12:34:56.1234567Z "+body+end+"x\ny"),
				[]byte("a\n"+body+end))
			cr := []byte(strings.Repeat("x", n))
			for _, i := range []int{maxLine - 2, maxLine - 1, maxLine, 100} {
				if i < len(cr) {
					cr[i] = '\r'
				}
			}
			cases = append(cases, append(cr, end...))
		}
	}
	// Generated job logs and the corpus, across many chunk boundaries.
	path := t.TempDir() + "/job.log"
	writeBenchLog(t, path, 600<<10, recognizedPieces...)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, b)
	files, err := filepath.Glob("testdata/corpus/*")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	cases = append(cases, all)
	for i, in := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkSameLines(t, in) })
	}
}

// TestLineReaderError: a read error ends the lines with that error, also
// in the middle of a long line.
func TestLineReaderError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	for _, in := range []string{"a\nb\nc", strings.Repeat("x", 2*readBuffer)} {
		r := io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom))
		if _, err := readAll(newLineReader(r).next); !errors.Is(err, boom) {
			t.Errorf("%d bytes: error %v, want boom", len(in), err)
		}
	}
}

// FuzzLineReader compares the chunked reader with the reference reader on
// arbitrary input, with an optional run of n bytes inserted at at (for
// lines near and past readBuffer) and the input repeated to cross chunks.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("2024-05-01T12:34:56.1234567Z \x1b[31mFAIL\x1b[0m x\r\nok\n"), uint32(3), uint32(0), byte('x'), uint8(1))
	f.Add([]byte("\uFEFFa\rb\n\xff\xfe\n"), uint32(1), uint32(readBuffer), byte('\r'), uint8(3))
	f.Add([]byte("x\n"), uint32(0), uint32(readBuffer-1), byte(0x1b), uint8(40))
	f.Fuzz(func(t *testing.T, data []byte, at, n uint32, fill byte, reps uint8) {
		if n %= 3 * readBuffer; n > 0 {
			at %= uint32(len(data) + 1)
			run := bytes.Repeat([]byte{fill}, int(n))
			data = append(append(append([]byte(nil), data[:at]...), run...), data[at:]...)
		}
		// At most 8 repeats: an input stays well under the fuzzer's 10 s hang
		// limit on a loaded machine, and still spans several read buffers.
		data = bytes.Repeat(data, int(reps%8)+1)
		checkSameLines(t, data)
	})
}

// BenchmarkLineReader reads a generated 16 MB job log from memory with
// the chunked reader and with the reference reader.
func BenchmarkLineReader(b *testing.B) {
	path := b.TempDir() + "/job.log"
	writeBenchLog(b, path, 16<<20, recognizedPieces...)
	in, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, next func(r io.Reader) func() ([]byte, error)) {
		b.SetBytes(int64(len(in)))
		start := cpuTime()
		defer func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }()
		for i := 0; i < b.N; i++ {
			nx := next(bytes.NewReader(in))
			for {
				if _, err := nx(); err != nil {
					break
				}
			}
		}
	}
	b.Run("chunked", func(b *testing.B) {
		run(b, func(r io.Reader) func() ([]byte, error) { return newLineReader(r).next })
	})
	b.Run("bufio", func(b *testing.B) {
		run(b, func(r io.Reader) func() ([]byte, error) {
			return newRefLineReader(bufio.NewReaderSize(r, readBuffer)).next
		})
	})
}

// BenchmarkExtractMemory extracts a generated 16 MB job log from memory
// (no file reads), reporting the CPU time per extraction.
func BenchmarkExtractMemory(b *testing.B) {
	path := b.TempDir() + "/job.log"
	writeBenchLog(b, path, 16<<20, recognizedPieces...)
	in, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		fc, err := Extract(bytes.NewReader(in), Options{})
		if err != nil || fc.Empty() {
			b.Fatal(err, fc)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// TestRunNameOutlivesLine: the test named by a coloured "=== RUN" line
// (cleaned into a buffer that the next coloured line reuses) still owns
// the log lines that follow it.
func TestRunNameOutlivesLine(t *testing.T) {
	t.Parallel()
	in := "\x1b[1m=== RUN   TestAlpha\x1b[0m\n" +
		"\x1b[2mnoise noise noise noise\x1b[0m\n" +
		"    alpha_test.go:12: got 1, want 2\n" +
		"--- FAIL: TestAlpha (0.00s)\n" +
		"FAIL\texample.com/alpha\t0.01s\n"
	fc := extractString(t, in)
	if len(fc.Failures) != 1 {
		t.Fatalf("failures %+v", fc.Failures)
	}
	f := fc.Failures[0]
	if f.ID != "TestAlpha" || f.Location != "alpha_test.go:12" || f.Message != "got 1, want 2" {
		t.Errorf("failure %+v", f)
	}
}

// TestTAPKeyOutlivesLine: a TAP diagnostic key read from a coloured line
// (cleaned into a reused buffer) still finds its block on later lines.
func TestTAPKeyOutlivesLine(t *testing.T) {
	t.Parallel()
	in := "TAP version 13\n" +
		"not ok 1 - subtracts\n" +
		"  ---\n" +
		"  \x1b[0mlocation: '/w/calc.test.js:10:3'\x1b[0m\n" +
		"  \x1b[0merror: |-\x1b[0m\n" +
		"    \x1b[31mExpected values to be strictly equal\x1b[0m\n" +
		"    \x1b[31m-2 !== 2\x1b[0m\n" +
		"  ...\n" +
		"1..1\n"
	fc := extractString(t, in)
	if len(fc.Failures) != 1 {
		t.Fatalf("failures %+v", fc.Failures)
	}
	if f := fc.Failures[0]; !strings.Contains(f.Message, "-2 !== 2") {
		t.Errorf("failure %+v", f)
	}
}

// refStripANSI is stripANSI as it was, byte by byte: it appends b
// without its escape sequences (CSI, OSC, two-byte).
func refStripANSI(dst, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != 0x1b {
			dst = append(dst, c)
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case '[': // CSI: parameters and intermediates, then a final byte.
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
		case ']': // OSC: up to BEL or ST.
			j := i + 2
			for j < len(b) && b[j] != 0x07 && !(b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\') {
				j++
			}
			if j < len(b) && b[j] == 0x1b {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return dst
}

// FuzzStripANSI compares stripANSI with the byte-by-byte reference.
func FuzzStripANSI(f *testing.F) {
	for _, s := range []string{"\x1b[1m\x1b[31mFAIL\x1b[39m\x1b[22m x", "a\x1b]8;;http://x\x07link\x1b]8;;\x1b\\b",
		"\x1b", "x\x1b[", "\x1b]unterminated", "\x1bcz\x1b\x1b[0m"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, want := stripANSI([]byte("p"), b), refStripANSI([]byte("p"), b)
		if !bytes.Equal(got, want) {
			t.Fatalf("stripANSI(%q) = %q, want %q", b, got, want)
		}
	})
}
