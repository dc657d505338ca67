package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/org/mini-agent/agent"
)

// Rendering of a read_file window: the file streamed, its lines numbered and cut,
// the rest counted.

// renderFile streams f and renders the window. Memory stays bounded by the
// answer size whatever the file size; the whole file is still scanned to
// report the total line count.
func renderFile(ctx context.Context, f *os.File, name string, w lineWindow, limit int64) (agent.Result, error) {
	br := bufio.NewReaderSize(io.LimitReader(f, limit+1), readBufferBytes)
	head, err := br.Peek(binarySniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return agent.Result{}, fmt.Errorf("read_file %s: %w", name, err)
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return agent.ErrorResult(agent.CodeInvalidArgument, fmt.Sprintf("%q looks like a binary file (it contains NUL bytes); read_file shows text only", name), false), nil
	}

	width := max(4, len(strconv.Itoa(w.end)))
	var (
		out       strings.Builder
		keep      = make([]byte, 0, readMaxLineBytes+utf8.UTFMax)
		lineNo    int
		last      int  // last line shown
		boundCut  bool // the answer limit stopped the window early
		readBytes int64
	)
	for {
		if lineNo%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return agent.Result{}, err
			}
		}
		if lineNo >= w.end || boundCut {
			rest, err := countLines(ctx, br)
			if err != nil {
				return agent.Result{}, fmt.Errorf("read_file %s: %w", name, err)
			}
			lineNo += rest.lines
			readBytes += rest.bytes
			break
		}
		show := lineNo+1 >= w.start
		line, n, nl, err := readLine(br, keep, show)
		if err != nil {
			return agent.Result{}, fmt.Errorf("read_file %s: %w", name, err)
		}
		if n == 0 {
			break
		}
		readBytes += int64(n)
		lineNo++
		if !show {
			continue
		}
		full := n
		if nl {
			full--
		}
		text := formatLine(line, full)
		if out.Len()+width+1+len(text)+1 > readMaxAnswerBytes-readTrailerReserve {
			boundCut = true
			continue
		}
		fmt.Fprintf(&out, "%*d\t%s\n", width, lineNo, text)
		last = lineNo
	}
	if readBytes > limit {
		return agent.ErrorResult(agent.CodeInvalidArgument, fmt.Sprintf("%q is over the %s read_file limit; use search to find the lines you need",
			name, byteSize(limit)), false), nil
	}
	total := lineNo
	if total == 0 {
		if w.start > 1 {
			return agent.ErrorResult(agent.CodeInvalidArgument, fmt.Sprintf("%q is empty; start_line %d does not exist", name, w.start), true), nil
		}
		return agent.Result{Text: "(empty file)"}, nil
	}
	if w.start > total {
		return agent.ErrorResult(agent.CodeInvalidArgument, fmt.Sprintf("start_line %d is past the end of %q, which has %d lines; ask for start_line=%d end_line=%d",
			w.start, name, total, max(1, total-readDefaultLines+1), total), true), nil
	}
	if w.start == 1 && last == total {
		return agent.Result{Text: out.String()}, nil
	}
	fmt.Fprintf(&out, "[lines %d-%d of %d", w.start, last, total)
	if last < total {
		next := last + 1
		fmt.Fprintf(&out, "; next: start_line=%d end_line=%d", next, min(total, next+readDefaultLines-1))
	} else {
		out.WriteString("; end of file")
	}
	switch {
	case boundCut:
		fmt.Fprintf(&out, "; stopped at the %s answer limit", byteSize(readMaxAnswerBytes))
	case w.clamped && last < total:
		fmt.Fprintf(&out, "; at most %d lines per call", readMaxLines)
	}
	out.WriteString("]\n")
	return agent.Result{Text: out.String()}, nil
}

// readLine reads one line. When keep is true the first bytes of the line
// (enough for readMaxLineBytes) are returned in buf's storage; n is the
// line's full length including its newline (nl), 0 at end of input.
func readLine(br *bufio.Reader, buf []byte, keep bool) (line []byte, n int, nl bool, err error) {
	line = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if keep {
			if room := cap(buf) - len(line); room > 0 {
				line = append(line, chunk[:min(room, len(chunk))]...)
			}
		}
		switch {
		case err == nil:
			return line, n, true, nil
		case errors.Is(err, io.EOF):
			return line, n, false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, 0, false, err
		}
	}
}

// lineCount is what countLines found.
type lineCount struct {
	lines int
	bytes int64
}

// countLines counts the remaining lines of br (a last line without a
// newline counts).
func countLines(ctx context.Context, br *bufio.Reader) (lineCount, error) {
	var c lineCount
	buf := make([]byte, readBufferBytes)
	var lastByte byte = '\n'
	for {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		n, err := br.Read(buf)
		if n > 0 {
			c.lines += bytes.Count(buf[:n], []byte{'\n'})
			c.bytes += int64(n)
			lastByte = buf[n-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c, err
		}
	}
	if lastByte != '\n' {
		c.lines++
	}
	return c, nil
}

// formatLine renders one kept line: newline and CR dropped, cut at
// readMaxLineBytes on a rune boundary with a marker giving the full length,
// invalid UTF-8 replaced.
func formatLine(line []byte, full int) string {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	cut := false
	if len(line) > readMaxLineBytes {
		i := readMaxLineBytes
		for i > 0 && !utf8.RuneStart(line[i]) {
			i--
		}
		line = line[:i]
		cut = true
	}
	s := string(line)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if cut {
		s += fmt.Sprintf(" [... line cut: %d bytes in all]", full)
	}
	return s
}

// byteSize formats n for humans: "12.5 MiB", "40 KiB", "512 B".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return strings.TrimSuffix(strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64), ".0") + " MiB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	default:
		return strconv.FormatInt(n, 10) + " B"
	}
}
