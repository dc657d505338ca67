package failure

import (
	"strings"
	"unicode/utf8"
)

// eventDecoder reads the go test -json lines test2json writes (one flat
// object of string and number members, no spaces) without encoding/json:
// a line of another shape is left to json.Unmarshal (decode says so), so
// that the result is always what json.Unmarshal gives. Decoded strings
// are views of the line or of the decoder's buffer, valid until the next
// decode: whatever is kept must be cloned.
type eventDecoder struct {
	buf []byte
}

// eventFields are goEvent's fields, as test2json names them.
var eventFields = [...]string{"Action", "Package", "Test", "Output", "ImportPath", "FailedBuild"}

// decode fills ev from s and reports true, or reports false when s is not
// of the plain shape it reads (json.Unmarshal must then decide).
func (d *eventDecoder) decode(s string, ev *goEvent) bool {
	*ev = goEvent{}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return false
	}
	d.buf = d.buf[:0]
	// A field's value is s[lo:hi] when it had no escape, else (esc)
	// d.buf[lo:hi]; views are taken once d.buf stops growing.
	type span struct {
		lo, hi int
		esc    bool
	}
	var vals [len(eventFields)]span
	var set [len(eventFields)]bool
	checkedUTF8 := false
	i := 1
	if s[i] == '}' {
		return i+1 == len(s)
	}
	for {
		// Key: a plain string.
		if i >= len(s) || s[i] != '"' {
			return false
		}
		k := i + 1
		for k < len(s) && s[k] != '"' && s[k] != '\\' && s[k] >= 0x20 && s[k] < 0x80 {
			k++
		}
		if k >= len(s) || s[k] != '"' {
			return false
		}
		key := s[i+1 : k]
		i = k + 1
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i++
		field := -1
		for f, name := range eventFields {
			if key == name {
				field = f
				break
			}
			if strings.EqualFold(key, name) {
				return false // json.Unmarshal matches keys without case
			}
		}
		if i >= len(s) {
			return false
		}
		switch c := s[i]; {
		case c == '"':
			lo, hi, esc, end, high, ok := d.str(s, i+1)
			if !ok {
				return false
			}
			if high && !checkedUTF8 {
				if !utf8.ValidString(s) {
					return false // json.Unmarshal replaces invalid bytes
				}
				checkedUTF8 = true
			}
			if field >= 0 {
				vals[field], set[field] = span{lo, hi, esc}, true
			}
			i = end
		case field < 0 && (c == '-' || c >= '0' && c <= '9'):
			end, ok := jsonNumber(s, i)
			if !ok {
				return false
			}
			i = end
		default:
			return false // another kind of value, or a non-string field
		}
		if i >= len(s) {
			return false
		}
		if s[i] == '}' {
			if i+1 != len(s) {
				return false
			}
			break
		}
		if s[i] != ',' {
			return false
		}
		i++
	}
	for f, v := range vals {
		if !set[f] {
			continue
		}
		var val string
		if v.esc {
			val = view(d.buf[v.lo:v.hi])
		} else {
			val = s[v.lo:v.hi]
		}
		switch f {
		case 0:
			ev.Action = val
		case 1:
			ev.Package = val
		case 2:
			ev.Test = val
		case 3:
			ev.Output = val
		case 4:
			ev.ImportPath = val
		case 5:
			ev.FailedBuild = val
		}
	}
	return true
}

// str reads the JSON string whose contents start at s[i]. Without an
// escape its value is s[lo:hi]; with one (esc) it is decoded into d.buf
// at [lo:hi]. end is the index after the closing quote; high reports a
// byte of 0x80 or more. ok is false for what it does not read: a control
// byte, an unknown escape, a \u escape of a surrogate, no closing quote.
func (d *eventDecoder) str(s string, i int) (lo, hi int, esc bool, end int, high, ok bool) {
	start := i
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			if !esc {
				return start, i, false, i + 1, high, true
			}
			return lo, len(d.buf), true, i + 1, high, true
		case c < 0x20:
			return
		case c >= 0x80:
			high = true
		case c == '\\':
			if !esc {
				esc = true
				lo = len(d.buf)
				d.buf = append(d.buf, s[start:i]...)
			}
			if i+1 >= len(s) {
				return
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				d.buf = append(d.buf, e)
			case 'b':
				d.buf = append(d.buf, '\b')
			case 'f':
				d.buf = append(d.buf, '\f')
			case 'n':
				d.buf = append(d.buf, '\n')
			case 'r':
				d.buf = append(d.buf, '\r')
			case 't':
				d.buf = append(d.buf, '\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok || r >= 0xd800 && r < 0xe000 {
					return lo, hi, esc, end, high, false
				}
				d.buf = utf8.AppendRune(d.buf, r)
				i += 4
			default:
				return
			}
			i += 2
			continue
		}
		if esc {
			d.buf = append(d.buf, c)
		}
		i++
	}
	return
}

// hex4 reads four hex digits at s[i].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// jsonNumber returns the index after the JSON number at s[i]
// (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?), ok false when there is
// none.
func jsonNumber(s string, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == j {
			return i, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == j {
			return i, false
		}
	}
	return i, true
}
