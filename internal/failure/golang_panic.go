package failure

import "strings"

// startPanic begins a panic or test-timeout report.
func (g *goText) startPanic(rest string) {
	g.mode = goPanic
	g.pmsg = newLines(8, maxMessage)
	g.pmsg.add("panic: " + rest)
	g.gbuf = newLines(maxExcerptLines, maxExcerpt)
	g.inStack, g.goroutine, g.fn = false, 0, ""
	g.ptarget, g.timeout = nil, nil
	if strings.HasPrefix(rest, "test timed out after ") {
		g.timeout = []*goFail{}
		return
	}
	// testing prints the test's --- FAIL line before re-panicking.
	if n := len(g.fails); n > 0 && g.fails[n-1].loc == "" && !g.fails[n-1].own {
		g.ptarget = g.fails[n-1]
	} else if g.cur != "" {
		g.ptarget = g.addFail(g.cur)
	} else if n > 0 {
		g.ptarget = g.fails[n-1]
	}
}

func (g *goText) addFail(name string) *goFail {
	f := &goFail{name: keep(name), msg: newLines(maxExcerptLines, maxMessage),
		excerpt: newLines(maxExcerptLines, maxExcerpt)}
	if len(g.fails) < maxGoPending {
		g.fails = append(g.fails, f)
	}
	return f
}

// panicLine consumes a panic's message and goroutine stacks; false hands
// the line back (the report ended).
func (g *goText) panicLine(s string) bool {
	if strings.HasPrefix(s, "FAIL\t") || strings.HasPrefix(s, "ok  \t") || s == "FAIL" ||
		strings.HasPrefix(s, "--- FAIL: ") || strings.HasPrefix(s, "=== RUN") {
		g.endPanic()
		return false
	}
	if strings.HasPrefix(s, "exit status ") {
		return true
	}
	if strings.HasPrefix(s, "goroutine ") && strings.HasSuffix(s, ":") {
		g.goroutine++
		g.inStack = true
		if g.goroutine == 1 || g.timeout != nil {
			g.gbuf = newLines(maxExcerptLines, maxExcerpt)
			g.gbuf.add(s)
		}
		return true
	}
	if !g.inStack {
		if g.timeout != nil {
			if t := strings.TrimSpace(s); strings.HasPrefix(s, "\t\t") && t != "" {
				name := t
				if i := strings.LastIndex(t, " ("); i > 0 {
					name = t[:i]
				}
				if len(g.timeout) < maxGoPending {
					g.timeout = append(g.timeout, g.addFail(name))
				}
				return true
			}
			if strings.TrimSpace(s) == "running tests:" {
				return true
			}
		}
		if strings.TrimSpace(s) != "" {
			g.pmsg.add(strings.TrimSpace(s))
		}
		return true
	}
	if s == "" {
		return true
	}
	if !strings.HasPrefix(s, "\t") {
		g.fn = keep(goFrameFunc(s))
		return true
	}
	file, _, _ := strings.Cut(strings.TrimSpace(s), " +0x")
	if (g.goroutine == 1 || g.timeout != nil) && !g.col.proj.goForeignFrame(g.fn, file) {
		// The excerpt keeps the project's frames only.
		g.gbuf.add(g.fn + "(...)")
		g.gbuf.add("\t" + file)
	}
	g.frame(g.fn, file)
	return true
}

// frame sees one stack frame of the report.
func (g *goText) frame(fn, file string) {
	if g.timeout != nil {
		for _, f := range g.timeout {
			top, _, _ := strings.Cut(f.name, "/")
			if f.loc == "" && (strings.HasSuffix(fn, "."+top) || strings.Contains(fn, "."+top+".")) {
				f.loc = keep(file)
				f.excerpt.add(g.gbuf.String())
			}
		}
		return
	}
	if g.goroutine == 1 && g.ptarget != nil && g.ptarget.loc == "" && !g.col.proj.goForeignFrame(fn, file) {
		g.ptarget.loc = keep(file)
	}
}

func (g *goText) endPanic() {
	g.mode = goNormal
	msg := g.pmsg.String()
	if g.timeout != nil {
		for _, f := range g.timeout {
			f.msg.add(msg)
			f.own = true
		}
		g.timeout = nil
		return
	}
	f := g.ptarget
	if f == nil {
		f = g.addFail("")
	}
	f.own = true
	f.msg.add(msg)
	f.excerpt.add(g.gbuf.String())
	g.ptarget = nil
}

// goFrameFunc returns the function of a stack line "pkg.F(0x1, ...)" or
// "created by pkg.F in goroutine 1".
func goFrameFunc(s string) string {
	if rest, ok := strings.CutPrefix(s, "created by "); ok {
		fn, _, _ := strings.Cut(rest, " in goroutine")
		return fn
	}
	if strings.HasSuffix(s, ")") {
		if i := strings.LastIndexByte(s, '('); i > 0 {
			return s[:i]
		}
	}
	return s
}

// goStdPackages are standard-library packages seen in test stacks.
var goStdPackages = map[string]bool{
	"runtime": true, "testing": true, "time": true, "sync": true, "reflect": true, "fmt": true,
	"os": true, "syscall": true, "panic": true, "main": true, "errors": true, "strings": true,
	"strconv": true, "io": true, "bufio": true, "bytes": true, "sort": true, "slices": true,
	"maps": true, "context": true, "net": true, "internal": true, "encoding": true, "math": true,
}

// goForeignFrame reports frames of the runtime, the standard library or a
// dependency in the module cache.
func (p *project) goForeignFrame(fn, file string) bool {
	if p != nil && p.module != "" && (strings.HasPrefix(fn, p.module+".") || strings.HasPrefix(fn, p.module+"/")) {
		// The workspace's own module, wherever it is checked out.
		return false
	}
	if p.foreign(file) {
		return true
	}
	head := fn
	if i := strings.IndexAny(head, "./"); i >= 0 {
		head = head[:i]
	}
	return goStdPackages[head]
}

// raceLine collects a data race report up to its closing line.
func (g *goText) raceLine(s string) {
	r := g.race
	if strings.HasPrefix(s, "==================") {
		if len(g.races) < maxRaces {
			g.races = append(g.races, r)
		}
		g.race = nil
		g.mode = goNormal
		return
	}
	r.excerpt.add(s)
	t := strings.TrimSpace(s)
	if r.summary == "" && t != "" {
		r.summary = keep(t)
	}
	if r.loc == "" && strings.HasPrefix(s, "      /") {
		file, _, _ := strings.Cut(t, " +0x")
		if !g.col.proj.foreign(file) {
			r.loc = keep(file)
		}
	}
}
