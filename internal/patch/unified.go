package patch

import (
	"strconv"
	"strings"
)

// The unified/git diff form: optional "diff --git" lines with git's
// extended headers, "--- old" / "+++ new" file headers, "@@" hunks.

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

func parseUnified(src *source) (*Patch, error) {
	lines := src.lines
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
				return nil, errorf(KindInvalid, "line %d: hunk %q has no file header before it; start each file with '--- a/path' and '+++ b/path' lines (or use '*** Update File: path')", src.num(i), l)
			}
			hd := parseHunkHeader(l)
			h := &Hunk{OldStart: hd.oldStart, counted: hd.counted, oldCount: hd.oldCount, newCount: hd.newCount}
			if hd.hint != "" {
				h.Hints = []string{hd.hint}
			}
			var err error
			if i, err = parseBody(src, i+1, h, false); err != nil {
				return nil, err
			}
			if len(h.Lines) > 0 {
				cur.fp.Hunks = append(cur.fp.Hunks, h)
			}
		case strings.HasPrefix(l, "Binary files ") || l == "GIT binary patch":
			return nil, errorf(KindInvalid, "binary patches are not supported; apply_patch edits text files only")
		case cur != nil && cur.headerDone && len(cur.fp.Hunks) == 0 && l != "" && strings.ContainsRune(" -+", rune(l[0])):
			// Hunk lines right after the file header, without an "@@" line.
			h := &Hunk{}
			next, err := parseBody(src, i, h, false)
			if err != nil {
				return nil, err
			}
			if len(h.Lines) > 0 {
				cur.fp.Hunks = append(cur.fp.Hunks, h)
			}
			i = max(next, i+1)
		case l == "-- " && i+1 < len(lines) && gitVersion.MatchString(lines[i+1]):
			// A format-patch signature ends an email; what follows until the
			// next file section (another email's headers and message) is
			// text outside the diff.
			if err := finish(); err != nil {
				return nil, err
			}
			i += 2
		case cur != nil && l != "" && (l[0] == '-' || l[0] == '+'):
			// Inside the diff, a '-' or '+' line outside any hunk would be
			// dropped: refuse rather than lose a change.
			return nil, errorf(KindInvalid, "line %d of the patch, %q, is a '%c' line outside any hunk (it comes after a file header but is not under an '@@' line). Put it in its hunk, or remove it; the whole patch was refused.", src.num(i), clip(l), l[0])
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
	if fp.Op == OpDelete {
		for k, h := range fp.Hunks {
			for _, l := range h.Lines {
				if l.Kind == '+' {
					return nil, errorf(KindInvalid, "%s: hunk %d of a deleted file adds lines; a deletion's hunk may only remove lines ('-')", fp.Path, k+1)
				}
			}
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
