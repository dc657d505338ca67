package patch

// The patched file's bytes: a result is a list of segments, runs of old
// lines kept whole and single new or changed lines, so an edit of a large
// file copies what it keeps once. Line endings and a byte order mark are
// kept the way the old file had them.

import "strings"

// seg is a piece of the result: n old lines kept as they are, from old
// line src on, or (src < 0) one new or changed line b, with its ending.
type seg struct {
	src, n int
	b      string
}

// assemble writes the result's bytes: kept runs are copied whole.
func assemble(old *lines, out []seg) []byte {
	size := 0
	for _, sg := range out {
		if sg.src >= 0 {
			size += int(old.start[sg.src+sg.n] - old.start[sg.src])
		} else {
			size += len(sg.b)
		}
	}
	b := make([]byte, 0, size)
	for _, sg := range out {
		if sg.src >= 0 {
			b = append(b, old.s[old.start[sg.src]:old.start[sg.src+sg.n]]...)
		} else {
			b = append(b, sg.b...)
		}
	}
	return b
}

// segLines counts the lines of out.
func segLines(out []seg) int {
	n := 0
	for _, sg := range out {
		n += sg.count()
	}
	return n
}

func (sg seg) count() int {
	if sg.src < 0 {
		return 1
	}
	return sg.n
}

// lineAt returns result line k's bytes and whether it is a kept old line.
func lineAt(old *lines, out []seg, k int) (string, bool) {
	for _, sg := range out {
		if c := sg.count(); k >= c {
			k -= c
			continue
		}
		if sg.src < 0 {
			return sg.b, false
		}
		return old.full(sg.src + k), true
	}
	return "", false
}

// setLine replaces result line k with the changed line b, splitting the
// kept run that holds it.
func setLine(out []seg, k int, b string) []seg {
	for i, sg := range out {
		if c := sg.count(); k >= c {
			k -= c
			continue
		}
		if sg.src < 0 {
			out[i].b = b
			return out
		}
		var rep []seg
		if k > 0 {
			rep = append(rep, seg{src: sg.src, n: k})
		}
		rep = append(rep, seg{src: -1, b: b})
		if k+1 < sg.n {
			rep = append(rep, seg{src: sg.src + k + 1, n: sg.n - k - 1})
		}
		return append(out[:i], append(rep, out[i+1:]...)...)
	}
	return out
}

// removeLast drops the result's last line.
func removeLast(out []seg) []seg {
	last := &out[len(out)-1]
	if last.src >= 0 && last.n > 1 {
		last.n--
		return out
	}
	return out[:len(out)-1]
}

// build applies sorted, disjoint edits to the old lines. Untouched lines
// keep their bytes. In a file with mixed line endings a line that replaces
// another keeps that line's ending, and an added line takes its neighbour's
// (the line before it, else the line after it, else the file's dominant
// ending), so a CRLF file stays CRLF and an LF line in it stays LF.
func build(old *lines, edits []edit) []seg {
	eol := ""
	var out []seg
	prev := "" // the last line written
	c := 0
	keep := func(to int) {
		if to > c {
			out = append(out, seg{src: c, n: to - c})
			prev = old.full(to - 1)
		}
		c = max(c, to)
	}
	for _, e := range edits {
		keep(e.at)
		for k, s := range e.ins {
			end := ""
			if k < e.del {
				end = old.eol(e.at + k)
			}
			if end == "" && prev != "" {
				end = ending(prev)
			}
			if end == "" && e.at+e.del < old.n() {
				end = old.eol(e.at + e.del)
			}
			if end == "" {
				if eol == "" {
					eol = old.dominantEOL()
				}
				end = eol
			}
			out = append(out, seg{src: -1, b: s + end})
			prev = s + end
		}
		c += e.del
	}
	keep(old.n())
	return out
}

// ending is the line ending of s: "\r\n", "\n" or "".
func ending(s string) string {
	switch {
	case strings.HasSuffix(s, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(s, "\n"):
		return "\n"
	}
	return ""
}

// bom is the UTF-8 byte order mark.
const bom = "\ufeff"

// keepBOM keeps a leading byte order mark at the start of the file when the
// patch did not mention it: the hunks matched the first line only after
// normalisation dropped U+FEFF, so a replaced or preceded first line would
// otherwise lose it (or carry it into the middle of the file).
func keepBOM(out []seg, old *lines, hunks []*Hunk) []seg {
	if old.n() == 0 || len(out) == 0 || !strings.HasPrefix(old.text(0), bom) {
		return out
	}
	if first, _ := lineAt(old, out, 0); strings.HasPrefix(first, bom) {
		return out
	}
	for _, h := range hunks {
		for _, l := range h.Lines {
			if strings.Contains(l.Text, bom) {
				return out // the patch handles the mark itself
			}
		}
	}
	k := 0
	for _, sg := range out {
		if sg.src == 0 {
			out = setLine(out, k, strings.TrimPrefix(old.full(0), bom))
			break
		}
		k += sg.count()
	}
	first, _ := lineAt(old, out, 0)
	return setLine(out, 0, bom+first)
}

// fixEOL gives every line but the last a line ending and decides the last
// one: explicit "\ No newline" markers of the hunk that reaches the end of
// the file win; otherwise the file keeps its final-newline state.
func fixEOL(out []seg, old *lines, locs []*located) []seg {
	total := segLines(out)
	if total == 0 {
		return out
	}
	// A line without an ending that is no longer last (the old last line,
	// with lines added after it) takes its predecessor's ending.
	near := func(k int) string {
		if k > 0 {
			if b, _ := lineAt(old, out, k-1); ending(b) != "" {
				return ending(b)
			}
		}
		return old.dominantEOL()
	}
	n := old.n()
	if n > 0 && old.eol(n-1) == "" {
		k := 0
		for _, sg := range out {
			k += sg.count()
			if sg.src >= 0 && sg.src+sg.n == n {
				if k-1 < total-1 {
					out = setLine(out, k-1, old.full(n-1)+near(k-1))
				}
				break
			}
		}
	}
	want := n == 0 || old.eol(n-1) != ""
	for _, l := range locs {
		if l.end == n && l.h.Marked {
			want = !l.h.NoEOLNew
		}
	}
	last, kept := lineAt(old, out, total-1)
	has := strings.HasSuffix(last, "\n")
	switch {
	case want && !has:
		out = setLine(out, total-1, last+near(total-1))
	case !want && has && kept && strings.TrimRight(last, "\r\n") == "":
		// Stripping its newline would delete an empty line the patch keeps:
		// the file gains a final newline instead of losing a line.
	case !want && has:
		if b := strings.TrimSuffix(strings.TrimSuffix(last, "\n"), "\r"); b != "" {
			out = setLine(out, total-1, b)
		} else {
			// An empty last line without a newline is no line at all.
			out = removeLast(out)
		}
	}
	return out
}
