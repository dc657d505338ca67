package failure

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	srcGo = "go"
	// maxGoOpen bounds the tests whose -v output is held before a verdict.
	maxGoOpen = 256
	// maxGoPending bounds failures held until their package line.
	maxGoPending = maxFailures
	// maxRaces bounds race reports waiting for their test.
	maxRaces = 8
	// goRaceMarker is what testing prints for a test during which a race happened.
	goRaceMarker = "race detected during execution of test"
)

// goFail is a failing Go test waiting for its package line.
type goFail struct {
	name    string
	loc     string
	msg     lines
	excerpt lines
	own     bool // the test logged something itself
}

// goRace is a data race report.
type goRace struct {
	summary string
	loc     string
	excerpt lines
}

type goMode int

const (
	goNormal goMode = iota
	goBuild
	goPanic
	goRaceReport
)

// goText recognizes `go test` text output (plain and -v): failing tests
// with subtests, build errors, panics, timeouts and data races.
type goText struct {
	col    *collector
	src    string
	pkg    string // fixed package (go test -json), else from the package line
	fails  []*goFail
	open   openSet    // -v output of tests without a verdict yet
	free   []*heldOut // buffers of open output to reuse
	cur    string     // test named by the last === line (a view of curBuf)
	curBuf []byte
	stack  []*goFail // --- FAIL: headers by nesting depth
	last   *lines    // where a continuation line goes
	lastF  *goFail

	mode goMode
	// build
	build *BuildError
	// panic and timeout
	pmsg      lines
	ptarget   *goFail
	timeout   []*goFail
	inStack   bool
	goroutine int
	fn        string
	gbuf      lines
	// race
	race  *goRace
	races []*goRace

	example *goFail // failed Example whose output follows

	// events is set when the text comes from go test -json output events;
	// evTest is then the Test of the event the current line came from.
	// Verdict lines are trusted only from their own test's events (a test
	// may print "--- FAIL: TestX" itself), package lines only from the
	// package's.
	events bool
	evTest string

	lastLine [256]byte
	lastLen  int

	// pkgSeen: a package line was read (the quiet path is tried then).
	pkgSeen bool
}

func newGoText(col *collector, src, pkg string) *goText {
	return &goText{col: col, src: src, pkg: pkg}
}

func (g *goText) line(s string) {
	switch g.mode {
	case goBuild:
		if g.buildLine(s) {
			return
		}
	case goPanic:
		if g.panicLine(s) {
			return
		}
	case goRaceReport:
		g.raceLine(s)
		return
	}
	if s == "" {
		return
	}
	if g.example != nil && (strings.HasPrefix(s, "--- ") || strings.HasPrefix(s, "=== ") ||
		strings.HasPrefix(s, "FAIL") || strings.HasPrefix(s, "ok  ")) {
		g.example = nil
	}
	switch s[0] {
	case '-':
		if rest, ok := strings.CutPrefix(s, "--- FAIL: "); ok && g.trusted(rest) {
			g.failHeader(0, rest)
			return
		}
		if rest, ok := strings.CutPrefix(s, "--- PASS: "); ok {
			g.passed(rest)
			return
		}
		if rest, ok := strings.CutPrefix(s, "--- SKIP: "); ok {
			g.passed(rest)
			return
		}
	case '=':
		if g.runLine(s) {
			return
		}
		if strings.HasPrefix(s, "==================") {
			return
		}
	case 'F':
		if rest, ok := strings.CutPrefix(s, "FAIL\t"); ok && (!g.events || g.evTest == "") {
			g.pkgLine(rest, true)
			return
		}
		if s == "FAIL" {
			return
		}
	case 'o':
		if rest, ok := strings.CutPrefix(s, "ok  \t"); ok && (!g.events || g.evTest == "") {
			g.pkgLine(rest, false)
			return
		}
	case 'p':
		if rest, ok := strings.CutPrefix(s, "panic: "); ok {
			g.startPanic(rest)
			return
		}
	case 'W':
		if s == "WARNING: DATA RACE" {
			g.mode = goRaceReport
			g.race = &goRace{excerpt: newLines(maxExcerptLines, maxExcerpt)}
			g.race.excerpt.add(s)
			return
		}
	case '#':
		if strings.HasPrefix(s, "# ") {
			g.mode = goBuild
			return
		}
	case ' ', '\t':
		if g.indented(s) {
			return
		}
	}
	if f := g.example; f != nil {
		// An example's got:/want: output follows its header unindented.
		f.msg.add(s)
		f.own = true
		return
	}
	g.noteOther(s)
}

// asciiSpace marks the ASCII bytes strings.TrimSpace removes.
var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// trusted reports whether the verdict line "--- FAIL: rest" may be
// believed: always in plain text; in -json events, only when it came from
// the events of the test it names.
func (g *goText) trusted(rest string) bool {
	if !g.events {
		return true
	}
	name := rest
	if i := strings.LastIndex(rest, " ("); i > 0 {
		name = rest[:i]
	}
	return name == g.evTest
}

// noteOther remembers the last unstructured line (for package failures
// without a failing test), without allocating.
func (g *goText) noteOther(s string) {
	if s == "" || blankStart(s) && strings.TrimSpace(s) == "" || strings.HasPrefix(s, "exit status") {
		return
	}
	g.lastLen = copy(g.lastLine[:], s)
}

// blankStart reports whether s starts with a space (what strings.TrimSpace
// removes); when it does not, s is not blank.
func blankStart(s string) bool {
	if s[0] < utf8.RuneSelf {
		return asciiSpace[s[0]]
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// buildLine handles compiler output after "# pkg"; false ends build mode.
func (g *goText) buildLine(s string) bool {
	if strings.HasPrefix(s, "\t") && g.build != nil {
		g.build.Message += "\n" + strings.TrimSpace(s)
		return true
	}
	if strings.HasPrefix(s, "# ") {
		g.flushBuild()
		return true
	}
	loc, msg, ok := goCompileLine(s)
	if !ok {
		g.flushBuild()
		g.mode = goNormal
		return false
	}
	g.flushBuild()
	g.build = &BuildError{Location: keep(loc), Message: keep(msg)}
	return true
}

// goCompileLine splits "file.go:line:col: msg" (or without col).
func goCompileLine(s string) (loc, msg string, ok bool) {
	i := strings.Index(s, ".go:")
	if i <= 0 || strings.ContainsAny(s[:i], " \t") {
		return "", "", false
	}
	rest := s[i+len(".go:"):]
	j := 0
	for j < len(rest) && (isDigit(rest[j]) || rest[j] == ':') {
		j++
	}
	if j == 0 || !strings.HasPrefix(rest[j:], " ") || rest[j-1] != ':' {
		return "", "", false
	}
	return s[:i+len(".go:")+j-1], strings.TrimSpace(rest[j:]), true
}

func (g *goText) flushBuild() {
	if g.build != nil {
		g.col.addBuild(g.src, *g.build)
		g.build = nil
	}
}

// pkgLine handles "FAIL\tpkg\t0.01s", "FAIL\tpkg [build failed]" and
// "ok  \tpkg\t0.01s": the failures pending so far belong to pkg.
func (g *goText) pkgLine(rest string, failed bool) {
	g.pkgSeen = true
	if g.mode == goPanic {
		g.endPanic()
	}
	pkg, tail, _ := strings.Cut(rest, "\t")
	pkg, note, _ := strings.Cut(pkg, " ")
	g.flushBuild()
	if g.pkg != "" {
		pkg = g.pkg
	}
	buildFailed := strings.HasPrefix(note, "[") || strings.HasPrefix(tail, "[")
	if failed && !buildFailed && len(g.fails) == 0 && len(g.races) == 0 {
		msg := "package failed with no failing test reported"
		if g.lastLen > 0 {
			msg += ": " + string(g.lastLine[:g.lastLen])
		}
		g.col.addFailure(g.src, Failure{ID: pkg, Package: pkg, Message: msg})
	}
	g.flush(pkg)
}

// flush reports the pending failures of pkg: the leaves of the subtest
// tree and the parents that failed on their own.
func (g *goText) flush(pkg string) {
	for _, f := range g.fails {
		if f.name == "" && len(g.fails) > 1 {
			continue
		}
		if !f.own && g.hasChild(f.name) {
			continue
		}
		msg := f.msg.String()
		if len(g.races) > 0 && (strings.Contains(msg, goRaceMarker) || msg == "") {
			r := g.races[0]
			g.races = g.races[1:]
			msg = strings.TrimSpace(msg + "\nWARNING: DATA RACE: " + r.summary)
			f.loc = r.loc
			f.excerpt.reset()
			f.excerpt.add(r.excerpt.String())
		}
		if path.Base(f.loc) == "testing.go" || strings.HasPrefix(f.loc, "testing.go:") {
			f.loc = ""
		}
		id := f.name
		if id == "" {
			id = pkg
		}
		g.col.addFailure(g.src, Failure{ID: id, Package: pkg, Location: f.loc, Message: msg,
			Excerpt: f.excerpt.String()})
	}
	for _, r := range g.races {
		g.col.addFailure(g.src, Failure{ID: pkg, Package: pkg, Location: r.loc,
			Message: "WARNING: DATA RACE: " + r.summary, Excerpt: r.excerpt.String()})
	}
	g.fails, g.races, g.stack, g.last, g.lastF, g.example = nil, nil, g.stack[:0], nil, nil, nil
	g.dropOpen()
	g.cur = ""
	g.lastLen = 0
}

func (g *goText) hasChild(name string) bool {
	for _, o := range g.fails {
		if strings.HasPrefix(o.name, name+"/") {
			return true
		}
	}
	return false
}

func (g *goText) finish() {
	switch g.mode {
	case goPanic:
		g.endPanic()
	case goBuild:
		g.flushBuild()
	}
	g.mode = goNormal
	if len(g.fails) > 0 || len(g.races) > 0 {
		g.flush(g.pkg)
	}
}

func (g *goText) trigger() trigger { return trigger{lead: "-=FopW# \t"} }

// idle: in normal mode, a line not starting with a byte of the trigger
// only becomes the remembered last line (skipped).
func (g *goText) idle() bool { return g.mode == goNormal && g.example == nil }

func (g *goText) skipped(s string) {
	if s != "" {
		g.noteOther(s)
	}
}
