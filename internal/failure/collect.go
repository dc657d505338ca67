package failure

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// recognizer reads the cleaned lines of one step and reports what it
// recognizes to its collector. The line passed to line is borrowed: it is
// valid only during the call, so anything kept must be cloned (keep).
type recognizer interface {
	line(s string)
	// finish flushes pending state at the end of the step.
	finish()
}

// newRecognizers returns one of each line recognizer, reporting to col.
func newRecognizers(col *collector) []recognizer {
	return []recognizer{
		newGoText(col, srcGo, ""), newGoJSON(col), newPytest(col), newJest(col), newVitest(col),
		newNodeTAP(col), newNodeSpec(col), newCargo(col), newRustc(col), newTypeScript(col),
	}
}

// collector gathers the failures and build errors of one step,
// de-duplicated and bounded.
type collector struct {
	failures []Failure
	fIndex   map[string]int
	builds   []BuildError
	bIndex   map[string]int
	omitted  int
	sources  []string
	proj     *project
}

func newCollector(proj *project) *collector {
	return &collector{fIndex: map[string]int{}, bIndex: map[string]int{}, proj: proj}
}

func failureKey(pkg, id string) string { return pkg + "\x00" + id }

// addFailure records f (found by recognizer src); a failure already recorded
// under the same package and id only gains the fields it lacked.
func (c *collector) addFailure(src string, f Failure) {
	// Clone every field: recognizers may pass borrowed line views.
	f.ID = keep(strings.TrimSpace(f.ID))
	if f.ID == "" {
		return
	}
	f.Package = keep(f.Package)
	f.Location = keep(f.Location)
	f.Message = keep(clip(strings.TrimRight(f.Message, "\n "), maxMessage))
	f.Excerpt = keep(clip(strings.TrimRight(f.Excerpt, "\n "), maxExcerpt))
	k := failureKey(f.Package, f.ID)
	if i, ok := c.fIndex[k]; ok {
		old := &c.failures[i]
		if old.Location == "" {
			old.Location = f.Location
		}
		if old.Message == "" {
			old.Message = f.Message
		}
		if old.Excerpt == "" {
			old.Excerpt = f.Excerpt
		}
		return
	}
	if len(c.failures) >= maxFailures {
		c.omitted++
		return
	}
	f.Count = 1
	c.fIndex[k] = len(c.failures)
	c.failures = append(c.failures, f)
	c.source(src)
}

// addBuild records a build error once per location and message.
func (c *collector) addBuild(src string, b BuildError) {
	b.Message = keep(clip(strings.TrimSpace(b.Message), maxMessage))
	b.Location = keep(b.Location)
	if b.Message == "" {
		return
	}
	k := b.Location + "\x00" + b.Message
	if _, ok := c.bIndex[k]; ok {
		return
	}
	if len(c.builds) >= maxBuildErrors {
		c.omitted++
		return
	}
	b.Count = 1
	c.bIndex[k] = len(c.builds)
	c.builds = append(c.builds, b)
	c.source(src)
}

func (c *collector) source(src string) {
	if src == "" {
		return
	}
	for _, s := range c.sources {
		if s == src {
			return
		}
	}
	c.sources = append(c.sources, src)
}

func (c *collector) empty() bool { return len(c.failures) == 0 && len(c.builds) == 0 }

// hasFailure reports whether a failure with this package and id is recorded.
func (c *collector) hasFailure(pkg, id string) bool {
	_, ok := c.fIndex[failureKey(pkg, id)]
	return ok
}

// find returns the index of the first failure matching, or -1.
func (c *collector) find(match func(*Failure) bool) int {
	for i := range c.failures {
		if match(&c.failures[i]) {
			return i
		}
	}
	return -1
}

// fill sets the location, message and excerpt of failure i from f: where
// they are empty, or wherever f has them when override is set.
func (c *collector) fill(i int, f Failure, override bool) {
	old := &c.failures[i]
	if f.Location != "" && (override || old.Location == "") {
		old.Location = keep(f.Location)
	}
	if m := strings.TrimRight(f.Message, "\n "); m != "" && (override || old.Message == "") {
		old.Message = keep(clip(m, maxMessage))
	}
	if e := strings.TrimRight(f.Excerpt, "\n "); e != "" && (override || old.Excerpt == "") {
		old.Excerpt = keep(clip(e, maxExcerpt))
	}
}

// keep copies a borrowed line so that it can be retained.
func keep(s string) string { return strings.Clone(s) }

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = " …"
	cut := n - len(mark)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// lines is a bounded multi-line text buffer.
type lines struct {
	b       []byte
	n       int
	maxN    int
	maxSize int
	full    bool
}

func newLines(maxN, maxSize int) lines { return lines{maxN: maxN, maxSize: maxSize} }

// add appends a line (copied) unless the buffer is full.
func (l *lines) add(s string) {
	if l.full {
		return
	}
	if l.n >= l.maxN {
		l.full = true
		l.b = append(l.b, "…\n"...)
		return
	}
	if room := l.maxSize - len(l.b) - 1; len(s) > room {
		// Keep the head of a line that does not fit, then stop.
		l.full = true
		if room > 16 {
			l.b = append(l.b, clip(s, room)...)
		} else {
			l.b = append(l.b, "…"...)
		}
		l.b = append(l.b, '\n')
		return
	}
	l.b = append(l.b, s...)
	l.b = append(l.b, '\n')
	l.n++
}

func (l *lines) String() string { return string(l.trimmed()) }

// trimmed is the text without its final newlines, aliasing the buffer.
func (l *lines) trimmed() []byte { return bytes.TrimRight(l.b, "\n") }

func (l *lines) reset() { *l = lines{maxN: l.maxN, maxSize: l.maxSize} }

// clear empties the buffer and keeps its memory for reuse.
func (l *lines) clear() { *l = lines{b: l.b[:0], maxN: l.maxN, maxSize: l.maxSize} }
