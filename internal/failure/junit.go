package failure

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

const (
	srcJUnit = "junit"
	srcNUnit = "nunit"
	srcTRX   = "trx"
	// maxXMLDepth bounds the element nesting the reader follows.
	maxXMLDepth = 256
)

// xmlRoots are the document starts read as a test report.
var xmlRoots = [][]byte{[]byte("<?xml"), []byte("<testsuite"), []byte("<TestRun"), []byte("<test-run"),
	[]byte("<test-results")}

// isXML reports whether the buffered input starts like an XML document.
func isXML(br *bufio.Reader) bool {
	head, _ := br.Peek(512)
	head = bytes.TrimPrefix(head, []byte("\uFEFF"))
	head = bytes.TrimLeft(head, " \t\r\n")
	for _, r := range xmlRoots {
		if bytes.HasPrefix(head, r) {
			return true
		}
	}
	return false
}

// junitCase is the test case being read, from any of the report formats.
type junitCase struct {
	src                     string
	name, class, file, line string
	failed                  bool
	kind, message, typ      string
	text                    lines // JUnit: the failure element's text
	msg                     lines // NUnit, TRX: the message element
	stack                   lines // NUnit, TRX: the stack-trace element
	msgDone, stackDone      bool
}

func newCase(src, name, class string) *junitCase {
	return &junitCase{src: src, name: name, class: class, text: newLines(maxExcerptLines, maxExcerpt),
		msg: newLines(maxExcerptLines, maxMessage), stack: newLines(maxExcerptLines, maxExcerpt)}
}

// xmlReport reads one XML test report with a streaming decoder: JUnit
// (testsuites/testsuite/testcase with failure or error children), NUnit 2
// and 3 (test-case with result="Failed"/"Failure"/"Error" and
// failure/message, stack-trace children) and Visual Studio TRX
// (UnitTestResult with outcome="Failed" and Output/ErrorInfo/Message,
// StackTrace). What the reader does not know is kept by the generic
// excerpt, fed with the raw lines as the decoder reads them.
type xmlReport struct {
	proj   *project
	col    *collector
	gen    *genericRec
	suites []string
	tc     *junitCase
	dest   *lines // where character data goes, nil when nowhere
	depth  int
	cases  bool // a test case of a known format was seen
}

// nunitFailed and trxFailed are the results that mean a failed test.
var (
	nunitFailed = map[string]bool{"Failed": true, "Failure": true, "Error": true}
	trxFailed   = map[string]bool{"Failed": true, "Error": true, "Timeout": true, "Aborted": true}
)

// extractJUnit reads an XML test report. A report cut short (the job was
// killed while the reporter wrote it) or otherwise broken gives the
// failures read before the break, and a note saying so; an XML document
// with no test report in it gives the generic excerpt.
func extractJUnit(r io.Reader, opt Options) (*FailureContext, error) {
	proj := newProject(opt.Workspace)
	x := &xmlReport{proj: proj, col: newCollector(proj), gen: newGeneric(budgetOf(opt))}
	feed := &lineFeeder{gen: x.gen}
	d := xml.NewDecoder(io.TeeReader(markReader{r}, feed))
	d.Strict = false
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	note := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			if x.depth > 0 {
				note = fmt.Sprintf("the XML report ends early (cut off at line %d, %d element(s) left open)",
					feed.lines+1, x.depth)
			}
			break
		}
		if err != nil {
			var rerr *readError
			if errors.As(err, &rerr) {
				return nil, fmt.Errorf("extract failure: %w", rerr.err)
			}
			note = fmt.Sprintf("the XML report ends early or is broken (%v)", err)
			break
		}
		if err := x.token(d, tok); err != nil {
			note = fmt.Sprintf("the XML report ends early or is broken (%v)", err)
			break
		}
	}
	feed.flush()
	if x.tc != nil && x.tc.failed {
		// The case the report was cut in: what it holds so far.
		x.col.addFailure(x.tc.src, x.tc.failure(x.suites, proj))
	}
	if note != "" {
		note += "; the failures it holds are listed"
	}
	fc := &FailureContext{Failures: x.col.failures, BuildErrors: x.col.builds, Omitted: x.col.omitted,
		Source: strings.Join(x.col.sources, ","), Budget: budgetOf(opt), Note: note}
	if x.col.empty() && (!x.cases || note != "") {
		// Not a report this reader knows, or one cut before any failure
		// (a whole report that passed says so: nothing failed).
		if g := x.gen.text(); g != "" {
			fc.Generic, fc.Source = g, "generic"
		}
	}
	newNormalizer(opt.Workspace).apply(fc)
	return fc, nil
}

// token handles one token of the document.
func (x *xmlReport) token(d *xml.Decoder, tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		x.depth++
		if x.depth > maxXMLDepth {
			return errors.New("elements nested too deep")
		}
		return x.start(d, t)
	case xml.CharData:
		if x.dest != nil {
			for _, l := range strings.Split(strings.Trim(string(t), "\r\n"), "\n") {
				x.dest.add(strings.TrimRight(l, "\r"))
			}
		}
	case xml.EndElement:
		x.depth--
		x.end(t.Name.Local)
	}
	return nil
}

func (x *xmlReport) start(d *xml.Decoder, t xml.StartElement) error {
	tc := x.tc
	switch t.Name.Local {
	case "testsuite":
		if len(x.suites) < 64 {
			x.suites = append(x.suites, attr(t, "name"))
		}
	case "testcase": // JUnit
		x.cases = true
		x.tc = newCase(srcJUnit, attr(t, "name"), attr(t, "classname"))
		x.tc.file, x.tc.line = attr(t, "file"), attr(t, "line")
	case "test-case": // NUnit 2 and 3
		x.cases = true
		name := attr(t, "fullname")
		if name == "" {
			name = attr(t, "name")
		}
		x.tc = newCase(srcNUnit, name, attr(t, "classname"))
		x.tc.failed = nunitFailed[attr(t, "result")]
	case "UnitTestResult": // TRX
		x.cases = true
		x.tc = newCase(srcTRX, attr(t, "testName"), "")
		x.tc.failed = trxFailed[attr(t, "outcome")]
	case "failure", "error":
		if tc != nil && tc.src == srcJUnit && !tc.failed {
			tc.failed, tc.kind = true, t.Name.Local
			tc.message, tc.typ = attr(t, "message"), attr(t, "type")
			x.dest = &tc.text
		}
	case "message", "Message":
		if tc != nil && tc.src != srcJUnit && tc.failed && !tc.msgDone {
			x.dest = &tc.msg
		}
	case "stack-trace", "StackTrace":
		if tc != nil && tc.src != srcJUnit && tc.failed && !tc.stackDone {
			x.dest = &tc.stack
		}
	case "system-out", "system-err", "properties", "skipped", "StdOut", "StdErr", "output", "reason":
		x.depth--
		return d.Skip()
	}
	return nil
}

func (x *xmlReport) end(name string) {
	tc := x.tc
	switch name {
	case "failure", "error":
		if tc != nil && tc.src == srcJUnit {
			x.dest = nil
		}
	case "message", "Message":
		if tc != nil && x.dest == &tc.msg {
			tc.msgDone = true
		}
		x.dest = nil
	case "stack-trace", "StackTrace":
		if tc != nil && x.dest == &tc.stack {
			tc.stackDone = true
		}
		x.dest = nil
	case "testcase", "test-case", "UnitTestResult":
		if tc != nil && tc.failed {
			x.col.addFailure(tc.src, tc.failure(x.suites, x.proj))
		}
		x.tc, x.dest = nil, nil
	case "testsuite":
		if len(x.suites) > 0 {
			x.suites = x.suites[:len(x.suites)-1]
		}
	}
}

func (c *junitCase) failure(suites []string, proj *project) Failure {
	if c.src != srcJUnit {
		msg := strings.TrimSpace(c.msg.String())
		stack := strings.TrimSpace(c.stack.String())
		loc := dotnetLoc(stack, proj)
		if loc == "" {
			loc = proj.firstLoc(stack)
		}
		if loc == "" {
			loc = proj.firstLoc(msg)
		}
		return Failure{ID: c.name, Package: c.class, Location: loc, Message: msg, Excerpt: stack}
	}
	pkg := c.class
	if pkg == "" && len(suites) > 0 {
		pkg = suites[len(suites)-1]
	}
	text := strings.TrimSpace(c.text.String())
	msg := strings.TrimSpace(c.message)
	if msg == "" {
		msg, _, _ = strings.Cut(text, "\n")
	}
	if (strings.HasSuffix(c.typ, "Error") || strings.HasSuffix(c.typ, "Exception")) && !strings.HasPrefix(msg, c.typ) {
		msg = c.typ + ": " + msg
	}
	loc := ""
	if c.file != "" && allDigits(c.line) {
		loc = c.file + ":" + c.line
	} else if loc = proj.firstLoc(text); loc == "" {
		// pytest's report ends with "path:NN: Error" (a doctest's file
		// too); some reporters give the location only in the message.
		if loc = pyLastLoc(text); loc == "" {
			if loc = proj.firstLoc(c.message); loc == "" {
				loc = pyLastLoc(c.message)
			}
		}
	}
	return Failure{ID: c.name, Package: pkg, Location: loc, Message: msg, Excerpt: text}
}

// pyLastLoc is the last "path:NN: Error" (or bare "path:NN") line of s.
func pyLastLoc(s string) string {
	for s != "" {
		var l string
		if i := strings.LastIndexByte(s, '\n'); i >= 0 {
			s, l = s[:i], s[i+1:]
		} else {
			s, l = "", s
		}
		if file, line, ok := pyLocLine(strings.TrimSpace(l)); ok {
			return file + ":" + line
		}
	}
	return ""
}

// dotnetLoc returns the first project frame of a .NET stack trace,
// "   at Ns.Class.Method() in /src/Tests/CalcTests.cs:line 21", as
// "/src/Tests/CalcTests.cs:21".
func dotnetLoc(stack string, proj *project) string {
	for _, l := range strings.Split(stack, "\n") {
		i := strings.LastIndex(l, ":line ")
		if i < 0 {
			continue
		}
		j := strings.LastIndex(l[:i], " in ")
		if j < 0 {
			continue
		}
		file, n := l[j+len(" in "):i], strings.TrimSpace(l[i+len(":line "):])
		fn := strings.TrimPrefix(strings.TrimSpace(l[:j]), "at ")
		if file == "" || !allDigits(n) || proj.foreign(file) || dotnetForeign(fn, file) {
			continue
		}
		return file + ":" + n
	}
	return ""
}

// dotnetForeign reports frames of the .NET runtime and test frameworks:
// their namespaces, and sources built by Microsoft's CI ("/_/src/...").
func dotnetForeign(fn, file string) bool {
	for _, ns := range []string{"System.", "Microsoft.", "NUnit.", "Xunit.", "MSTest."} {
		if strings.HasPrefix(fn, ns) {
			return true
		}
	}
	return strings.HasPrefix(file, "/_/") || strings.Contains(file, "/dotnet/shared/")
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// readError marks an error of the underlying reader (not of the XML).
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

// markReader marks the errors of its reader, so that a failing read is
// not taken for a broken document.
type markReader struct{ r io.Reader }

func (m markReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = &readError{err}
	}
	return n, err
}

// lineFeeder is an io.Writer that splits what the XML decoder reads into
// lines (each cut to maxLine bytes) for the generic excerpt.
type lineFeeder struct {
	gen   *genericRec
	buf   []byte
	over  bool // the current line passed maxLine
	lines int
}

func (f *lineFeeder) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !f.over {
			room := maxLine - len(f.buf)
			if len(chunk) > room {
				chunk, f.over = chunk[:room], true
			}
			f.buf = append(f.buf, chunk...)
		}
		if i < 0 {
			break
		}
		f.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (f *lineFeeder) emit() {
	f.lines++
	line := bytes.TrimSuffix(f.buf, []byte{'\r'})
	if f.lines == 1 {
		line = bytes.TrimPrefix(line, []byte("\uFEFF"))
	}
	f.gen.line(strings.ToValidUTF8(string(line), "\uFFFD"), false)
	f.buf, f.over = f.buf[:0], false
}

// flush feeds the last line when the input does not end with a newline.
func (f *lineFeeder) flush() {
	if len(f.buf) > 0 {
		f.emit()
	}
}
