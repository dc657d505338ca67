package patch

import (
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
	return strings.ToLower(m[1]), strings.TrimSpace(m[2]), true
}

func isMarker(l string) bool {
	k, _, ok := marker(l)
	return ok && k != "end of file"
}

func isEndOfFile(l string) bool {
	k, _, ok := marker(l)
	return ok && k == "end of file"
}

// isEnvelope reports whether the text uses the envelope form.
func isEnvelope(lines []string) bool {
	for _, l := range lines {
		switch k, _, _ := marker(l); k {
		case "begin patch", "update file:", "add file:", "delete file:":
			return true
		}
	}
	return false
}

func parseEnvelope(lines []string) (*Patch, error) {
	p := &Patch{}
	var cur *FilePatch
	for i := 0; i < len(lines); {
		l := lines[i]
		kind, arg, ok := marker(l)
		if !ok {
			switch {
			case cur != nil && cur.Op == OpUpdate && (strings.HasPrefix(l, "@@") || (l != "" && strings.ContainsRune(" -+", rune(l[0])))):
				h := &Hunk{}
				start := i
				for ; i < len(lines) && strings.HasPrefix(lines[i], "@@"); i++ {
					start, hint := parseHunkHeader(lines[i])
					if h.OldStart == 0 {
						h.OldStart = start
					}
					if hint != "" {
						h.Hints = append(h.Hints, hint)
					}
				}
				var err error
				if i, err = parseBody(lines, i, h, true); err != nil {
					return nil, err
				}
				if len(h.Lines) > 0 {
					cur.Hunks = append(cur.Hunks, h)
				}
				if i == start {
					i++ // a line that looks like a body but ends one: skip it
				}
			case cur != nil && cur.Op == OpCreate:
				h, next, err := parseAddBody(lines, i, cur.Path)
				if err != nil {
					return nil, err
				}
				cur.Hunks = append(cur.Hunks, h)
				i = next
			case cur != nil && cur.Op == OpDelete && strings.TrimSpace(l) != "":
				return nil, errorf(KindInvalid, "*** Delete File: %s takes no lines after it (found %q)", cur.Path, l)
			default:
				i++ // text outside sections is ignored
			}
			continue
		}
		i++
		switch kind {
		case "begin patch", "end of file":
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
	return p, nil
}

// parseAddBody reads the '+' lines of an "*** Add File:" section.
func parseAddBody(lines []string, i int, path string) (*Hunk, int, error) {
	h := &Hunk{}
	blanks := 0
	for ; i < len(lines); i++ {
		l := lines[i]
		if _, _, ok := marker(l); ok {
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
		case l[0] == '\\':
			markNoEOL(h)
		default:
			return nil, 0, errorf(KindInvalid, "*** Add File: %s: every line of a new file must start with '+' (found %q)", path, l)
		}
	}
	return h, i, nil
}
