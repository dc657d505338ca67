package tools

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// quoteName returns a file name as it may appear in a tool answer: as is
// when every character prints as itself, otherwise Go-quoted ("a\nb.go")
// so a newline, a control or escape sequence, a bidi override or invalid
// UTF-8 in a name cannot forge answer lines ("path:line: text") or hide
// what the name really is. A name starting with '"' is quoted too, so a
// quoted name is never mistaken for a plain one.
func quoteName(name string) string {
	if needsQuote(name) {
		return strconv.Quote(name)
	}
	return name
}

func needsQuote(s string) bool {
	if s == "" || s[0] == '"' {
		return s != ""
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return true
			}
		}
		if !unicode.IsPrint(r) && r != ' ' {
			return true
		}
	}
	return false
}

// quoteNames applies quoteName to each name, in place, and returns names.
func quoteNames(names []string) []string {
	for i, n := range names {
		names[i] = quoteName(n)
	}
	return names
}
