package testcmd

import (
	"errors"
	"strings"
)

// splitCommand splits a configured command line into words the way a POSIX
// shell splits a simple command: blanks separate words, single quotes are
// literal, double quotes and backslashes escape. needShell reports anything
// only a shell can run (operators, redirects, expansions, globs, leading
// variable assignments, comments, several lines); the caller then runs the
// whole line with `sh -c` instead. An unterminated quote is an error.
func splitCommand(line string) (words []string, needShell bool, err error) {
	var (
		cur     strings.Builder
		inWord  bool
		quoted  bool // the current word had a quote or escape so far
		wordIdx int
	)
	end := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord, quoted = false, false
			wordIdx++
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			end()
		case c == '\n' || c == '\r':
			return nil, true, nil
		case strings.IndexByte(";&|<>()`$*?[", c) >= 0:
			return nil, true, nil
		case (c == '#' || c == '~') && !inWord:
			return nil, true, nil
		case c == '=' && wordIdx == 0 && !quoted && isIdent(cur.String()):
			return nil, true, nil // NAME=value prefix assignment
		case c == '\\':
			if i+1 >= len(line) {
				return nil, false, errors.New("command ends with a lone backslash")
			}
			i++
			if line[i] == '\n' {
				continue // line continuation
			}
			cur.WriteByte(line[i])
			inWord, quoted = true, true
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, false, errors.New("unterminated single quote")
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord, quoted = true, true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				switch line[i] {
				case '$', '`':
					return nil, true, nil
				case '\\':
					if i+1 < len(line) && strings.IndexByte("$`\"\\\n", line[i+1]) >= 0 {
						i++
						if line[i] == '\n' {
							continue
						}
					}
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, false, errors.New("unterminated double quote")
			}
			inWord, quoted = true, true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	end()
	if len(words) == 0 {
		return nil, false, errors.New("empty command")
	}
	return words, false, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !(r >= 'A' && r <= 'Z') && !(r >= 'a' && r <= 'z') && (i == 0 || !(r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}
