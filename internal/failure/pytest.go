package failure

import (
	"strings"
)

const srcPytest = "pytest"

type pySection int

const (
	pyNone pySection = iota
	pyFailures
	pyErrors
	pySummary
)

// pytest recognizes pytest's report: the FAILURES and ERRORS sections
// (one block per test, `E   ` lines, `path:NN: Error`), the short test
// summary (`FAILED path::test - Error`) and -v result lines.
type pytest struct {
	col     *collector
	section pySection
	blocks  []Failure // FAILURES/ERRORS blocks, matched to node ids at the end
	// current block
	name    string
	inBlock bool
	msg     lines
	excerpt lines
	loc     string
	locFile string
	doctest bool // a "[doctest] name" block
	dtMsg   bool // inside a doctest's Expected/Got or exception report
	example string
	// summary is set once a "FAILED id" or "ERROR id" line was read: then
	// every failure is listed there, and a block that matches none of
	// them is not invented as another one.
	summary bool
}

// pyDoctest is the title prefix of a doctest's block.
const pyDoctest = "[doctest] "

func newPytest(col *collector) *pytest { return &pytest{col: col} }

func (p *pytest) line(s string) {
	if s == "" {
		if p.inBlock {
			p.excerpt.add("")
		}
		return
	}
	switch s[0] {
	case '=':
		if title, ok := pyBanner(s, '='); ok {
			p.endBlock()
			switch {
			case title == "FAILURES":
				p.section = pyFailures
			case title == "ERRORS":
				p.section = pyErrors
			case title == "short test summary info":
				p.section = pySummary
			default:
				p.section = pyNone
			}
			return
		}
	case '_':
		if p.section == pyFailures || p.section == pyErrors {
			if title, ok := pyBanner(s, '_'); ok && !strings.HasPrefix(s, "_ _") {
				p.endBlock()
				p.startBlock(title)
				return
			}
		}
	case 'F', 'E':
		if p.section == pySummary || !p.inBlock {
			if p.resultLine(s) {
				return
			}
		}
	}
	if p.inBlock {
		p.blockLine(s)
		return
	}
	if p.section == pyNone && (strings.Contains(s, " FAILED") || strings.Contains(s, " ERROR")) {
		p.verboseLine(s)
	}
}

// pyBanner recognizes "==== title ====" (or with '_') and returns title.
func pyBanner(s string, c byte) (string, bool) {
	if len(s) < 8 || s[0] != c || s[len(s)-1] != c || s[1] != c && s[1] != ' ' {
		return "", false
	}
	t := strings.Trim(s, string(c))
	if len(t) < 3 || t[0] != ' ' || t[len(t)-1] != ' ' {
		return "", false
	}
	return strings.TrimSpace(t), true
}

func (p *pytest) startBlock(title string) {
	name := title
	for _, pre := range []string{"ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "} {
		name = strings.TrimPrefix(name, pre)
	}
	p.name = keep(name)
	p.inBlock = true
	p.msg = newLines(maxExcerptLines, maxMessage)
	p.excerpt = newLines(maxExcerptLines, maxExcerpt)
	p.loc, p.locFile = "", ""
	p.doctest = strings.HasPrefix(name, pyDoctest)
	p.dtMsg, p.example = false, ""
}

func (p *pytest) blockLine(s string) {
	if strings.HasPrefix(s, "E ") || s == "E" {
		t := s[1:]
		for i := 0; i < 7 && strings.HasPrefix(t, " "); i++ {
			t = t[1:]
		}
		p.msg.add(t)
		return
	}
	if file, rest, ok := pyLocLine(s); ok {
		p.loc = keep(file + ":" + rest)
		if p.locFile == "" {
			p.locFile = keep(file)
		}
		p.dtMsg = false
		return
	}
	if p.doctest {
		// "006 >>> round(2.675, 2)", then "Expected:"/"Got:" or
		// "UNEXPECTED EXCEPTION: ..." and a traceback.
		if s == "Expected:" || strings.HasPrefix(s, "UNEXPECTED EXCEPTION: ") {
			p.dtMsg = true
			if p.example != "" {
				p.msg.add(p.example)
			}
		}
		if p.dtMsg {
			p.msg.add(s)
			return
		}
		if _, ex, ok := strings.Cut(s, ">>> "); ok && len(s) > 4 && allDigits(s[:3]) {
			p.example = keep(">>> " + ex)
		}
	}
	p.excerpt.add(s)
}

// pyLocLine splits "path.py:NN: Error" (or "path.py:NN: in func"), also
// of a doctest file ("docs/usage.rst:8: DocTestFailure"), and the bare
// "path.py:NN" that ends a setup error (a fixture not found).
func pyLocLine(s string) (file, line string, ok bool) {
	head, _, more := strings.Cut(s, " ")
	if more {
		var colon bool
		if head, colon = strings.CutSuffix(head, ":"); !colon {
			return "", "", false
		}
	}
	i := strings.LastIndexByte(head, ':')
	if i <= 0 || !allDigits(head[i+1:]) {
		return "", "", false
	}
	file, line = head[:i], head[i+1:]
	base := file[strings.LastIndexAny(file, `/\`)+1:]
	if dot := strings.LastIndexByte(base, '.'); dot <= 0 || dot == len(base)-1 || strings.ContainsAny(file, "\t:") && !isWindowsPath(file) {
		return "", "", false
	}
	return file, line, true
}

// isWindowsPath reports a path like C:\x or C:/x (whose colon is no separator).
func isWindowsPath(p string) bool {
	return len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') && !strings.Contains(p[2:], ":")
}

func (p *pytest) endBlock() {
	if !p.inBlock {
		return
	}
	p.inBlock = false
	name := p.name
	id := name
	if p.doctest {
		id = strings.TrimPrefix(name, pyDoctest)
		if p.locFile != "" {
			id = p.locFile + "::" + id
		}
	} else if !strings.Contains(name, "::") && !strings.HasSuffix(name, ".py") {
		// "TestMean.test_empty" is "file::TestMean::test_empty".
		head, params, _ := strings.Cut(name, "[")
		id = strings.ReplaceAll(head, ".", "::")
		if params != "" {
			id += "[" + params
		}
		if p.locFile != "" {
			id = p.locFile + "::" + id
		}
	}
	file, _, _ := strings.Cut(id, "::")
	msg := p.msg.String()
	if msg == "" && p.loc == "" {
		// A plugin's own report (repr_failure) is all message.
		msg = strings.TrimSpace(p.excerpt.String())
	}
	f := Failure{ID: id, Package: file, Location: p.loc, Message: msg, Excerpt: p.excerpt.String()}
	if len(p.blocks) < maxFailures {
		// Package holds the block's own name until finish matches it.
		f.Package = name
		p.blocks = append(p.blocks, f)
	}
}

// resultLine handles "FAILED path::test - msg" and "ERROR path::test - msg".
func (p *pytest) resultLine(s string) bool {
	var rest string
	var ok bool
	if rest, ok = strings.CutPrefix(s, "FAILED "); !ok {
		if rest, ok = strings.CutPrefix(s, "ERROR "); !ok {
			return false
		}
	}
	id, msg, _ := strings.Cut(rest, " - ")
	if !pyNodeID(id) {
		return false
	}
	file, _, _ := strings.Cut(id, "::")
	p.col.addFailure(srcPytest, Failure{ID: id, Package: file, Message: msg})
	p.summary = true
	return true
}

// verboseLine handles "path::test FAILED   [ 14%]" from pytest -v.
func (p *pytest) verboseLine(s string) {
	for _, verdict := range []string{" FAILED", " ERROR"} {
		i := strings.LastIndex(s, verdict)
		if i <= 0 {
			continue
		}
		tail := strings.TrimSpace(s[i+len(verdict):])
		if tail != "" && !strings.HasPrefix(tail, "[") {
			continue
		}
		id := s[:i]
		if j := strings.LastIndex(id, "] "); j >= 0 && strings.HasPrefix(id, "[") {
			id = id[j+2:] // pytest-xdist: "[gw0] [ 14%] FAILED id"
		}
		if pyNodeID(id) {
			file, _, _ := strings.Cut(id, "::")
			p.col.addFailure(srcPytest, Failure{ID: id, Package: file})
		}
		return
	}
}

// pyNodeID reports whether s looks like a pytest node id: a .py file, or
// any file with an extension followed by "::item" (a doctest in a .txt or
// .rst file, a YAML test collected by a plugin).
func pyNodeID(s string) bool {
	file, item, hasItem := strings.Cut(s, "::")
	if file == "" || strings.ContainsAny(file, " \t") {
		return false
	}
	if strings.HasSuffix(file, ".py") {
		return true
	}
	base := file[strings.LastIndexByte(file, '/')+1:]
	dot := strings.LastIndexByte(base, '.')
	return hasItem && item != "" && dot > 0 && dot < len(base)-1
}

// finish matches each block to the node id the summary or -v lines gave
// ("TestMean.test_empty" to "test_calc.py::TestMean::test_empty"); blocks
// without one are reported under the id derived from their first frame.
func (p *pytest) finish() {
	p.endBlock()
	for _, b := range p.blocks {
		name := b.Package
		var i int
		if item, ok := strings.CutPrefix(name, pyDoctest); ok {
			// "[doctest] helpers.initials" is "helpers.py::helpers.initials".
			i = p.col.find(func(f *Failure) bool { return strings.HasSuffix(f.ID, "::"+item) })
		} else {
			head, params, _ := strings.Cut(name, "[")
			suffix := strings.ReplaceAll(head, ".", "::")
			if params != "" {
				suffix += "[" + params
			}
			i = p.col.find(func(f *Failure) bool {
				return strings.HasSuffix(f.ID, "::"+suffix) || f.ID == name
			})
			if i < 0 {
				i = p.pluginItem(name)
			}
		}
		if i < 0 && p.summary {
			continue // the summary lists every failure; this block is not one more
		}
		if i < 0 {
			file, _, _ := strings.Cut(b.ID, "::")
			b.Package = file
			p.col.addFailure(srcPytest, b)
			continue
		}
		p.col.fill(i, b, true)
	}
	p.blocks = nil
}

// pluginItem finds the one failure a plugin item's block belongs to: the
// block is titled with the item's reportinfo ("usecase: hello" for
// "test_simple.yaml::hello"), which ends with the item's name. It returns
// -1 unless exactly one failure without a message yet fits.
func (p *pytest) pluginItem(title string) int {
	found := -1
	for i := range p.col.failures {
		f := &p.col.failures[i]
		k := strings.LastIndex(f.ID, "::")
		if k < 0 || f.Location != "" || strings.HasSuffix(f.Package, ".py") {
			continue
		}
		item := f.ID[k+2:]
		if title == item || strings.HasSuffix(title, " "+item) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

func (p *pytest) trigger() trigger {
	return trigger{lead: "=_FE", has: []string{" FAILED", " ERROR"}}
}
func (p *pytest) idle() bool { return !p.inBlock }
