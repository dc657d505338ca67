package report

import (
	"strings"
	"unicode/utf8"
)

// stripControls makes text safe to print on a terminal: escape sequences
// (CSI "ESC [ ... final", OSC "ESC ] ... BEL/ST", DCS/SOS/PM/APC "ESC P|X|^|_
// ... ST", and their one-byte C1 forms) are removed whole, every other C0
// and C1 control and DEL is dropped, and invalid UTF-8 becomes U+FFFD. Only
// '\n' and '\t' stay. A sequence never runs past the end of its line, so an
// unterminated one cannot swallow the rest of the report.
func stripControls(s string) string {
	if !needsStrip(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
			i += size
		case r == 0x1b:
			i = skipEscape(s, i+size)
		case r == 0x9b: // C1 CSI
			i = skipCSI(s, i+size)
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f: // C1 DCS, SOS, OSC, PM, APC
			i = skipString(s, i+size)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			i += size
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

func needsStrip(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == utf8.RuneError {
			return true
		}
	}
	return false
}

// skipEscape skips what follows an ESC at i and returns where text resumes.
func skipEscape(s string, i int) int {
	if i >= len(s) || s[i] == '\n' {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// Two-character sequences (ESC c, ESC 7, ESC ( B...): drop the
	// intermediates and the final character, if printable ASCII.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] > 0x2f && s[i] < 0x7f {
		i++
	}
	return i
}

// skipCSI skips parameter and intermediate bytes and the final byte.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString skips an OSC/DCS-style string up to and including its
// terminator (BEL, ESC \ or C1 ST), or up to the end of the line.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == '\n':
			return i
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i + 1
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
		i++
	}
	return i
}
