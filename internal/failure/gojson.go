package failure

import (
	"encoding/json"
	"sort"
	"strings"
)

const (
	srcGoJSON = "go-json"
	// maxGoPackages bounds the packages whose events are tracked at once.
	maxGoPackages = 64
)

// goEvent is one line of `go test -json` (test2json) output, including the
// build events of Go 1.24 and later.
type goEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
}

// goPkg is the state of one package in the event stream.
type goPkg struct {
	seq     int // order of first appearance, for a stable eviction and finish
	text    *goText
	failed  []string
	running map[string]int // tests started and not finished, by start order
	runSeq  int
	partial strings.Builder
}

// goJSON recognizes the `go test -json` event stream. A package's output
// events, put back together, are the `go test -v` text, which goText
// reads; the fail events are then checked against what it found.
type goJSON struct {
	col    *collector
	pkgs   map[string]*goPkg
	builds map[string]*goPkg
	seq    int
	dec    eventDecoder
}

func newGoJSON(col *collector) *goJSON {
	return &goJSON{col: col, pkgs: map[string]*goPkg{}, builds: map[string]*goPkg{}}
}

func (j *goJSON) line(s string) {
	if len(s) < 12 || s[0] != '{' || !strings.Contains(s, `"Action":"`) {
		return
	}
	// The event's strings may be views of s or of j.dec's buffer: what is
	// kept beyond this call is cloned.
	var ev goEvent
	if !j.dec.decode(s, &ev) && json.Unmarshal([]byte(s), &ev) != nil {
		return
	}
	switch ev.Action {
	case "build-output":
		p := j.state(j.builds, ev.ImportPath, importPathPackage(ev.ImportPath))
		p.output(ev.Output)
	case "build-fail":
		if p, ok := j.builds[ev.ImportPath]; ok {
			p.text.finish()
			delete(j.builds, ev.ImportPath)
		}
	case "output":
		j.state(j.pkgs, ev.Package, ev.Package).outputOf(ev.Test, ev.Output)
	case "run":
		p := j.state(j.pkgs, ev.Package, ev.Package)
		if _, ok := p.running[ev.Test]; ev.Test != "" && !ok && len(p.running) < maxGoOpen {
			p.runSeq++
			p.running[keep(ev.Test)] = p.runSeq
		}
	case "pass", "skip", "fail":
		p := j.state(j.pkgs, ev.Package, ev.Package)
		if ev.Test != "" {
			delete(p.running, ev.Test)
			if ev.Action == "fail" && len(p.failed) < maxGoPending {
				p.failed = append(p.failed, keep(ev.Test))
			}
			return
		}
		j.endPackage(keep(ev.Package), p, ev.Action == "fail" && ev.FailedBuild == "")
	}
}

// importPathPackage turns "pkg [pkg.test]" into "pkg".
func importPathPackage(ip string) string {
	p, _, _ := strings.Cut(ip, " ")
	return p
}

func (j *goJSON) state(m map[string]*goPkg, key, pkg string) *goPkg {
	if p, ok := m[key]; ok {
		return p
	}
	if len(m) >= maxGoPackages {
		// Evict the oldest package (never a random one: the same log must
		// always give the same result).
		k := oldest(m)
		j.endPackage(k, m[k], false)
		delete(m, k)
	}
	j.seq++
	text := newGoText(j.col, srcGoJSON, keep(pkg))
	text.events = true
	p := &goPkg{seq: j.seq, text: text, running: map[string]int{}}
	m[keep(key)] = p
	return p
}

// oldest returns the key of the package of m seen first.
func oldest(m map[string]*goPkg) string {
	best, seq := "", 0
	for k, p := range m {
		if best == "" || p.seq < seq {
			best, seq = k, p.seq
		}
	}
	return best
}

// inOrder returns the keys of m in the order their packages were first seen.
func inOrder(m map[string]*goPkg) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return m[keys[a]].seq < m[keys[b]].seq })
	return keys
}

// outputOf is output for the output events of test (or of the package,
// when test is ""): goText trusts verdict lines only from their own test.
func (p *goPkg) outputOf(test, out string) {
	if test != p.text.evTest {
		p.text.evTest = keep(test)
	}
	p.output(out)
}

// output feeds an output event's text to the package's text recognizer,
// joining lines that test2json split.
func (p *goPkg) output(out string) {
	for out != "" {
		line, rest, complete := strings.Cut(out, "\n")
		if !complete {
			if p.partial.Len()+len(line) <= maxLine {
				p.partial.WriteString(line)
			}
			return
		}
		if p.partial.Len() > 0 {
			if p.partial.Len()+len(line) <= maxLine {
				p.partial.WriteString(line)
			}
			line = p.partial.String()
			p.partial.Reset()
		}
		p.text.line(strings.TrimSuffix(line, "\r"))
		out = rest
	}
}

// endPackage finishes a package; when it failed, fail events and tests
// cut short that the text did not explain are reported too.
func (j *goJSON) endPackage(pkg string, p *goPkg, failed bool) {
	if p.partial.Len() > 0 {
		p.text.line(p.partial.String())
		p.partial.Reset()
	}
	p.text.finish()
	delete(j.pkgs, pkg)
	if !failed {
		return
	}
	// A fail event the text did not explain is a failure all the same.
	for _, t := range p.failed {
		if j.col.hasFailure(pkg, t) || j.explained(pkg, t, p.failed) {
			continue
		}
		j.col.addFailure(srcGoJSON, Failure{ID: t, Package: pkg, Message: "test failed (no output captured)"})
	}
	// Tests still running when the binary died (another test panicked,
	// os.Exit) did not fail: they were interrupted. They are named on the
	// package's failure, in the order they started.
	var cut []string
	for t := range p.running {
		if !j.col.hasFailure(pkg, t) && !j.explained(pkg, t, nil) {
			cut = append(cut, t)
		}
	}
	if len(cut) == 0 {
		return
	}
	sort.Slice(cut, func(a, b int) bool { return p.running[cut[a]] < p.running[cut[b]] })
	note := clip("interrupted (still running when the test binary exited, not failed themselves): "+
		strings.Join(cut, ", "), maxMessage/2)
	if i := j.col.find(func(f *Failure) bool { return f.Package == pkg }); i >= 0 {
		// The note goes after the message, which is shortened for it.
		f := &j.col.failures[i]
		f.Message = keep(clip(strings.TrimRight(f.Message, "\n "), maxMessage-len(note)-1) + "\n" + note)
		return
	}
	j.col.addFailure(srcGoJSON, Failure{ID: pkg, Package: pkg,
		Message: "the test binary exited while tests were running; " + note})
}

// explained reports whether test t only failed through a subtest.
func (j *goJSON) explained(pkg, t string, failed []string) bool {
	for _, f := range j.col.failures {
		if f.Package == pkg && strings.HasPrefix(f.ID, t+"/") {
			return true
		}
	}
	for _, o := range failed {
		if strings.HasPrefix(o, t+"/") {
			return true
		}
	}
	return false
}

func (j *goJSON) finish() {
	for _, k := range inOrder(j.builds) {
		j.builds[k].text.finish()
		delete(j.builds, k)
	}
	for _, k := range inOrder(j.pkgs) {
		j.endPackage(k, j.pkgs[k], false)
	}
}

func (j *goJSON) trigger() trigger { return trigger{lead: "{"} }
func (j *goJSON) idle() bool       { return true }
