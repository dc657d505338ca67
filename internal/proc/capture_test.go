package proc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// naive is the reference: the whole stream, cut the obvious way.
func naive(all []byte, headMax, tailMax int) (head, tail []byte) {
	if len(all) <= headMax {
		return all, nil
	}
	head = all[:headMax]
	rest := all[headMax:]
	if len(rest) > tailMax {
		rest = rest[len(rest)-tailMax:]
	}
	return head, rest
}

func TestHeadTailMatchesReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		headMax, tailMax := rng.IntN(40), rng.IntN(40)
		var all []byte
		h := NewHeadTail(headMax, tailMax)
		for range rng.IntN(12) {
			chunk := make([]byte, rng.IntN(30))
			for j := range chunk {
				chunk[j] = "ab\n"[rng.IntN(3)]
			}
			all = append(all, chunk...)
			if n, err := h.Write(chunk); n != len(chunk) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		c := h.Capture()
		wantHead, wantTail := naive(all, headMax, tailMax)
		if !bytes.Equal(c.Head, wantHead) || !bytes.Equal(c.Tail, wantTail) {
			t.Fatalf("case %d (head %d, tail %d, %q): got head %q tail %q, want %q %q",
				i, headMax, tailMax, all, c.Head, c.Tail, wantHead, wantTail)
		}
		omitted := len(all) - len(wantHead) - len(wantTail)
		omittedLines := bytes.Count(all[len(wantHead):len(all)-len(wantTail)], []byte{'\n'})
		if c.TotalBytes != int64(len(all)) || c.OmittedBytes != int64(omitted) || c.OmittedLines != int64(omittedLines) {
			t.Fatalf("case %d: counts %+v, want total %d omitted %d lines %d", i, c, len(all), omitted, omittedLines)
		}
		if !c.Truncated() && string(c.Bytes()) != string(all) {
			t.Fatalf("case %d: untruncated Bytes %q != %q", i, c.Bytes(), all)
		}
	}
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %03d\n", i) // 9 bytes a line
	}
	return b.String()
}

func TestCaptureTrimAlignsToLines(t *testing.T) {
	t.Parallel()
	all := numbered(100) // 900 bytes
	tests := []struct {
		name               string
		headMax, tailMax   int // HeadTail limits
		trimHead, trimTail int
		wantHead, wantTail string
		wantOmittedLines   int64
	}{
		{"fits", 1000, 1000, 2000, 2000, all, "", 0},
		{"untruncated, trimmed", 1000, 1000, 30, 30, numbered(3), strings.TrimPrefix(numbered(100), numbered(97)), 94},
		{"truncated mid-line", 95, 95, 50, 50, numbered(5), strings.TrimPrefix(numbered(100), numbered(95)), 90},
		{"trim keeps all of a truncated capture", 95, 95, 1000, 1000, numbered(10), strings.TrimPrefix(numbered(100), numbered(90)), 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := NewHeadTail(tt.headMax, tt.tailMax)
			h.Write([]byte(all))
			c := h.Capture().Trim(tt.trimHead, tt.trimTail)
			if string(c.Head) != tt.wantHead || string(c.Tail) != tt.wantTail {
				t.Fatalf("head %q tail %q\nwant %q %q", c.Head, c.Tail, tt.wantHead, tt.wantTail)
			}
			if c.OmittedLines != tt.wantOmittedLines || c.TotalLines != 100 || c.TotalBytes != 900 {
				t.Fatalf("counts %+v", c)
			}
			s := c.String()
			if tt.wantOmittedLines > 0 {
				marker := fmt.Sprintf("... %d lines omitted (%d bytes) ...\n", tt.wantOmittedLines, c.OmittedBytes)
				if s != tt.wantHead+marker+tt.wantTail {
					t.Fatalf("String = %q", s)
				}
				if c.HeadLines()+1 != int64(strings.Count(tt.wantHead, "\n")+1) {
					t.Fatalf("HeadLines = %d", c.HeadLines())
				}
			} else if s != all {
				t.Fatalf("String = %q", s)
			}
		})
	}
}

func TestCaptureTrimHugeLine(t *testing.T) {
	t.Parallel()
	h := NewHeadTail(1000, 1000)
	h.Write(bytes.Repeat([]byte("x"), 5000))
	c := h.Capture().Trim(100, 100)
	if len(c.Head) != 100 || len(c.Tail) != 100 || c.OmittedBytes != 4800 {
		t.Fatalf("single line not hard-cut: head %d tail %d omitted %d", len(c.Head), len(c.Tail), c.OmittedBytes)
	}
}
