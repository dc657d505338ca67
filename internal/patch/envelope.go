package patch

import (
	"fmt"
	"regexp"
	"strings"
)

// The envelope form:
//
//	*** Begin Patch
//	*** Update File: path
//	*** Move to: new/path        (optional)
//	@@ optional scope line
//	 context
//	-removed
//	+added
//	*** End of File              (optional: the hunk ends at the file's end)
//	*** Add File: path
//	+line
//	*** Delete File: path
//	*** End Patch

var markerRE = regexp.MustCompile(`(?i)^\*\*\*\s*(begin patch|end patch|update file:|add file:|delete file:|move to:|end of file)\s*(.*)$`)

// marker parses an envelope marker line into its lower-case keyword and
// argument.
func marker(l string) (kind, arg string, ok bool) {
	m := markerRE.FindStringSubmatch(strings.TrimRight(l, " \t"))
	if m == nil {
		return "", "", false
	}
	kind, arg = strings.ToLower(m[1]), strings.TrimSpace(m[2])
	switch kind {
	case "begin patch", "end patch", "end of file":
		if arg != "" {
			return "", "", false // "*** End Patch0" is not the marker
		}
	}
	return kind, arg, true
}

// looseMarker parses a marker that may also have leading whitespace.
func looseMarker(l string) (kind, arg string, ok bool) {
	return marker(strings.TrimLeft(l, " \t"))
}

// isMarker reports whether l is a marker other than "*** End of File" at
// column 0 (where no hunk line can start).
func isMarker(l string) bool {
	k, _, ok := marker(l)
	return ok && k != "end of file"
}

// isEndPatch reports whether l is "*** End Patch", maybe indented.
func isEndPatch(l string) bool {
	k, _, ok := looseMarker(l)
	return ok && k == "end patch"
}

func isEndOfFile(l string) bool {
	k, _, ok := marker(l)
	return ok && k == "end of file"
}

// isEnvelope reports whether the text uses the envelope form: a file marker
// at column 0, or an indented one in a text with no unified-diff header (a
// unified diff's context line may well be " *** Update File: x").
func isEnvelope(lines []string) bool {
	loose, unified := false, false
	for i, l := range lines {
		if k, _, _ := marker(l); isFileMarker(k) {
			return true
		}
		if k, _, _ := looseMarker(l); isFileMarker(k) {
			loose = true
		}
		if strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			unified = true
		}
	}
	return loose && !unified
}

func isFileMarker(kind string) bool {
	switch kind {
	case "begin patch", "update file:", "add file:", "delete file:":
		return true
	}
	return false
}

// parseEnvelope reads the envelope form. Between the file markers only hunk
// lines, "@@" lines and blank lines may appear, and the patch must end with
// "*** End Patch": without it, the text was most likely cut off.
func parseEnvelope(src *source) (*Patch, error) {
	lines := src.lines
	p := &Patch{}
	var cur *FilePatch
	begun := false
	for i := 0; i < len(lines); {
		l := lines[i]
		// Outside a hunk body a marker may be indented: no hunk line can be
		// there ("*** End of File" only counts right after a body).
		kind, arg, ok := looseMarker(l)
		if ok && kind == "end of file" {
			ok = false
		}
		if !ok {
			switch {
			case cur != nil && cur.Op == OpUpdate && (strings.HasPrefix(l, "@@") || (l != "" && strings.ContainsRune(" -+", rune(l[0])))):
				h := &Hunk{}
				for ; i < len(lines) && strings.HasPrefix(lines[i], "@@"); i++ {
					hd := parseHunkHeader(lines[i])
					if h.OldStart == 0 {
						h.OldStart = hd.oldStart
					}
					if hd.hint != "" {
						h.Hints = append(h.Hints, hd.hint)
					}
				}
				var err error
				if i, err = parseBody(src, i, h, true); err != nil {
					return nil, err
				}
				if len(h.Lines) > 0 {
					cur.Hunks = append(cur.Hunks, h)
				}
			case cur != nil && cur.Op == OpCreate:
				h, next, err := parseAddBody(lines, i, cur.Path)
				if err != nil {
					return nil, err
				}
				if next == i {
					// (parseAddBody stops only at a marker, which this line is
					// not: never loop on it.)
					return nil, strayLine(src, i, true)
				}
				cur.Hunks = append(cur.Hunks, h)
				i = next
			case cur != nil && cur.Op == OpDelete && strings.TrimSpace(l) != "":
				return nil, errorf(KindInvalid, "*** Delete File: %s takes no lines after it (found %q)", cur.Path, l)
			case cur != nil && strings.TrimSpace(l) != "":
				return nil, strayLine(src, i, true)
			case begun && strings.TrimSpace(l) != "":
				return nil, errorf(KindInvalid, "line %d of the patch, %q, comes after '*** Begin Patch' but before any '*** Update File:', '*** Add File:' or '*** Delete File:' line, so it belongs to no file. Start each file's changes with one of those lines; the whole patch was refused.", src.num(i), clip(l))
			default:
				i++ // blank lines, and text before the first file section
			}
			continue
		}
		i++
		switch kind {
		case "begin patch":
			begun = true
		case "end patch":
			return p, nil
		case "update file:", "add file:", "delete file:":
			pth, err := cleanPath(unquote(arg))
			if err != nil {
				return nil, err
			}
			cur = &FilePatch{Path: pth, Op: map[string]Op{"update file:": OpUpdate, "add file:": OpCreate, "delete file:": OpDelete}[kind]}
			p.Files = append(p.Files, cur)
		case "move to:":
			if cur == nil || cur.Op != OpUpdate || len(cur.Hunks) > 0 {
				return nil, errorf(KindInvalid, "'*** Move to: %s' must come right after an '*** Update File:' line", arg)
			}
			to, err := cleanPath(unquote(arg))
			if err != nil {
				return nil, err
			}
			if to != cur.Path {
				cur.MoveTo = to
			}
		}
	}
	last := ""
	if len(lines) > 0 {
		last = fmt.Sprintf(" (line %d, %q, is its last line)", src.num(len(lines)-1), clip(lines[len(lines)-1]))
	}
	return nil, errorf(KindInvalid, "the patch has no '*** End Patch' line%s: it looks truncated (cut off, perhaps by an output limit), so nothing was applied. Send the whole patch again, ending with '*** End Patch'.", last)
}

// parseAddBody reads the '+' lines of an "*** Add File:" section, up to
// the next marker. No line of the body can start with a space, so a marker
// there may be indented (" *** End Patch", as the envelope's own parser
// accepts it); "*** End of File" says nothing about a new file, which ends
// with its last '+' line, and is passed over.
func parseAddBody(lines []string, i int, path string) (*Hunk, int, error) {
	h := &Hunk{}
	blanks := 0
	for ; i < len(lines); i++ {
		l := lines[i]
		if k, _, ok := looseMarker(l); ok {
			if k == "end of file" {
				continue
			}
			break
		}
		switch {
		case l == "":
			blanks++
			continue
		case l[0] == '+':
			for ; blanks > 0; blanks-- {
				h.Lines = append(h.Lines, Line{Kind: '+'})
			}
			h.Lines = append(h.Lines, Line{Kind: '+', Text: l[1:]})
		case isNoEOL(l):
			markNoEOL(h)
		default:
			return nil, 0, errorf(KindInvalid, "*** Add File: %s: every line of a new file must start with '+' (found %q)", path, l)
		}
	}
	return h, i, nil
}
