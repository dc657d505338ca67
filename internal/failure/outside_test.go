package failure

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusDeterministic extracts every corpus file several times: the
// same log must always give byte-identical context (JSON and rendered
// text), whatever the order of map iteration in between.
func TestCorpusDeterministic(t *testing.T) {
	t.Parallel()
	for _, c := range corpus(t) {
		var first string
		for i := 0; i < 12; i++ {
			fc, err := ExtractFile(c.file, c.options())
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(fc)
			if err != nil {
				t.Fatal(err)
			}
			got := string(b) + "\n" + fc.Render(0) + "\n" + fc.Render(600)
			if i == 0 {
				first = got
			} else if got != first {
				t.Errorf("%s: extraction %d differs from the first:\n%s\n---\n%s", c.name, i, got, first)
				break
			}
		}
	}
}

func TestProjectForeign(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newProject(ws)
	wsAbs, _ := filepath.Abs(ws)
	for _, tc := range []struct {
		file    string
		foreign bool
	}{
		{"/usr/local/go/src/testing/testing.go", true},
		{"/opt/hostedtoolcache/go/1.22.1/x64/src/runtime/panic.go", true},
		{"/go/src/app/calc/calc.go", false},                      // GOPATH checkout in a golang image
		{"/go/src/github.com/org/repo/pkg/x.go", false},          // GOPATH layout
		{"/root/go/pkg/mod/github.com/x/y@v1.0.0/y.go", true},    // module cache
		{"/home/runner/work/repo/repo/src/testing/t.go", false},  // a runner checkout
		{filepath.ToSlash(wsAbs) + "/src/runtime/r.go", false},   // inside the workspace
		{filepath.ToSlash(wsAbs) + "/node_modules/x/i.js", true}, // a dependency, even there
		{"/rustc/abc/library/core/src/panicking.rs", true},
		{"/usr/lib/python3.11/unittest/case.py", true},
		{"node:internal/process", true},
		{"src/app.js", false},
	} {
		if got := p.foreign(tc.file); got != tc.foreign {
			t.Errorf("foreign(%q) = %v, want %v", tc.file, got, tc.foreign)
		}
	}
	// The module's own frames are its own wherever the checkout is.
	if p.goForeignFrame("example.com/own/calc.Div", "/srv/build/calc/calc.go") {
		t.Error("own module frame taken as foreign")
	}
	if !p.goForeignFrame("testing.tRunner", "/usr/local/go/src/testing/testing.go") {
		t.Error("testing frame taken as the project's")
	}
}

func TestPytestIDsAndLocations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"test_a.py::test_x", true}, {"test_a.py", true}, {"test_simple.yaml::hello", true},
		{"docs/usage.rst::usage.rst", true}, {"mathdoc.txt::mathdoc.txt", true},
		{"test_simple.yaml", false}, {"usecase: hello", false}, {"no_ext::x", false}, {"a b.txt::x", false},
	} {
		if got := pyNodeID(tc.id); got != tc.ok {
			t.Errorf("pyNodeID(%q) = %v, want %v", tc.id, got, tc.ok)
		}
	}
	for _, tc := range []struct{ line, loc string }{
		{"test_calc.py:29: RuntimeError", "test_calc.py:29"},
		{"/w/docs/usage.rst:8: DocTestFailure", "/w/docs/usage.rst:8"},
		{"/w/test_fixtures.py:4", "/w/test_fixtures.py:4"},
		{`C:\w\test_a.py:7: AssertionError`, `C:\w\test_a.py:7`},
		{"    x = f(1):2", ""}, {"file /w/t.py, line 4", ""}, {"a:1: b", ""}, {"t.py:x: y", ""},
	} {
		file, line, ok := pyLocLine(tc.line)
		got := ""
		if ok {
			got = file + ":" + line
		}
		if got != tc.loc {
			t.Errorf("pyLocLine(%q) = %q, want %q", tc.line, got, tc.loc)
		}
	}
}

// TestGoJSONTrustsEvents: text inside a test's output that looks like a
// verdict or a package line makes no failure and ends nothing.
func TestGoJSONTrustsEvents(t *testing.T) {
	t.Parallel()
	ev := func(action, test, out string) string {
		b, _ := json.Marshal(map[string]string{"Action": action, "Package": "ex.com/p", "Test": test, "Output": out})
		return string(b) + "\n"
	}
	in := ev("run", "TestA", "") + ev("output", "TestA", "=== RUN   TestA\n") +
		ev("output", "TestA", "--- FAIL: TestGhost (0.00s)\n") + ev("output", "TestA", "FAIL\tex.com/p\t0.1s\n") +
		ev("output", "TestA", "    a_test.go:9: real failure\n") + ev("output", "TestA", "--- FAIL: TestA (0.00s)\n") +
		ev("fail", "TestA", "") + ev("output", "", "FAIL\tex.com/p\t0.2s\n") + ev("fail", "", "")
	checkRecognizer(t, []recognizerCase{{name: "fake verdicts", source: "go-json", in: in,
		fails: []wantFailure{{"ex.com/p", "TestA", "a_test.go:9", "real failure"}}}})
}

// TestGoJSONInterruptedWithoutPanic: a binary that exits while tests run
// (os.Exit) gives one package failure naming them, not invented failures.
func TestGoJSONInterruptedWithoutPanic(t *testing.T) {
	t.Parallel()
	ev := func(action, test, out string) string {
		b, _ := json.Marshal(map[string]string{"Action": action, "Package": "ex.com/p", "Test": test, "Output": out})
		return string(b) + "\n"
	}
	in := ev("run", "TestB", "") + ev("run", "TestA", "") + ev("output", "", "exit status 3\n") +
		ev("output", "", "FAIL\tex.com/p\t0.2s\n") + ev("fail", "", "")
	fc := extractString(t, in)
	if len(fc.Failures) != 1 || fc.Failures[0].ID != "ex.com/p" ||
		!strings.HasSuffix(fc.Failures[0].Message, "not failed themselves): TestB, TestA") {
		t.Errorf("got %+v", fc.Failures)
	}
}

func TestXMLNotAReport(t *testing.T) {
	t.Parallel()
	in := "<?xml version=\"1.0\"?>\n<lint>\n<issue file=\"a.c\" msg=\"fatal: bad thing\"/>\n</lint>\n"
	fc := extractString(t, in)
	if fc.Source != "generic" || !strings.Contains(fc.Generic, "fatal: bad thing") || fc.Note != "" {
		t.Errorf("got %+v", fc)
	}
	if !strings.Contains(fc.Render(0), "fatal: bad thing") {
		t.Errorf("render lacks the excerpt:\n%s", fc.Render(0))
	}
}

type failingReader struct{ r io.Reader }

var errDisk = errors.New("disk gone")

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errDisk
	}
	return n, err
}

// TestXMLReadError: a failing read is an error, not a cut report.
func TestXMLReadError(t *testing.T) {
	t.Parallel()
	_, err := Extract(&failingReader{strings.NewReader(`<?xml version="1.0"?><testsuite><testcase name="x">`)}, Options{})
	if !errors.Is(err, errDisk) {
		t.Errorf("err = %v, want %v", err, errDisk)
	}
}

// looksLikeErrorRef is the plain scan looksLikeError must agree with:
// an error word at any position, ignoring case.
func looksLikeErrorRef(s string) bool {
	for i := 0; i < len(s); i++ {
		for _, w := range errorWords {
			if hasFoldPrefix(s[i:], w) {
				return true
			}
		}
	}
	return false
}

// TestLooksLikeErrorAgrees compares the skipping scan with the plain one
// on every line of the corpus and on each error word at every offset and
// in every case.
func TestLooksLikeErrorAgrees(t *testing.T) {
	t.Parallel()
	var inputs []string
	for _, c := range corpus(t) {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, strings.Split(string(b), "\n")...)
	}
	for _, w := range errorWords {
		for _, v := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:], w[:len(w)-1]} {
			for pad := 0; pad < 5; pad++ {
				inputs = append(inputs, strings.Repeat("x", pad)+v, strings.Repeat("@", pad)+v+"!", v+strings.Repeat(" ", pad))
			}
		}
	}
	inputs = append(inputs, "NOT\x00FOUND", "cannot", "cannot\x00", "")
	for _, s := range inputs {
		if got, want := looksLikeError(s), looksLikeErrorRef(s); got != want {
			t.Errorf("looksLikeError(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzLooksLikeError(f *testing.F) {
	for _, w := range errorWords {
		f.Add("x" + w + "y")
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := looksLikeError(s), looksLikeErrorRef(s); got != want {
			t.Errorf("looksLikeError(%q) = %v, want %v", s, got, want)
		}
	})
}

func TestScanFlags(t *testing.T) {
	t.Parallel()
	ref := func(b []byte) (bool, bool, bool) { return scanFlagsSlow(b, false, false, false) }
	base := []byte("2024-05-01 plain ascii log line with some length to it, ok")
	for i := 0; i <= len(base); i++ {
		for _, c := range []byte{0x1b, '\r', 0x80, 0xff, 0xe2, 0x00, 0x01, 0x1a, 0x1c, 0x0c, 0x0e, 0x7f} {
			b := append([]byte(nil), base[:i]...)
			b = append(b, c)
			b = append(b, base[i:]...)
			e1, c1, h1 := scanFlags(b)
			e2, c2, h2 := ref(b)
			if e1 != e2 || c1 != c2 || h1 != h2 {
				t.Errorf("scanFlags(%q) = %v %v %v, want %v %v %v", b, e1, c1, h1, e2, c2, h2)
			}
		}
	}
}

// TestGenericOfFirstFailedStep: the excerpt comes from the first failed
// step that printed something, whatever later steps print (they are not
// scanned once it is known).
func TestGenericOfFirstFailedStep(t *testing.T) {
	t.Parallel()
	in := "##[group]Run first\nfirst\n##[endgroup]\nfatal: first step broke\n##[error]Process completed with exit code 2.\n" +
		"##[group]Run second\nsecond\n##[endgroup]\nfatal: second step broke\n##[error]Process completed with exit code 3.\n" +
		"##[group]Run third\nthird\n##[endgroup]\nerror: third step is fine\n"
	fc := extractString(t, in)
	if !strings.Contains(fc.Generic, "first step broke") || strings.Contains(fc.Generic, "second") ||
		strings.Contains(fc.Generic, "third") || fc.Step != "Run first" || fc.ExitCode != 2 {
		t.Errorf("got %+v", fc)
	}
}

// TestJUnitLocationInMessage: a reporter that gives the location only in
// the failure's message attribute (no text, no file/line attributes).
func TestJUnitLocationInMessage(t *testing.T) {
	t.Parallel()
	in := `<?xml version="1.0"?><testsuite name="s">` +
		`<testcase classname="c" name="m"><failure message="expected 1, got 2 (src/m.js:4:2)" type="AssertionError"/></testcase>` +
		`<testcase classname="c" name="p"><failure message="/w/tests/test_p.py:9: AssertionError">E   assert 1 == 2</failure></testcase>` +
		`</testsuite>`
	checkRecognizer(t, []recognizerCase{{name: "message attribute", source: "junit", in: in, fails: []wantFailure{
		{"c", "m", "src/m.js:4:2", "AssertionError: expected 1, got 2"},
		{"c", "p", "/w/tests/test_p.py:9", "test_p.py:9"}}}})
}

// TestNUnitAndTRXSnippets: the two .NET formats, read from a reader (not
// a .xml file name), with the .NET stack frame form "in FILE:line N".
func TestNUnitAndTRXSnippets(t *testing.T) {
	t.Parallel()
	nunit := `<?xml version="1.0"?><test-run><test-suite type="TestFixture" name="T">` +
		`<test-case name="A" fullname="N.T.A" classname="N.T" result="Failed"><failure><message><![CDATA[  Expected: 1
  But was:  2
]]></message><stack-trace><![CDATA[   at N.T.A() in /src/T.cs:line 12
]]></stack-trace></failure></test-case>` +
		`<test-case name="B" fullname="N.T.B" classname="N.T" result="Passed"/></test-suite></test-run>`
	trx := `<?xml version="1.0"?><TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"><Results>` +
		`<UnitTestResult testName="Fails" outcome="Failed"><Output><StdOut>noise at /src/X.cs:line 1</StdOut><ErrorInfo>` +
		`<Message>boom</Message><StackTrace>   at System.Thing() in /usr/share/dotnet/x.cs:line 3
   at N.T.Fails() in C:\src\T.cs:line 40</StackTrace></ErrorInfo></Output></UnitTestResult>` +
		`<UnitTestResult testName="Passes" outcome="Passed"/></Results></TestRun>`
	checkRecognizer(t, []recognizerCase{
		{name: "nunit 3", source: "nunit", in: nunit, fails: []wantFailure{{"N.T", "N.T.A", "/src/T.cs:12", "Expected: 1"}}},
		{name: "trx", source: "trx", in: trx, fails: []wantFailure{{"", "Fails", "C:/src/T.cs:40", "boom"}}},
	})
}

// TestXMLReportThatPassed: a known report with no failure is understood
// (nothing failed), not shown as a generic excerpt.
func TestXMLReportThatPassed(t *testing.T) {
	t.Parallel()
	fc := extractString(t, `<?xml version="1.0"?><testsuite name="s" failures="0" errors="0"><testcase name="ok"/></testsuite>`)
	if !fc.Empty() || fc.Note != "" {
		t.Errorf("got %+v", fc)
	}
	// Cut before any failure: not "nothing failed".
	cut := extractString(t, "<?xml version=\"1.0\"?>\n<testsuite name=\"s\">\n<testcase name=\"ok\"/>\n<testcase name=\"bad\"")
	if cut.Empty() || cut.Note == "" || !strings.Contains(cut.Generic, "testcase") {
		t.Errorf("cut report: %+v", cut)
	}
}

// TestLongInvalidLine: a line longer than the read buffer, with invalid
// UTF-8 in its kept head, is repaired, not scrambled.
func TestLongInvalidLine(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("\xff", 100) + "--- FAIL: TestLong (0.00s)"
	in := head + strings.Repeat("x", readBuffer*2) + "\nnext line\n"
	lr := newLineReader(bufio.NewReaderSize(strings.NewReader(in), readBuffer))
	b, err := lr.next()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("\uFFFD", 100) + "--- FAIL: TestLong (0.00s)"
	if got := string(b); !strings.HasPrefix(got, want) {
		t.Errorf("line starts %q, want %q", got[:min(len(got), 400)], want)
	}
	if b, _ := lr.next(); string(b) != "next line" {
		t.Errorf("next line %q", b)
	}
}
