package failure

import "strings"

// The lines of one test: === RUN markers, its log lines and held -v output, and
// its --- PASS, --- SKIP and --- FAIL verdicts.

// runLine handles === RUN/CONT/NAME/PAUSE: the -v output that follows
// belongs to the named test.
func (g *goText) runLine(s string) bool {
	for _, p := range []string{"=== RUN   ", "=== CONT  ", "=== NAME  ", "=== PAUSE "} {
		if name, ok := strings.CutPrefix(s, p); ok {
			// The line is borrowed: keep the name (once per test).
			if name = strings.TrimSpace(name); name != g.cur {
				// (g.cur is only compared and copied by its users, so a
				// buffer reused from test to test can hold it.)
				g.curBuf = append(g.curBuf[:0], name...)
				g.cur = view(g.curBuf)
			}
			g.stack = g.stack[:0]
			g.last = nil
			return true
		}
	}
	return false
}

// indented handles an indented line: a nested --- FAIL header, a test's
// log line (file.go:NN: msg) or a continuation line.
func (g *goText) indented(s string) bool {
	t := strings.TrimLeft(s, " ")
	depth := (len(s) - len(t)) / 4
	if rest, ok := strings.CutPrefix(t, "--- FAIL: "); ok && g.trusted(rest) {
		g.failHeader(depth, rest)
		return true
	}
	if rest, ok := strings.CutPrefix(t, "--- PASS: "); ok {
		g.passed(rest)
		return true
	}
	if rest, ok := strings.CutPrefix(t, "--- SKIP: "); ok {
		g.passed(rest)
		return true
	}
	loc, msg, isLog := goLogLine(t)
	if isLog {
		var target *lines
		var f *goFail
		if len(g.stack) > 0 {
			// Plain output: the log line sits under its test's header.
			i := depth - 1
			if i >= len(g.stack) {
				i = len(g.stack) - 1
			}
			if i < 0 {
				i = 0
			}
			f = g.stack[i]
			target = &f.msg
		} else if g.cur != "" {
			target = g.openBuf(g.cur)
		} else {
			return false
		}
		if f != nil {
			f.own = true
			if f.loc == "" {
				f.loc = keep(loc)
				target.add(msg)
			} else {
				target.add(t)
			}
		} else {
			target.add(t)
		}
		g.last, g.lastF = target, f
		return true
	}
	if g.last != nil && (depth >= 2 || strings.HasPrefix(s, "\t")) {
		g.last.add(strings.TrimSpace(s))
		return true
	}
	return false
}

// goLogLine splits "file.go:NN: message" (as t.Log prints it), also in
// Go 1.14's -v layout "TestX: file.go:NN: message".
func goLogLine(t string) (loc, msg string, ok bool) {
	if loc, msg, ok := goLogLine1(t); ok {
		return loc, msg, true
	}
	if i := strings.Index(t, ".go:"); i <= 0 {
		return "", "", false
	}
	if name, rest, found := strings.Cut(t, ": "); found && name != "" && !strings.ContainsAny(name, " \t") &&
		!strings.Contains(name, ".go:") {
		return goLogLine1(rest)
	}
	return "", "", false
}

func goLogLine1(t string) (loc, msg string, ok bool) {
	i := strings.Index(t, ".go:")
	if i <= 0 || strings.ContainsAny(t[:i], " \t") {
		return "", "", false
	}
	j := i + len(".go:")
	k := j
	for k < len(t) && isDigit(t[k]) {
		k++
	}
	if k == j || k >= len(t) || t[k] != ':' {
		return "", "", false
	}
	return t[:k], strings.TrimPrefix(t[k+1:], " "), true
}

func (g *goText) openBuf(name string) *lines {
	if b, ok := g.open.get(name); ok {
		return &b.lines
	}
	if g.open.len() >= maxGoOpen {
		g.dropOpen() // g.last is set to the new buffer by the caller
	}
	var b *heldOut
	if n := len(g.free); n > 0 {
		b, g.free = g.free[n-1], g.free[:n-1]
		b.clear()
	} else {
		b = &heldOut{lines: newLines(maxExcerptLines, maxMessage)}
	}
	// A buffer is in free only once it left the set: its name can change.
	b.key = append(b.key[:0], name...)
	g.open.put(b)
	return &b.lines
}

// recycle keeps the buffer of a test's held output for the next test
// (g.last must not point to it any more, and it must be out of g.open).
func (g *goText) recycle(b *heldOut) {
	if len(g.free) < maxGoOpen {
		g.free = append(g.free, b)
	}
}

// dropOpen forgets all held output, keeping the buffers for reuse.
func (g *goText) dropOpen() { g.open.drain(g.recycle) }

// passed drops the held -v output of a test that passed or was skipped.
func (g *goText) passed(rest string) {
	g.last = nil
	if g.open.len() == 0 {
		return
	}
	name := rest
	if i := strings.LastIndex(rest, " ("); i > 0 {
		name = rest[:i]
	}
	if b, ok := g.open.del(name); ok {
		g.recycle(b)
	}
}

// failHeader handles "--- FAIL: TestX/sub (0.00s)" at a nesting depth.
func (g *goText) failHeader(depth int, rest string) {
	name := rest
	if i := strings.LastIndex(rest, " ("); i > 0 {
		name = rest[:i]
	}
	f := &goFail{name: keep(name), msg: newLines(maxExcerptLines, maxMessage),
		excerpt: newLines(maxExcerptLines, maxExcerpt)}
	if b, ok := g.open.del(name); ok {
		// -v output logged before the verdict.
		text := b.String()
		if text != "" {
			f.own = true
			first, more, _ := strings.Cut(text, "\n")
			if loc, msg, ok := goLogLine(first); ok {
				f.loc = loc
				first = msg
			}
			f.msg.add(first)
			if more != "" {
				f.msg.add(more)
			}
		}
		g.recycle(b) // (text is a copy; g.last is reset below)
	}
	if depth > len(g.stack) {
		depth = len(g.stack)
	}
	g.stack = append(g.stack[:depth], f)
	g.last, g.lastF = nil, nil
	if strings.HasPrefix(f.name, "Example") {
		g.example = f
	}
	if len(g.fails) < maxGoPending {
		g.fails = append(g.fails, f)
	} else {
		g.col.omitted++
	}
}
