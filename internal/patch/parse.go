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
	lines = stripFences(lines)

	var (
		p   *Patch
		err error
	)
	if isEnvelope(lines) {
		p, err = parseEnvelope(lines)
	} else {
		p, err = parseUnified(lines)
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
// since hunk lines carry a ' ', '-' or '+' prefix.
func stripFences(lines []string) []string {
	hasFence := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			hasFence = true
			break
		}
	}
	if !hasFence {
		return lines
	}
	var out []string
	inside := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			inside = !inside
			continue
		}
		if inside {
			out = append(out, l)
		}
	}
	return out
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

// parseHunkHeader reads "@@ -a,b +c,d @@ hint", "@@ ... @@", "@@", or the
// envelope's "@@ hint". Numbers are hints; unparsable or huge ones become 0.
func parseHunkHeader(line string) (oldStart int64, hint string) {
	s := strings.TrimSpace(strings.TrimLeft(line, "@"))
	if i := strings.Index(s, "@@"); i >= 0 {
		rng := strings.TrimSpace(s[:i])
		hint = strings.TrimSpace(strings.TrimLeft(s[i:], "@"))
		if m := hunkRange.FindStringSubmatch(rng); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				oldStart = n
			}
		}
	} else {
		hint = s
	}
	if strings.Trim(hint, ".… ") == "" {
		hint = ""
	}
	return oldStart, hint
}

// bodyStop reports whether lines[i] ends a hunk body. envelope adds the
// "*** " markers.
func bodyStop(lines []string, i int, envelope bool) bool {
	l := lines[i]
	switch {
	case strings.HasPrefix(l, "@@"), strings.HasPrefix(l, "diff --git "), strings.HasPrefix(l, "Index: "):
		return true
	case envelope && isMarker(l):
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

// parseBody reads hunk lines from lines[i:] into h and returns the index of
// the first line after the body. A line without a hunk prefix ends the
// body; if more hunk lines follow it, the line was most likely a hunk line
// that lost its prefix, and guessing could drop a change, so it is an error.
func parseBody(lines []string, i int, h *Hunk, envelope bool) (int, error) {
loop:
	for ; i < len(lines); i++ {
		l := lines[i]
		if envelope && isEndOfFile(l) {
			h.AtEOF = true
			i++
			break
		}
		if bodyStop(lines, i, envelope) {
			break
		}
		switch {
		case l == "":
			h.Lines = append(h.Lines, Line{Kind: 0}) // blank context, tentative
		case l[0] == ' ' || l[0] == '-' || l[0] == '+':
			h.Lines = append(h.Lines, Line{Kind: l[0], Text: l[1:]})
		case l[0] == '\\':
			markNoEOL(h)
		default:
			if j := nextBodyLine(lines, i, envelope); j >= 0 {
				return i, errorf(KindInvalid, "line %q is not a hunk line (hunk lines start with ' ', '-' or '+'), yet hunk lines follow it (%q). Prefix it with a space if it is unchanged, '-' if removed, '+' if added.", clip(l), clip(lines[j]))
			}
			break loop
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

// nextBodyLine looks past the stray text starting at lines[i]: it returns
// the index of a hunk line that follows before any header, or -1.
func nextBodyLine(lines []string, i int, envelope bool) int {
	for j := i; j < len(lines); j++ {
		l := lines[j]
		switch {
		case bodyStop(lines, j, envelope), envelope && isEndOfFile(l), strings.HasPrefix(l, "```"):
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
