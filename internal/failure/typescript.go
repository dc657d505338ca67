package failure

import (
	"strings"
)

const srcTypeScript = "typescript"

// typescript recognizes tsc diagnostics, plain
// ("src/a.ts(6,37): error TS2345: msg") and pretty
// ("src/a.ts:6:37 - error TS2345: msg"), with indented continuation lines.
type typescript struct {
	col  *collector
	last *BuildError
	ind  int // indentation of the last diagnostic's line (a task runner's prefix)
}

func newTypeScript(col *collector) *typescript { return &typescript{col: col} }

func (t *typescript) line(s string) {
	i := strings.Index(s, "error TS")
	if i < 0 {
		if t.last != nil && indentOf(s) >= t.ind+2 && strings.TrimSpace(s) != "" {
			t.last.Message += "\n" + strings.TrimSpace(s)
			return
		}
		t.flush()
		return
	}
	t.flush()
	// The output may be indented as a whole (a task runner's prefix):
	// the location starts at the line's first non-blank byte.
	ind := indentOf(s)
	head, msg := s[ind:i], s[i+len("error "):]
	var loc string
	switch {
	case strings.HasSuffix(head, "): "):
		// file(line,col): error TS...
		open := strings.LastIndexByte(head, '(')
		if open <= 0 {
			return
		}
		line, col, ok := strings.Cut(head[open+1:len(head)-3], ",")
		if !ok || !allDigits(line) || !allDigits(col) {
			return
		}
		loc = head[:open] + ":" + line + ":" + col
	case strings.HasSuffix(head, " - "):
		loc = strings.TrimSuffix(head, " - ")
		if p, _ := splitLoc(loc); p == "" {
			return
		}
	default:
		return
	}
	t.last = &BuildError{Location: keep(loc), Message: keep(msg)}
	t.ind = ind
}

func (t *typescript) flush() {
	if t.last != nil {
		t.col.addBuild(srcTypeScript, *t.last)
		t.last = nil
	}
}

func (t *typescript) finish() { t.flush() }

func (t *typescript) trigger() trigger { return trigger{has: []string{"error TS"}} }
func (t *typescript) idle() bool       { return t.last == nil }
