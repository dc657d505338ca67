package failure

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkQuietSame extracts in with every line fed to the recognizers (the
// reference: one reading, no quiet path) and with the quiet path, read
// once and read deferred, and fails t when the results differ in any
// byte. It reports whether the quiet path skipped anything.
func checkQuietSame(t *testing.T, name string, in []byte, opt Options) bool {
	t.Helper()
	return checkQuietSameAs(t, name, in, opt, true)
}

// checkQuietSameAs is checkQuietSame, reading with the quiet path only
// deferred unless once.
func checkQuietSameAs(t *testing.T, name string, in []byte, opt Options, once bool) bool {
	t.Helper()
	ref := opt
	ref.perLine = true
	want, err := Extract(streamOnly{bytes.NewReader(in)}, ref)
	if err != nil {
		t.Fatalf("%s: per line: %v", name, err)
	}
	w := renderAll(t, want)
	for _, r := range []struct {
		kind string
		in   func() any
	}{
		{"read once", func() any { return streamOnly{bytes.NewReader(in)} }},
		{"deferred", func() any { return bytes.NewReader(in) }},
	} {
		if r.kind == "read once" && !once {
			continue
		}
		var got *FailureContext
		switch rd := r.in().(type) {
		case streamOnly:
			got, err = Extract(rd, opt)
		case *bytes.Reader:
			got, err = Extract(rd, opt)
		}
		if err != nil {
			t.Fatalf("%s: %s: %v", name, r.kind, err)
		}
		if g := renderAll(t, got); g != w {
			t.Fatalf("%s: %s: the quiet path changed the result:\n%s", name, r.kind, firstDiff(g, w))
		}
	}
	return quietSkips(in) > 0
}

// quietSkips counts the bytes the quiet path skips in in, read as a
// seekable input is (the generic excerpt deferred).
func quietSkips(in []byte) int64 {
	s := &segmenter{opt: Options{}, proj: newProject(""), failed: newCollector(nil), other: newCollector(nil)}
	s.cur = newStep("", DefaultBudget, s.proj)
	s.cur.genLater = true
	lr := newLineReader(bytes.NewReader(in))
	var skipped int64
	for {
		if g := s.cur.q.goText; g != nil && g.pkgSeen {
			g.pkgSeen = false
			before := lr.offset()
			if s.quietReady() && lr.skipQuiet() {
				g.quietReset()
				skipped += lr.offset() - before
			}
		}
		s.lineStart = lr.offset()
		b, err := lr.next()
		if err != nil {
			return skipped
		}
		s.lineEnd = lr.offset()
		s.feed(view(b))
	}
}

// passingPackage is a real passing `go test -v` package (go-test-v-pass.txt)
// named pkg.
func passingPackage(t testing.TB, pkg string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "corpus", "go-test-v-pass.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "example.com/gomore/verbose", pkg)
}

// TestQuietSkipsPassingPackages: the quiet path does skip the passing
// packages of a go test -v log (else the other tests prove nothing), and
// the failures around them are found as when every line is read.
func TestQuietSkipsPassingPackages(t *testing.T) {
	t.Parallel()
	fail, err := os.ReadFile(filepath.Join("testdata", "corpus", "go-test-v.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < 40; i++ {
		b.WriteString(passingPackage(t, fmt.Sprintf("example.com/p%d", i)))
		if i == 20 {
			b.Write(fail)
		}
	}
	in := []byte(b.String())
	if n := quietSkips(in); n < int64(len(in))/2 {
		t.Fatalf("the quiet path skipped %d of %d bytes", n, len(in))
	}
	checkQuietSame(t, "go test -v log", in, Options{})
	fc, err := Extract(bytes.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fc.IDs(), " "); !strings.Contains(got, "TestAdd/negative") || !strings.Contains(got, "TestRepeat") {
		t.Errorf("failures %s", got)
	}
}

// corpusLines are the distinct lines of every text file of the corpus: the
// lines each recognizer acts on.
func corpusLines(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, ".json") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out
}

// TestQuietSameCorpusLines puts every line of the corpus into a passing
// package among passing packages, as it is and indented, and a fifth of
// them in each of other forms (timestamped, with a carriage return before
// the newline or overwritten by one, with a colour escape, tab-indented);
// then real failing output of several runners, which shows any state a
// skipped line should have left; and a sixth of them after each of a few
// lines that leave a recognizer at rest but not blank (a pytest section, a
// cargo target...). The quiet path must give what reading every line
// gives: a line it wrongly calls harmless (one that starts a report or
// changes a recognizer's state), or a rest that is not one, makes the
// results differ. Each log holds one line in one form: a second copy
// read line by line would leave the same state and hide the difference.
// (-short: a quarter of the logs.)
func TestQuietSameCorpusLines(t *testing.T) {
	t.Parallel()
	lines := corpusLines(t)
	if len(lines) < 500 {
		t.Fatalf("only %d corpus lines", len(lines))
	}
	probe := stateProbe(t, lines)
	// Lines the reader cuts at maxLine into a cargo block header and a
	// pytest banner (their ends are past the cut).
	lines = append(lines,
		"---- tests::adds stdout "+strings.Repeat("x", maxLine-len("---- tests::adds stdout  ----"))+" ----tail",
		"= short test summary info "+strings.Repeat("=", maxLine-len("= short test summary info "))+"tail")
	// The line goes among the tests' output of a small package (the real
	// one is too long to repeat thousands of times), between others.
	const small0 = "=== RUN   TestSmall\n    small_test.go:9: checked\n"
	const small1 = "--- PASS: TestSmall (0.00s)\nPASS\nok  \texample.com/small\t0.004s\n"
	forms := []func(string) string{
		func(l string) string { return l },
		func(l string) string { return "    " + l },
		func(l string) string { return "2024-05-01T12:00:00.1234567Z " + l },
		func(l string) string { return l + "\r" },
		func(l string) string { return "\x1b[31m" + l },
		func(l string) string { return "\t" + l },
		func(l string) string { return "progress 50%\r" + l },
	}
	prefixes := []string{"",
		"============================= FAILURES =============================\n",
		"=========================== short test summary info ============================\n",
		"     Running unittests src/lib.rs (target/debug/deps/rustfix-0123456789abcdef)\n",
		"FAIL src/calc.test.js\n",
		"✖ failing tests:\n",
		"---- tests::adds stdout ----\ntest result: ok. 1 passed\n",
	}
	scale := 1
	if testing.Short() {
		scale = 4
	}
	skipped, logs := 0, 0
	check := func(prefix string, form int, l string) {
		in := prefix + small0 + small1 + small0 + forms[form](l) + "\n" + small1 + small0 + small1 + probe
		logs++
		if checkQuietSameAs(t, fmt.Sprintf("prefix %q, form %d of corpus line %q", prefix, form, l), []byte(in),
			Options{}, false) {
			skipped++
		}
	}
	for i, l := range lines {
		for form := range forms {
			every := 5 * scale // the other forms: a fifth of the lines each
			if form < 2 {
				every = scale
			}
			if i%every == form%every {
				check("", form, l)
			}
		}
		for p := 1; p < len(prefixes); p++ {
			if i%(6*scale) == p {
				check(prefixes[p], 0, l)
			}
		}
	}
	if skipped < logs/2 {
		t.Errorf("the quiet path skipped something in only %d of %d logs", skipped, logs)
	}
}

// stateProbe is failing output of several runners that shows the state a
// skipped line should have left: go test output; cargo failures with no
// "Running" line before them (the target and the "---- x stdout ----"
// blocks of every test the corpus names); pytest -v result lines with no
// banner before them (the section); a node spec failure and a TAP failure
// one level down (the suites and subtests above them); go test -json
// events.
func stateProbe(t *testing.T, lines []string) string {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var b strings.Builder
	b.WriteString(read("go-test.txt"))
	var names []string
	for _, l := range lines {
		if n, ok := strings.CutPrefix(l, "---- "); ok && strings.HasSuffix(n, " ----") {
			n = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, " ----"), " stdout"), " stderr")
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		t.Fatal("no cargo block in the corpus")
	}
	for _, n := range names {
		b.WriteString("test " + n + " ... FAILED\n")
	}
	b.WriteString("\nfailures:\n")
	for _, n := range names {
		b.WriteString("    " + n + "\n")
	}
	b.WriteString("\ntest result: FAILED. 0 passed; 3 failed; 0 ignored\n\n")
	for _, l := range lines {
		if strings.Contains(l, "::") && strings.Contains(l, " FAILED") && !strings.HasPrefix(l, "FAILED") {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("  ✖ probe test (1.2ms)\n    Error: probe failed\n        at probe.test.js:3:9\n")
	b.WriteString("    not ok 1 - probe leaf\n      ---\n      error: 'probe'\n      ...\n")
	b.WriteString(read("go-test-json.jsonl"))
	return b.String()
}

// TestQuietSameMixed: real captures of every runner between passing go
// packages, in Actions logs and raw, give what reading every line gives.
func TestQuietSameMixed(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	if err != nil {
		t.Fatal(err)
	}
	pass := passingPackage(t, "example.com/q")
	for _, f := range files {
		if strings.HasSuffix(f, ".json") || strings.HasSuffix(f, ".xml") {
			continue
		}
		piece, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i := 0; i < 6; i++ {
			b.WriteString(pass)
			if i == 2 || i == 4 {
				b.Write(piece)
				if len(piece) > 0 && piece[len(piece)-1] != '\n' {
					b.WriteByte('\n')
				}
			}
		}
		checkQuietSame(t, filepath.Base(f), []byte(b.String()), Options{})
		checkQuietSame(t, filepath.Base(f)+" (budget 600)", []byte(b.String()), Options{Budget: 600})
	}
}

// TestQuietBenchLog: the benchmark's go test -v log, small, gives the
// same result either way, and the Actions bench log too.
func TestQuietBenchLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, shape := range []string{"gotestv", "actions"} {
		path := filepath.Join(dir, shape+".log")
		writeShapedLog(t, path, shape, 3)
		in, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		skipped := checkQuietSame(t, shape, in, Options{})
		if shape == "gotestv" && !skipped {
			t.Errorf("%s: nothing skipped", shape)
		}
	}
}

// FuzzQuiet: lines from the fuzzer inside passing go test -v packages give
// the same result on the quiet path as when every line is read.
func FuzzQuiet(f *testing.F) {
	f.Add([]byte("panic: boom\n"), uint8(3))
	f.Add([]byte("---- tests::x stdout ----\nthread 'x' panicked at src/lib.rs:1:2:\n"), uint8(1))
	f.Add([]byte("failures:\n    tests::x\n"), uint8(7))
	f.Add([]byte("=========== short test summary info ============\n"), uint8(0))
	f.Add([]byte("     Running unittests src/lib.rs (target/debug/deps/x-1)\n"), uint8(9))
	f.Add([]byte("error[E0308]: mismatched types\n  --> src/lib.rs:3:5\n"), uint8(2))
	f.Add([]byte("a.ts(1,2): error TS2345: x\n"), uint8(4))
	f.Add([]byte("not ok 1 - x\n"), uint8(5))
	f.Add([]byte("# Subtest: x\n"), uint8(6))
	f.Add([]byte("{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"TestX\"}\n"), uint8(8))
	f.Add([]byte("2024-05-01T12:00:00Z ##[group]Run x\n"), uint8(10))
	f.Add([]byte("ok  \tfake\t0.1s\r\n--- FAIL: TestZ (0.00s)\n"), uint8(11))
	pass := passingPackage(f, "example.com/f")
	runs := []int{}
	for i := 0; i < len(pass); i++ {
		if i == 0 || pass[i-1] == '\n' {
			runs = append(runs, i)
		}
	}
	f.Fuzz(func(t *testing.T, lines []byte, at uint8) {
		if len(lines) > 4096 {
			return
		}
		cut := runs[int(at)%len(runs)]
		in := pass + pass[:cut] + string(lines) + "\n" + pass[cut:] + pass
		checkQuietSame(t, "fuzz input", []byte(in), Options{Budget: 600})
	})
}
