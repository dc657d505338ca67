package failure

import (
	"strings"
)

const (
	srcJest   = "jest"
	srcVitest = "vitest"
)

// jsBlock accumulates one failure's report in jest or vitest output.
type jsBlock struct {
	active  bool
	file    string
	id      string
	msg     lines
	excerpt lines
	loc     string
	msgDone bool
}

func (b *jsBlock) start(file, id string) {
	*b = jsBlock{active: true, file: keep(strings.TrimPrefix(file, "./")), id: keep(id),
		msg: newLines(maxExcerptLines, maxMessage), excerpt: newLines(maxExcerptLines, maxExcerpt)}
}

func (b *jsBlock) end(col *collector, src string) {
	if !b.active {
		return
	}
	b.active = false
	col.addFailure(src, b.failure())
}

func (b *jsBlock) failure() Failure {
	return Failure{ID: b.id, Package: b.file, Location: b.loc,
		Message: strings.TrimSpace(b.msg.String()), Excerpt: b.excerpt.String()}
}

// empty reports whether the block has no content yet.
func (b *jsBlock) empty() bool {
	return b.active && !b.msgDone && b.loc == "" && b.msg.n == 0 && b.excerpt.n == 0
}

// frame records a stack or ❯ line; the first project location wins.
func (b *jsBlock) frame(t string, proj *project) {
	b.msgDone = true
	if b.loc == "" {
		if l := proj.firstLoc(t); l != "" {
			b.loc = keep(l)
		}
	}
	b.excerpt.add(t)
}

// jsCodeFrame reports a source excerpt line: "  > 9 | code", "    | ^",
// or vitest's "  10| code".
func jsCodeFrame(t string) bool {
	t = strings.TrimPrefix(t, ">")
	t = strings.TrimLeft(t, " ")
	i := 0
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	t = strings.TrimLeft(t[i:], " ")
	return strings.HasPrefix(t, "|")
}

// jest recognizes jest's default reporter: "FAIL path" per file and
// "● Suite › test" per failure, with message, code frame and stack.
type jest struct {
	col   *collector
	file  string
	block jsBlock
}

func newJest(col *collector) *jest { return &jest{col: col} }

func (j *jest) line(s string) {
	t := strings.TrimLeft(s, " ")
	if rest, ok := strings.CutPrefix(t, "FAIL "); ok {
		rest = strings.TrimSpace(rest)
		if strings.Contains(rest, " > ") {
			return // vitest
		}
		j.block.end(j.col, srcJest)
		if i := strings.LastIndex(rest, " ("); i > 0 && strings.HasSuffix(rest, ")") {
			rest = rest[:i] // "(5.2 s)"
		}
		j.file = keep(strings.TrimPrefix(rest, "./"))
		return
	}
	if strings.HasPrefix(t, "PASS ") || strings.HasPrefix(t, "Test Suites: ") ||
		strings.HasPrefix(t, "Summary of all failing tests") {
		j.block.end(j.col, srcJest)
		return
	}
	if name, ok := strings.CutPrefix(t, "● "); ok && j.file != "" {
		j.block.end(j.col, srcJest)
		if name == "Console" {
			return
		}
		j.block.start(j.file, strings.TrimSpace(name))
		return
	}
	if !j.block.active {
		return
	}
	b := &j.block
	switch {
	case strings.HasPrefix(t, "at "):
		b.frame(t, j.col.proj)
	case jsCodeFrame(t) && t != "":
		b.msgDone = true
		b.excerpt.add(strings.TrimPrefix(s, "    "))
	case !b.msgDone:
		b.msg.add(strings.TrimPrefix(s, "    "))
	}
}

func (j *jest) finish() { j.block.end(j.col, srcJest) }

// vitest recognizes vitest's default reporter: " FAIL  file > suite > test"
// headers with the error, the ❯ file:line:col frames and the code frame.
type vitest struct {
	col   *collector
	block jsBlock
	// merged are the tests whose FAIL headers came right before the
	// block's own with nothing between: vitest prints identical errors
	// once under all their headers, so they share the block's report.
	merged []Failure
}

func newVitest(col *collector) *vitest { return &vitest{col: col} }

func (v *vitest) line(s string) {
	t := strings.TrimLeft(s, " ")
	if rest, ok := strings.CutPrefix(t, "FAIL "); ok {
		rest = strings.TrimLeft(rest, " ")
		file, id, ok := strings.Cut(rest, " > ")
		if !ok {
			if f, _, ok2 := strings.Cut(rest, " [ "); ok2 && strings.HasSuffix(rest, " ]") {
				v.end()
				v.block.start(f, "suite failed to run")
			}
			return
		}
		if v.block.empty() && len(v.merged) < maxFailures {
			v.merged = append(v.merged, Failure{ID: v.block.id, Package: v.block.file})
		} else {
			v.end()
		}
		v.block.start(file, strings.TrimSpace(id))
		return
	}
	if !v.block.active {
		return
	}
	b := &v.block
	switch {
	case strings.HasPrefix(t, "⎯") || strings.HasPrefix(t, "Test Files "):
		v.end()
	case strings.HasPrefix(t, "❯ "):
		b.frame(strings.TrimPrefix(t, "❯ "), v.col.proj)
	case b.msgDone:
		if jsCodeFrame(t) && t != "" {
			b.excerpt.add(s)
		}
	default:
		b.msg.add(s)
	}
}

// end reports the block, and the merged tests before it with its report.
func (v *vitest) end() {
	if v.block.active {
		f := v.block.failure()
		for _, m := range v.merged {
			m.Location, m.Message, m.Excerpt = f.Location, f.Message, f.Excerpt
			v.col.addFailure(srcVitest, m)
		}
	}
	v.merged = v.merged[:0]
	v.block.end(v.col, srcVitest)
}

func (v *vitest) finish() { v.end() }

func (j *jest) trigger() trigger { return trigger{first: "FPTS\xe2"} } // \xe2: "●"
func (j *jest) idle() bool       { return !j.block.active }

func (v *vitest) trigger() trigger { return trigger{first: "F"} }
func (v *vitest) idle() bool       { return !v.block.active && len(v.merged) == 0 }
