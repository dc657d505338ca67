package failure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// streamOnly hides a reader's Seek: Extract then reads the input once,
// recognizing every step and building the generic excerpt as it goes.
type streamOnly struct{ io.Reader }

// renderAll is the context as JSON and rendered at two budgets.
func renderAll(t *testing.T, fc *FailureContext) string {
	t.Helper()
	b, err := json.MarshalIndent(fc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n----\n" + fc.Render(0) + "\n----\n" + fc.Render(600)
}

// checkDeferredSame extracts in with a deferred reading (a seekable
// reader, also one that starts past a prefix) and with one reading (a
// plain reader), and fails t when the results differ in any byte.
func checkDeferredSame(t *testing.T, name string, in []byte, opt Options) (generic bool) {
	t.Helper()
	want, err := Extract(streamOnly{bytes.NewReader(in)}, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got, err := Extract(bytes.NewReader(in), opt)
	if err != nil {
		t.Fatalf("%s: deferred: %v", name, err)
	}
	w := renderAll(t, want)
	if g := renderAll(t, got); g != w {
		t.Fatalf("%s: deferred excerpt differs:\n%s", name, firstDiff(g, w))
	}
	// The input starting 7 bytes into the reader (origin > 0).
	r := bytes.NewReader(append([]byte("prefix\n"), in...))
	if _, err := r.Seek(7, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err = Extract(r, opt)
	if err != nil {
		t.Fatalf("%s: deferred past a prefix: %v", name, err)
	}
	if g := renderAll(t, got); g != w {
		t.Fatalf("%s: deferred excerpt past a prefix differs:\n%s", name, firstDiff(g, w))
	}
	return want.Generic != ""
}

// TestDeferredGenericCorpus: every corpus file gives the same result read
// deferred (seekable) as read once (streamed).
func TestDeferredGenericCorpus(t *testing.T) {
	t.Parallel()
	n := 0
	for _, c := range corpus(t) {
		if strings.HasSuffix(c.file, ".xml") {
			continue
		}
		in, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if checkDeferredSame(t, c.name, in, c.options()) {
			n++
		}
	}
	if n < 2 {
		t.Errorf("only %d corpus files use the generic excerpt", n)
	}
}

// TestDeferredGenericSteps: logs built to need the excerpt of a step far
// from the end, of the first of many failed steps, the findings of steps
// that did not fail, more steps than are remembered (read again whole),
// with a BOM, with an empty step.
func TestDeferredGenericSteps(t *testing.T) {
	t.Parallel()
	stamp := func(i int) string { return fmt.Sprintf("2024-05-01T12:00:00.%07dZ ", i) }
	build := func(lines ...string) []byte {
		var b strings.Builder
		for i, l := range lines {
			b.WriteString(stamp(i) + l + "\n")
		}
		return []byte(b.String())
	}
	group := func(name string, body ...string) []string {
		return append([]string{"##[group]Run " + name, "echo " + name, "shell: /usr/bin/bash -e {0}", "##[endgroup]"}, body...)
	}
	var cases []struct {
		name string
		in   []byte
	}
	add := func(name string, in []byte) {
		cases = append(cases, struct {
			name string
			in   []byte
		}{name, in})
	}
	var many, quiet, failedMany, failedLate []string
	for i := 0; i < maxLaterSteps+10; i++ { // more than are remembered: read again whole
		many = append(many, group(fmt.Sprintf("step-%d", i), fmt.Sprintf("step %d fatal error here", i), "ok")...)
	}
	quiet = append(quiet, group("loud", "cannot open file", "details")...)
	for i := 0; i < 100; i++ {
		quiet = append(quiet, group(fmt.Sprintf("quiet-%d", i))...) // no output: no excerpt
	}
	for i := 0; i < 100; i++ {
		failedMany = append(failedMany, "##[error]Process completed with exit code 1.")
	}
	failedMany = append(failedMany, "make: *** [all] Error 2", "##[error]Process completed with exit code 2.")
	failedLate = append(failedLate, group("setup", "error: not this one")...)
	failedLate = append(failedLate, group("build", "gcc: fatal error: no input files", "##[error]Process completed with exit code 1.")...)
	failedLate = append(failedLate, group("post", "error: nor this one")...)
	add("many steps, no failure", build(many...))
	add("last excerpt far back", build(quiet...))
	add("failed steps without excerpts first", build(failedMany...))
	add("failed step among others", build(failedLate...))
	add("BOM, one raw step", append([]byte("\uFEFF"), build("panic-free output", "Segmentation fault (core dumped)", "")...))
	add("empty", nil)
	add("only a group line", build("##[group]Run x"))
	add("error line, no exit", build(append(group("lint", "##[error]lint failed: 3 problems"), group("next", "fine")...)...))
	add("failed without exit, found in a passing step", build(append(group("test", "--- FAIL: TestA (0.00s)",
		"    a_test.go:3: boom", "FAIL", "FAIL\texample.com/a\t0.01s"), group("lint", "##[error]lint failed")...)...))
	add("two failed steps with findings", build(append(append(group("unit", "--- FAIL: TestA (0.00s)",
		"    a_test.go:3: boom", "FAIL\texample.com/a\t0.01s", "##[error]Process completed with exit code 1."),
		group("ok", "fine")...), group("e2e", "--- FAIL: TestB (0.00s)", "    b_test.go:9: bang",
		"FAIL\texample.com/b\t0.01s", "##[error]Process completed with exit code 1.")...)...))
	for i, c := range cases {
		checkDeferredSame(t, c.name, c.in, Options{})
		if i > 0 { // (not the long one again)
			checkDeferredSame(t, c.name+" (budget 600)", c.in, Options{Budget: 600})
		}
	}
}

// TestDeferredGenericRandom: logs assembled at random from corpus lines,
// step framing, error lines and noise give the same result either way.
// (The seed is fixed: the same logs on every run.)
func TestDeferredGenericRandom(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/corpus/*")
	if err != nil {
		t.Fatal(err)
	}
	var sources [][]string
	for _, f := range files {
		if strings.HasSuffix(f, ".want.json") || strings.HasSuffix(f, ".xml") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, strings.Split(string(b), "\n"))
	}
	framing := []string{"##[group]Run go test ./...", "##[group]Run make", "##[endgroup]",
		"##[error]Process completed with exit code 1.", "##[error]Process completed with exit code 2.",
		"##[error]something failed", "##[warning]careful", "shell: /usr/bin/bash -e {0}", "env:", "",
		"\x1b[31merror\x1b[0m: boom", "progress 10%\rprogress 100%", "bad \xff utf8 error", "all good",
		"FAIL\texample.com/x\t0.1s", "--- FAIL: TestA (0.00s)", "    a_test.go:3: fail here", "Traceback (most recent call last):"}
	rng := rand.New(rand.NewSource(15))
	generic := 0
	rounds := 150
	if testing.Short() {
		rounds = 40
	}
	for k := 0; k < rounds; k++ {
		var b bytes.Buffer
		if rng.Intn(4) == 0 {
			b.WriteString("\uFEFF")
		}
		stamped := rng.Intn(2) == 0
		for p := 1 + rng.Intn(10); p > 0; p-- {
			var ls []string
			if rng.Intn(2) == 0 {
				for i := rng.Intn(12); i >= 0; i-- {
					ls = append(ls, framing[rng.Intn(len(framing))])
				}
			} else {
				src := sources[rng.Intn(len(sources))]
				a := rng.Intn(len(src))
				ls = src[a:min(len(src), a+rng.Intn(80))]
			}
			for _, l := range ls {
				if stamped {
					fmt.Fprintf(&b, "2024-05-01T12:00:%02d.%07dZ ", rng.Intn(60), rng.Intn(1e7))
				}
				b.WriteString(l + "\n")
			}
		}
		if checkDeferredSame(t, fmt.Sprintf("random log %d", k), b.Bytes(), Options{Budget: []int{0, 600}[k%2]}) {
			generic++
		}
	}
	if generic < rounds/10 {
		t.Errorf("only %d of %d random logs use the generic excerpt", generic, rounds)
	}
}

// FuzzDeferredReading: any input gives the same result read deferred as
// read once.
func FuzzDeferredReading(f *testing.F) {
	f.Add([]byte("##[group]Run go test\nx\n##[endgroup]\n--- FAIL: TestA (0.00s)\nFAIL\tp\t0.1s\n##[error]Process completed with exit code 1.\n"))
	f.Add([]byte("\uFEFFerror: one\n##[group]Run b\n##[endgroup]\nfatal: two\n##[error]x\n"))
	f.Add([]byte("##[error]Process completed with exit code 1.\n##[error]Process completed with exit code 2.\nsegmentation fault\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		checkDeferredSame(t, "fuzz input", in, Options{Budget: 600})
	})
}
