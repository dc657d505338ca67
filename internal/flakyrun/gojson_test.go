package flakyrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseGoJSON reads a hand-written go test -json stream: a failing
// test with a race report, passing subtests, a skip, a build failure
// outside any test, noise and a line cut short.
func TestParseGoJSON(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("testdata", "gojson", "race.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := parseGoJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if run.Seeds["example.com/x"] != "4242" || len(run.Seeds) != 1 {
		t.Errorf("seeds %v, want example.com/x: 4242", run.Seeds)
	}
	type key struct{ pkg, test string }
	got := map[key]goOutcome{}
	for _, o := range run.Outcomes {
		if _, dup := got[key{o.Package, o.Test}]; dup {
			t.Errorf("outcome of %s %s twice", o.Package, o.Test)
		}
		got[key{o.Package, o.Test}] = o
	}
	a := got[key{"example.com/x", "TestA"}]
	if !a.Failed || a.Message != "a_test.go:9: got 0, want 42\ntesting.go:1617: race detected during execution of test" {
		t.Errorf("TestA: failed %v, message %q", a.Failed, a.Message)
	}
	if !strings.HasPrefix(a.Race, "WARNING: DATA RACE\nWrite at 0x00c000012345 by goroutine 8:") || strings.Contains(a.Race, "want 42") {
		t.Errorf("TestA race %q", a.Race)
	}
	for _, k := range []key{{"example.com/x", "TestB"}, {"example.com/x", "TestB/sub"}, {"example.com/z", "TestA"}} {
		if o, ok := got[k]; !ok || o.Failed || o.Message != "" {
			t.Errorf("%v: %+v (present %v), want a pass without message", k, o, ok)
		}
	}
	if _, ok := got[key{"example.com/x", "TestC"}]; ok {
		t.Error("a skipped test counted as an outcome")
	}
	if _, ok := got[key{"example.com/x", ""}]; ok {
		t.Error("example.com/x failed through TestA, yet got a package outcome too")
	}
	y := got[key{"example.com/y", ""}]
	if !y.Failed || !strings.Contains(y.Message, "undefined: Foo") {
		t.Errorf("example.com/y build failure: %+v", y)
	}
	if z, ok := got[key{"example.com/z", ""}]; !ok || z.Failed {
		t.Errorf("example.com/z package pass: %+v, %v", z, ok)
	}
	if _, ok := got[key{"example.com/x", "TestTruncated"}]; ok {
		t.Error("a line cut short was read as an outcome")
	}
	if len(run.Outcomes) != 6 {
		t.Errorf("%d outcomes, want 6: %+v", len(run.Outcomes), run.Outcomes)
	}

	// Same test name in two packages: both ids carry the package.
	ids := goIDs(run.Outcomes, nil)
	if ids[[2]string{"example.com/z", "TestA"}] != "example.com/z.TestA" || ids[[2]string{"example.com/x", "TestA"}] != "example.com/x.TestA" ||
		ids[[2]string{"example.com/x", "TestB"}] != "TestB" || ids[[2]string{"example.com/y", ""}] != "example.com/y (package)" {
		t.Errorf("ids %v", ids)
	}
}

// TestParseGoJSONLongLine: a line over the cap is cut, not a failure,
// and the stream goes on.
func TestParseGoJSONLongLine(t *testing.T) {
	t.Parallel()
	long := `{"Action":"output","Package":"p","Test":"TestX","Output":"` + strings.Repeat("x", 3<<20) + `\n"}`
	in := long + "\n" + `{"Action":"fail","Package":"p","Test":"TestX"}` + "\n"
	run, err := parseGoJSON(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Outcomes) != 1 || !run.Outcomes[0].Failed || run.Outcomes[0].Test != "TestX" {
		t.Errorf("outcomes %+v", run.Outcomes)
	}
}

// TestParseGoJSONUnfinished: a test that started and never ended (the run
// was killed) is a failure; a skipped one is nothing.
func TestParseGoJSONUnfinished(t *testing.T) {
	t.Parallel()
	in := `{"Action":"run","Package":"p","Test":"TestDone"}
{"Action":"pass","Package":"p","Test":"TestDone"}
{"Action":"run","Package":"p","Test":"TestSkip"}
{"Action":"skip","Package":"p","Test":"TestSkip"}
{"Action":"run","Package":"p","Test":"TestHang"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"    h_test.go:5: waiting\n"}
`
	run, err := parseGoJSON(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Outcomes) != 2 || run.Outcomes[0].Test != "TestDone" || run.Outcomes[0].Failed {
		t.Fatalf("outcomes %+v", run.Outcomes)
	}
	h := run.Outcomes[1]
	if h.Test != "TestHang" || !h.Failed || !strings.Contains(h.Message, "never finished") || !strings.Contains(h.Message, "h_test.go:5: waiting") {
		t.Errorf("TestHang %+v", h)
	}
}
