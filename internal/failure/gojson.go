package failure

import (
	"encoding/json"
	"path/filepath"
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
	text    *goText
	failed  []string
	running map[string]bool
	partial strings.Builder
}

// goJSON recognizes the `go test -json` event stream. A package's output
// events, put back together, are the `go test -v` text, which goText
// reads; the fail events are then checked against what it found.
type goJSON struct {
	col    *collector
	pkgs   map[string]*goPkg
	builds map[string]*goPkg
}

func newGoJSON(col *collector) *goJSON {
	return &goJSON{col: col, pkgs: map[string]*goPkg{}, builds: map[string]*goPkg{}}
}

func (j *goJSON) line(s string) {
	if len(s) < 12 || s[0] != '{' || !strings.Contains(s, `"Action":"`) {
		return
	}
	var ev goEvent
	if json.Unmarshal([]byte(s), &ev) != nil {
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
		j.state(j.pkgs, ev.Package, ev.Package).output(ev.Output)
	case "run":
		p := j.state(j.pkgs, ev.Package, ev.Package)
		if ev.Test != "" && len(p.running) < maxGoOpen {
			p.running[ev.Test] = true
		}
	case "pass", "skip", "fail":
		p := j.state(j.pkgs, ev.Package, ev.Package)
		if ev.Test != "" {
			delete(p.running, ev.Test)
			if ev.Action == "fail" && len(p.failed) < maxGoPending {
				p.failed = append(p.failed, ev.Test)
			}
			return
		}
		j.endPackage(ev.Package, p, ev.Action == "fail" && ev.FailedBuild == "")
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
		for k, p := range m {
			j.endPackage(k, p, false)
			delete(m, k)
			break
		}
	}
	p := &goPkg{text: newGoText(j.col, srcGoJSON, keep(pkg)), running: map[string]bool{}}
	m[keep(key)] = p
	return p
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
	var missing []string
	missing = append(missing, p.failed...)
	for t := range p.running {
		missing = append(missing, t)
	}
	for _, t := range missing {
		if j.col.hasFailure(pkg, t) || j.explained(pkg, t, missing) {
			continue
		}
		j.col.addFailure(srcGoJSON, Failure{ID: t, Package: pkg, Message: "test failed (no output captured)"})
	}
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
	for k, p := range j.builds {
		p.text.finish()
		delete(j.builds, k)
	}
	for k, p := range j.pkgs {
		j.endPackage(k, p, false)
	}
}

// GoTestJSONArgs returns argv with -json added when argv is a plain
// `go test` command whose meaning does not change by it, so that its
// output can be read as the go test -json event stream. It returns
// (argv copy, true) when the command already asks for -json, and
// (nil, false) when -json cannot be added: not `go test`, or a flag that
// conflicts (-c, -bench, -fuzz, -list, -n, -o, -v=test2json, also when
// passed to the test binary after -args).
func GoTestJSONArgs(argv []string) ([]string, bool) {
	if len(argv) < 2 || filepath.Base(argv[0]) != "go" && filepath.Base(argv[0]) != "go.exe" || argv[1] != "test" {
		return nil, false
	}
	has := false
	for _, a := range argv[2:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "json":
			if val == "" || val == "true" {
				has = true
				continue
			}
			return nil, false
		case "c", "o", "n", "bench", "test.bench", "fuzz", "test.fuzz", "list", "test.list", "benchmem", "test.benchmem":
			return nil, false
		case "v", "test.v":
			if val != "" && val != "true" {
				return nil, false
			}
		}
	}
	out := make([]string, 0, len(argv)+1)
	out = append(out, argv[:2]...)
	if !has {
		out = append(out, "-json")
	}
	return append(out, argv[2:]...), true
}
