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
// the first line after the body.
func parseBody(lines []string, i int, h *Hunk, envelope bool) int {
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
	return i
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

const devNull = "/dev/null"

// section is a file section of a unified diff while it is being read.
type section struct {
	fp               *FilePatch
	oldName, newName string // raw names from ---/+++ or the diff --git line
	git              bool   // has a diff --git line
	renameFrom       string
	renameTo         string
	created, deleted bool
	headerDone       bool // saw ---/+++
}

func parseUnified(lines []string) (*Patch, error) {
	p := &Patch{}
	var cur *section
	finish := func() error {
		if cur == nil {
			return nil
		}
		fp, err := cur.resolve()
		if err != nil {
			return err
		}
		p.Files = append(p.Files, fp)
		cur = nil
		return nil
	}
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			if err := finish(); err != nil {
				return nil, err
			}
			cur = &section{fp: &FilePatch{}, git: true}
			cur.oldName, cur.newName = splitGitHeader(l[len("diff --git "):])
			i++
			for ; i < len(lines); i++ {
				if err := cur.extended(lines[i]); err != nil {
					return nil, err
				}
				if !isExtendedHeader(lines[i]) {
					break
				}
			}
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			if cur == nil || !cur.git || cur.headerDone || len(cur.fp.Hunks) > 0 {
				if err := finish(); err != nil {
					return nil, err
				}
				cur = &section{fp: &FilePatch{}}
			}
			cur.oldName, cur.newName = headerName(l[4:]), headerName(lines[i+1][4:])
			cur.headerDone = true
			i += 2
		case strings.HasPrefix(l, "@@"):
			if cur == nil {
				return nil, errorf(KindInvalid, "line %d: hunk %q has no file header before it; start each file with '--- a/path' and '+++ b/path' lines (or use '*** Update File: path')", i+1, l)
			}
			h := &Hunk{}
			var hint string
			h.OldStart, hint = parseHunkHeader(l)
			if hint != "" {
				h.Hints = []string{hint}
			}
			i = parseBody(lines, i+1, h, false)
			if len(h.Lines) > 0 {
				cur.fp.Hunks = append(cur.fp.Hunks, h)
			}
		case strings.HasPrefix(l, "Binary files ") || l == "GIT binary patch":
			return nil, errorf(KindInvalid, "binary patches are not supported; apply_patch edits text files only")
		case cur != nil && cur.headerDone && len(cur.fp.Hunks) == 0 && l != "" && strings.ContainsRune(" -+", rune(l[0])):
			// Hunk lines right after the file header, without an "@@" line.
			h := &Hunk{}
			next := parseBody(lines, i, h, false)
			if len(h.Lines) > 0 {
				cur.fp.Hunks = append(cur.fp.Hunks, h)
			}
			i = max(next, i+1)
		default:
			i++ // text outside file sections is ignored, as git does
		}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return p, nil
}

var extendedPrefixes = []string{
	"old mode ", "new mode ", "deleted file mode ", "new file mode ",
	"rename from ", "rename to ", "rename old ", "rename new ", "copy from ", "copy to ",
	"similarity index ", "dissimilarity index ", "index ",
}

func isExtendedHeader(l string) bool {
	for _, p := range extendedPrefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// extended applies one git extended header line to the section.
func (s *section) extended(l string) error {
	arg := func(p string) string { return strings.TrimSpace(l[len(p):]) }
	switch {
	case strings.HasPrefix(l, "new file mode "):
		s.created = true
		s.fp.Exec = execBit(arg("new file mode "))
	case strings.HasPrefix(l, "deleted file mode "):
		s.deleted = true
	case strings.HasPrefix(l, "new mode "):
		s.fp.Exec = execBit(arg("new mode "))
	case strings.HasPrefix(l, "rename from "):
		s.renameFrom = unquote(arg("rename from "))
	case strings.HasPrefix(l, "rename old "):
		s.renameFrom = unquote(arg("rename old "))
	case strings.HasPrefix(l, "rename to "):
		s.renameTo = unquote(arg("rename to "))
	case strings.HasPrefix(l, "rename new "):
		s.renameTo = unquote(arg("rename new "))
	case strings.HasPrefix(l, "copy from "), strings.HasPrefix(l, "copy to "):
		return errorf(KindInvalid, "copies (%q) are not supported; add the new file with its full content instead", l)
	}
	return nil
}

func execBit(mode string) *bool {
	n, err := strconv.ParseUint(mode, 8, 32)
	if err != nil {
		return nil
	}
	x := n&0o111 != 0
	return &x
}

// headerName reads the name of a ---/+++ line, dropping a tab and timestamp.
func headerName(s string) string {
	s = strings.TrimRight(s, " ")
	if !strings.HasPrefix(s, `"`) {
		if i := strings.IndexByte(s, '\t'); i >= 0 {
			s = s[:i]
		}
	}
	return unquote(s)
}

// splitGitHeader splits the names of a "diff --git a/x b/x" line.
func splitGitHeader(s string) (string, string) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, `"`) {
		if end := closingQuote(s); end > 0 {
			a := unquote(s[:end+1])
			return a, unquote(strings.TrimSpace(s[end+1:]))
		}
	}
	if i := strings.LastIndex(s, ` "`); i >= 0 && strings.HasSuffix(s, `"`) {
		return s[:i], unquote(s[i+1:])
	}
	// Same name on both sides: "a/P b/P".
	if n := len(s); n%2 == 1 {
		h := n / 2
		a, b := s[:h], s[h+1:]
		if s[h] == ' ' && strings.TrimPrefix(a, "a/") == strings.TrimPrefix(b, "b/") {
			return a, b
		}
	}
	if i := strings.Index(s, " b/"); i >= 0 {
		return s[:i], s[i+1:]
	}
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, s
}

func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// stripPrefixes drops git's a/ and b/ prefixes when the pair uses them.
func stripPrefixes(o, n string) (string, string) {
	oa, nb := strings.HasPrefix(o, "a/"), strings.HasPrefix(n, "b/")
	switch {
	case oa && nb:
		return o[2:], n[2:]
	case oa && n == devNull:
		return o[2:], n
	case nb && o == devNull:
		return o, n[2:]
	}
	return o, n
}

// resolve turns what the section said into a FilePatch with clean paths.
func (s *section) resolve() (*FilePatch, error) {
	fp := s.fp
	o, n := stripPrefixes(s.oldName, s.newName)
	if s.renameFrom != "" || s.renameTo != "" {
		if s.renameFrom == "" || s.renameTo == "" {
			return nil, errorf(KindInvalid, "a rename needs both 'rename from' and 'rename to' lines")
		}
		o, n = s.renameFrom, s.renameTo
	}
	switch {
	case s.created || (o == devNull && n != devNull):
		fp.Op, fp.Path = OpCreate, n
	case s.deleted || (n == devNull && o != devNull):
		fp.Op, fp.Path = OpDelete, o
	case o == devNull:
		return nil, errorf(KindInvalid, "a file section names /dev/null on both sides")
	default:
		fp.Op, fp.Path = OpUpdate, o
		if n != o && s.renameFrom == "" {
			// "--- a/x" with "+++ x" (or the reverse) still names one file.
			o2, n2 := strings.TrimPrefix(o, "a/"), strings.TrimPrefix(n, "b/")
			switch {
			case o2 == n2:
				o, n = o2, n2
			case o2 == n:
				o = n
			case o == n2:
				n = o
			}
			fp.Path = o
		}
		if n != o {
			if s.renameFrom == "" {
				return nil, errorf(KindInvalid, "the header names two different files (%q and %q); to rename a file use a git diff with 'rename from'/'rename to' lines or '*** Move to:' in the envelope", o, n)
			}
			fp.MoveTo = n
		}
	}
	if fp.Op == OpCreate && fp.Path == devNull {
		return nil, errorf(KindInvalid, "a file section names /dev/null on both sides")
	}
	var err error
	if fp.Path, err = cleanPath(fp.Path); err != nil {
		return nil, err
	}
	if fp.MoveTo != "" {
		if fp.MoveTo, err = cleanPath(fp.MoveTo); err != nil {
			return nil, err
		}
		if fp.MoveTo == fp.Path {
			fp.MoveTo = ""
		}
	}
	if fp.Op == OpCreate {
		for k, h := range fp.Hunks {
			if !h.addsOnly() {
				return nil, errorf(KindInvalid, "%s: hunk %d of a new file has context or removed lines; a new file's hunk may only add lines ('+')", fp.Path, k+1)
			}
		}
	}
	return fp, nil
}

// describe names a hunk in messages.
func describe(path string, k, n int) string {
	return fmt.Sprintf("%s: hunk %d of %d", path, k+1, n)
}
