package patch

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Parse reads a patch in either accepted form. It is lenient about the
// wrapping (markdown fences, CRLF, a missing final newline, a/ b/ prefixes,
// wrong or absent hunk numbers) and strict about the paths.
func Parse(text string) (*Patch, error) {
	if len(text) > MaxPatchBytes {
		return nil, errorf(KindInvalid, "the patch is %d bytes; the limit is %d. Split it into several smaller patches.", len(text), MaxPatchBytes)
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	// CRLF (even doubled by a transport) is a line ending, never content:
	// added lines take the target file's own line ending.
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	src := &source{}
	src.lines, src.nums, src.closed = stripFences(lines)

	var (
		p   *Patch
		err error
	)
	if isEnvelope(src.lines) {
		p, err = parseEnvelope(src)
	} else {
		p, err = parseUnified(src)
	}
	if err != nil {
		return nil, err
	}
	if len(p.Files) == 0 {
		return nil, errorf(KindInvalid, "no file changes found in the patch. Send a unified diff (--- a/path, +++ b/path, @@ hunks) or a *** Begin Patch envelope (*** Update File: path, @@, lines starting with ' ', '-', '+').")
	}
	if len(p.Files) > MaxFiles {
		return nil, errorf(KindInvalid, "the patch touches %d files; the limit is %d", len(p.Files), MaxFiles)
	}
	hunks := 0
	for _, f := range p.Files {
		hunks += len(f.Hunks)
	}
	if hunks > MaxHunks {
		return nil, errorf(KindInvalid, "the patch has %d hunks; the limit is %d. Split it into several patches.", hunks, MaxHunks)
	}
	return p, nil
}

// stripFences keeps only the content of markdown code fences when the text
// has any. A fence is "```" at column 0; a hunk line never starts there,
// since hunk lines carry a ' ', '-' or '+' prefix. It returns the kept lines,
// their 1-based numbers in the text, and whether the last fence was closed
// (the text then did not stop mid-patch).
func stripFences(lines []string) ([]string, []int, bool) {
	hasFence := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			hasFence = true
			break
		}
	}
	if !hasFence {
		nums := make([]int, len(lines))
		for i := range nums {
			nums[i] = i + 1
		}
		return lines, nums, false
	}
	var out []string
	var nums []int
	inside := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			inside = !inside
			continue
		}
		if inside {
			out = append(out, l)
			nums = append(nums, i+1)
		}
	}
	return out, nums, !inside
}

// cleanPath validates a path taken from the patch.
func cleanPath(p string) (string, error) {
	orig := p
	p = strings.TrimSpace(p)
	if p == "" {
		return "", errorf(KindInvalid, "a file section has an empty path")
	}
	if !utf8.ValidString(p) || strings.ContainsFunc(p, unicode.IsControl) {
		return "", errorf(KindInvalid, "path %q has control characters or is not valid UTF-8", orig)
	}
	p = strings.ReplaceAll(p, "\\", "/")
	if strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':') {
		return "", errorf(KindUnsafePath, "path %q is absolute; use a path relative to the workspace root", orig)
	}
	if strings.HasSuffix(p, "/") {
		return "", errorf(KindInvalid, "path %q names a directory, not a file", orig)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg != strings.TrimSpace(seg) {
			return "", errorf(KindInvalid, "path %q has a name starting or ending with a space", orig)
		}
		if seg == ".." {
			return "", errorf(KindUnsafePath, "path %q uses '..'; use a path inside the workspace", orig)
		}
		if strings.EqualFold(seg, ".git") {
			return "", errorf(KindUnsafePath, "path %q is inside .git, which is never written", orig)
		}
	}
	p = path.Clean(p)
	if p == "." {
		return "", errorf(KindInvalid, "path %q names the workspace root, not a file", orig)
	}
	return p, nil
}

// unquote decodes a git C-quoted name ("a/sp\303\251cial"); other names are
// returned trimmed.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

var hunkRange = regexp.MustCompile(`^-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?$`)

// header is what a hunk header says.
type header struct {
	oldStart int64
	hint     string
	// counted is set when the header carries line counts ("@@ -a,b +c,d
	// @@"); oldCount and newCount are then the lines it announces.
	counted            bool
	oldCount, newCount int
}

// parseHunkHeader reads "@@ -a,b +c,d @@ hint", "@@ ... @@", "@@", or the
// envelope's "@@ hint". Numbers are hints; unparsable or huge ones become 0.
func parseHunkHeader(line string) header {
	var hd header
	s := strings.TrimSpace(strings.TrimLeft(line, "@"))
	if i := strings.Index(s, "@@"); i >= 0 {
		rng := strings.TrimSpace(s[:i])
		hd.hint = strings.TrimSpace(strings.TrimLeft(s[i:], "@"))
		if m := hunkRange.FindStringSubmatch(rng); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				hd.oldStart = n
			}
			oc, oerr := count(m[2])
			nc, nerr := count(m[4])
			if oerr == nil && nerr == nil {
				hd.counted, hd.oldCount, hd.newCount = true, oc, nc
			}
		}
	} else {
		hd.hint = s
	}
	if strings.Trim(hd.hint, ".… ") == "" {
		hd.hint = ""
	}
	return hd
}

// count reads a hunk header's line count; an absent count means 1.
func count(s string) (int, error) {
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err == nil && n > MaxPatchBytes {
		err = strconv.ErrRange
	}
	return n, err
}

// source is the patch text being parsed: its lines (fences stripped, line
// endings removed), each line's number in the text as sent, and whether a
// closing fence ended the text.
type source struct {
	lines  []string
	nums   []int
	closed bool
}

// num is the 1-based number, in the text as sent, of lines[i].
func (s *source) num(i int) int {
	if i < len(s.nums) {
		return s.nums[i]
	}
	if len(s.nums) > 0 {
		return s.nums[len(s.nums)-1] + 1
	}
	return 1
}

// lastLine reports whether lines[i] is the last line that is not blank.
func (s *source) lastLine(i int) bool {
	for _, l := range s.lines[i+1:] {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

// bodyStop reports whether lines[i] ends a hunk body. In a unified diff the
// next hunk or file header does; in the envelope only "@@" and the "***"
// markers do (there, "--- x" is a removed line "-- x").
func (s *source) bodyStop(i int, envelope bool) bool {
	lines := s.lines
	l := lines[i]
	switch {
	case strings.HasPrefix(l, "@@"):
		return true
	case envelope:
		// A marker at column 0, or " *** End Patch" as the last line: a
		// context line that is the file's last text cannot be told from it,
		// and a patch that ends there without its end marker would be cut.
		return isMarker(l) || (s.lastLine(i) && isEndPatch(l))
	case strings.HasPrefix(l, "diff --git "), strings.HasPrefix(l, "Index: "):
		return true
	case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
		// A file header, unless it is a removed "-- x" and an added "++ y"
		// line; the next line or the names settle it.
		if i+2 >= len(lines) || strings.HasPrefix(lines[i+2], "@@") || strings.HasPrefix(lines[i+2], "diff --git ") {
			return true
		}
		o, n := strings.TrimSpace(l[4:]), strings.TrimSpace(lines[i+1][4:])
		return (strings.HasPrefix(o, "a/") || o == devNull) && (strings.HasPrefix(n, "b/") || n == devNull)
	case l == "-- " && i+1 < len(lines) && gitVersion.MatchString(lines[i+1]):
		// git format-patch signature
		return true
	}
	return false
}

var gitVersion = regexp.MustCompile(`^\d+\.\d+`)

// isNoEOL reports whether l is a "\ No newline at end of file" marker (git
// writes it in the user's language; the backslash and space are fixed).
func isNoEOL(l string) bool { return strings.HasPrefix(l, "\\ ") }

// parseBody reads hunk lines from lines[i:] into h and returns the index of
// the first line after the body. Inside a hunk every line is context (' '),
// removed ('-'), added ('+'), blank (blank context) or a "\ No newline"
// marker. Any other line refuses the whole patch: it is most likely a hunk
// line that lost its prefix, and guessing could drop a change. The one
// exception is text after a unified-diff hunk whose header counts are met
// exactly (prose after the patch, as git reads it).
func parseBody(src *source, i int, h *Hunk, envelope bool) (int, error) {
	lines := src.lines
loop:
	for ; i < len(lines); i++ {
		l := lines[i]
		if envelope && isEndOfFile(l) {
			h.AtEOF = true
			i++
			break
		}
		if src.bodyStop(i, envelope) {
			break
		}
		switch {
		case l == "":
			h.Lines = append(h.Lines, Line{Kind: 0}) // blank context, tentative
		case l[0] == ' ' || l[0] == '-' || l[0] == '+':
			h.Lines = append(h.Lines, Line{Kind: l[0], Text: l[1:]})
		case isNoEOL(l):
			markNoEOL(h)
		default:
			if j := src.nextBodyLine(i, envelope); j >= 0 {
				return i, errorf(KindInvalid, "line %d of the patch, %q, is not a hunk line (hunk lines start with ' ', '-' or '+'), yet hunk lines follow it (line %d, %q). Prefix it with a space if it is unchanged, '-' if removed, '+' if added; the whole patch was refused.", src.num(i), clip(l), src.num(j), clip(lines[j]))
			}
			if !envelope && countsMet(h) {
				break loop // text after a complete hunk
			}
			return i, strayLine(src, i, envelope)
		}
	}
	if !envelope && i == len(lines) && !src.closed && h.counted {
		if o, n := sides(h.Lines); o < h.oldCount || n < h.newCount {
			return i, errorf(KindInvalid, "the patch ends inside a hunk: its header announces %d old and %d new lines, but the text stops after %d and %d (line %d is the last). It looks truncated (cut off); send the whole patch again.", h.oldCount, h.newCount, o, n, src.num(len(lines)-1))
		}
	}
	// Trailing prefix-less blank lines are separators, not context.
	for len(h.Lines) > 0 && h.Lines[len(h.Lines)-1].Kind == 0 {
		h.Lines = h.Lines[:len(h.Lines)-1]
	}
	for k := range h.Lines {
		if h.Lines[k].Kind == 0 {
			h.Lines[k].Kind = ' '
		}
	}
	return i, nil
}

// strayLine is the refusal of a line without a hunk prefix that ends a
// hunk: it may be an added or unchanged line that lost its prefix.
func strayLine(src *source, i int, envelope bool) error {
	after := "the next '@@' or file header (or the end of the patch)"
	if envelope {
		after = "the next '@@' or '***' line"
	}
	return errorf(KindInvalid, "line %d of the patch, %q, is inside a hunk but is not a hunk line: every line of a hunk up to %s starts with ' ' (unchanged), '-' (removed) or '+' (added), or is empty. Add the missing prefix; if the line is a comment about the patch, put it after '*** End Patch' or outside a ``` fence around the diff. The whole patch was refused.", src.num(i), clip(src.lines[i]), after)
}

// sides counts the old-side and new-side lines of hunk lines, blank
// (tentative) lines on both.
func sides(ls []Line) (o, n int) {
	for _, l := range ls {
		if l.Kind != '+' {
			o++
		}
		if l.Kind != '-' {
			n++
		}
	}
	return o, n
}

// countsMet reports whether the hunk's header counts are met exactly, with
// some number (maybe none) of its trailing blank lines as context.
func countsMet(h *Hunk) bool {
	if !h.counted {
		return false
	}
	body := h.Lines
	blanks := 0
	for len(body) > 0 && body[len(body)-1].Kind == 0 {
		body = body[:len(body)-1]
		blanks++
	}
	o, n := sides(body)
	d := h.oldCount - o
	return d >= 0 && d <= blanks && h.newCount-n == d
}

// nextBodyLine looks past the stray text starting at lines[i]: it returns
// the index of a hunk line that follows before any header, or -1.
func (s *source) nextBodyLine(i int, envelope bool) int {
	for j := i; j < len(s.lines); j++ {
		l := s.lines[j]
		switch {
		case s.bodyStop(j, envelope), envelope && isEndOfFile(l):
			return -1
		case l != "" && (l[0] == ' ' || l[0] == '-' || l[0] == '+'):
			return j
		}
	}
	return -1
}

// markNoEOL records a "\ No newline at end of file" after the last line.
func markNoEOL(h *Hunk) {
	if len(h.Lines) == 0 {
		return
	}
	h.Marked = true
	switch h.Lines[len(h.Lines)-1].Kind {
	case '-':
		h.NoEOLOld = true
	case '+':
		h.NoEOLNew = true
	default:
		h.NoEOLOld, h.NoEOLNew = true, true
	}
}

// describe names a hunk in messages.
func describe(path string, k, n int) string {
	return fmt.Sprintf("%s: hunk %d of %d", path, k+1, n)
}
