package failure

import (
	"strings"
	"testing"
)

// extractString runs Extract on s.
func extractString(t *testing.T, s string) *FailureContext {
	t.Helper()
	fc, err := Extract(strings.NewReader(s), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return fc
}

type wantFailure struct{ pkg, id, loc, msg string }

// recognizerCase is one snippet of runner output and what must come out.
type recognizerCase struct {
	name   string
	in     string
	source string
	fails  []wantFailure
	builds []BuildError
}

func checkRecognizer(t *testing.T, cases []recognizerCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fc := extractString(t, tc.in)
			if fc.Source != tc.source {
				t.Errorf("source %q, want %q", fc.Source, tc.source)
			}
			if len(fc.Failures) != len(tc.fails) {
				t.Fatalf("got %d failures %+v, want %d", len(fc.Failures), fc.Failures, len(tc.fails))
			}
			for i, w := range tc.fails {
				f := fc.Failures[i]
				if f.Package != w.pkg || f.ID != w.id || f.Location != w.loc || !strings.Contains(f.Message, w.msg) {
					t.Errorf("failure %d = %+v, want %+v", i, f, w)
				}
			}
			if len(fc.BuildErrors) != len(tc.builds) {
				t.Fatalf("got build errors %+v, want %+v", fc.BuildErrors, tc.builds)
			}
			for i, w := range tc.builds {
				if b := fc.BuildErrors[i]; b.Location != w.Location || !strings.Contains(b.Message, w.Message) {
					t.Errorf("build error %d = %+v, want %+v", i, b, w)
				}
			}
		})
	}
}

func TestGoText(t *testing.T) {
	t.Parallel()
	checkRecognizer(t, []recognizerCase{
		{name: "subtests plain", source: "go", in: "--- FAIL: TestA (0.00s)\n    --- FAIL: TestA/x (0.00s)\n" +
			"        a_test.go:9: got 1\n            want 2\n--- FAIL: TestB (0.01s)\n    b_test.go:3: boom\n" +
			"FAIL\nFAIL\tex.com/p\t0.01s\n",
			fails: []wantFailure{{"ex.com/p", "TestA/x", "a_test.go:9", "got 1\nwant 2"}, {"ex.com/p", "TestB", "b_test.go:3", "boom"}}},
		{name: "verbose with passing siblings", source: "go", in: "=== RUN   TestA\n=== RUN   TestA/ok\n=== RUN   TestA/bad\n" +
			"    a_test.go:12: mismatch\n--- FAIL: TestA (0.00s)\n    --- PASS: TestA/ok (0.00s)\n    --- FAIL: TestA/bad (0.00s)\n" +
			"=== RUN   TestC\n    c_test.go:1: only a log\n--- PASS: TestC (0.00s)\nFAIL\nFAIL\tex.com/p\t0.1s\n",
			fails: []wantFailure{{"ex.com/p", "TestA/bad", "a_test.go:12", "mismatch"}}},
		{name: "two packages", source: "go", in: "--- FAIL: TestA (0.00s)\n    a_test.go:1: one\nFAIL\nFAIL\tex.com/a\t0.1s\n" +
			"ok  \tex.com/b\t0.1s\n--- FAIL: TestA (0.00s)\n    a_test.go:2: two\nFAIL\nFAIL\tex.com/c\t0.1s\n",
			fails: []wantFailure{{"ex.com/a", "TestA", "a_test.go:1", "one"}, {"ex.com/c", "TestA", "a_test.go:2", "two"}}},
		{name: "build failure", source: "go", in: "# ex.com/p\n./p.go:3:2: undefined: x\n\thave (int)\n\twant ()\nFAIL\tex.com/p [build failed]\n",
			builds: []BuildError{{Location: "p.go:3:2", Message: "undefined: x\nhave (int)\nwant ()"}}},
		{name: "example output", source: "go", in: "--- FAIL: ExampleSum (0.00s)\ngot:\n3\nwant:\n4\nFAIL\nFAIL\tex.com/p\t0.01s\n",
			fails: []wantFailure{{"ex.com/p", "ExampleSum", "", "got:\n3\nwant:\n4"}}},
		{name: "package failure without test", source: "go", in: "some setup error\nFAIL\tex.com/p\t0.01s\n",
			fails: []wantFailure{{"ex.com/p", "ex.com/p", "", "some setup error"}}},
		{name: "panic names the user frame", source: "go", in: "--- FAIL: TestP (0.00s)\npanic: boom [recovered]\n\tpanic: boom\n\n" +
			"goroutine 7 [running]:\ntesting.tRunner.func1.2({0x1, 0x2})\n\t/opt/hostedtoolcache/go/1.22.0/x64/src/testing/testing.go:1631 +0x24a\n" +
			"panic({0x1, 0x2})\n\t/opt/hostedtoolcache/go/1.22.0/x64/src/runtime/panic.go:770 +0x132\n" +
			"mymod/p.f(...)\n\t/home/runner/work/r/r/p/p.go:8\nmymod/p.TestP(0x0?)\n\t/home/runner/work/r/r/p/p_test.go:5 +0x18\n" +
			"FAIL\tmymod/p\t0.01s\n",
			fails: []wantFailure{{"mymod/p", "TestP", "p/p.go:8", "panic: boom"}}},
	})
}

func TestGoJSON(t *testing.T) {
	t.Parallel()
	ev := func(action, pkg, test, out string) string {
		s := `{"Action":"` + action + `","Package":"` + pkg + `"`
		if test != "" {
			s += `,"Test":"` + test + `"`
		}
		if out != "" {
			s += `,"Output":"` + out + `"`
		}
		return s + "}\n"
	}
	split := ev("run", "ex.com/p", "TestA", "") + ev("output", "ex.com/p", "TestA", `=== RUN   TestA\n`) +
		ev("output", "ex.com/p", "TestA", `    a_test.go:4: a long line `) + ev("output", "ex.com/p", "TestA", `split by test2json\n`) +
		ev("output", "ex.com/p", "TestA", `--- FAIL: TestA (0.00s)\n`) + ev("fail", "ex.com/p", "TestA", "") +
		ev("run", "ex.com/p", "TestQuiet", "") + ev("fail", "ex.com/p", "TestQuiet", "") +
		ev("output", "ex.com/p", "", `FAIL\n`) + ev("fail", "ex.com/p", "", "")
	build := `{"ImportPath":"ex.com/q [ex.com/q.test]","Action":"build-output","Output":"# ex.com/q [ex.com/q.test]\n"}` + "\n" +
		`{"ImportPath":"ex.com/q [ex.com/q.test]","Action":"build-output","Output":"q/q.go:3:9: undefined: y\n"}` + "\n" +
		`{"ImportPath":"ex.com/q [ex.com/q.test]","Action":"build-fail"}` + "\n" +
		`{"Action":"fail","Package":"ex.com/q","FailedBuild":"ex.com/q [ex.com/q.test]"}` + "\n"
	checkRecognizer(t, []recognizerCase{
		{name: "split output and silent failure", source: "go-json", in: split, fails: []wantFailure{
			{"ex.com/p", "TestA", "a_test.go:4", "a long line split by test2json"},
			{"ex.com/p", "TestQuiet", "", "no output captured"}}},
		{name: "build events", source: "go-json", in: build, builds: []BuildError{{Location: "q/q.go:3:9", Message: "undefined: y"}}},
		{name: "passing stream", source: "generic", in: ev("run", "ex.com/p", "TestA", "") + ev("pass", "ex.com/p", "TestA", "") + ev("pass", "ex.com/p", "", "")},
	})
}

func TestPytest(t *testing.T) {
	t.Parallel()
	checkRecognizer(t, []recognizerCase{
		{name: "summary only", source: "pytest", in: "=== short test summary info ===\nFAILED tests/test_a.py::test_x - assert 1 == 2\n" +
			"ERROR tests/test_b.py::TestK::test_y - KeyError: 'k'\n=== 1 failed, 1 error in 0.1s ===\n",
			fails: []wantFailure{{"tests/test_a.py", "tests/test_a.py::test_x", "", "assert 1 == 2"},
				{"tests/test_b.py", "tests/test_b.py::TestK::test_y", "", "KeyError"}}},
		{name: "block matched to summary id", source: "pytest", in: "=============== FAILURES ===============\n" +
			"_____________ TestK.test_y[1.5] _____________\n\n    def test_y(self, v):\n>       assert v == 2\nE       assert 1.5 == 2\n\n" +
			"tests/test_b.py:9: AssertionError\n=== short test summary info ===\nFAILED tests/test_b.py::TestK::test_y[1.5] - assert 1.5 == 2\n",
			fails: []wantFailure{{"tests/test_b.py", "tests/test_b.py::TestK::test_y[1.5]", "tests/test_b.py:9", "assert 1.5 == 2"}}},
		{name: "verbose lines", source: "pytest", in: "t.py::test_a PASSED   [ 50%]\nt.py::test_b FAILED   [100%]\n",
			fails: []wantFailure{{"t.py", "t.py::test_b", "", ""}}},
	})
}

func TestJestVitestNode(t *testing.T) {
	t.Parallel()
	checkRecognizer(t, []recognizerCase{
		{name: "jest", source: "jest", in: "FAIL src/a.test.ts (5.1 s)\n  ● A › b\n\n    expect(x).toBe(y)\n\n" +
			"    > 3 |   expect(1).toBe(2)\n        |             ^\n\n      at Object.<anonymous> (node_modules/x/y.js:1:1)\n" +
			"      at Object.<anonymous> (src/a.test.ts:3:13)\n\n  ● Console\n\n    console.log\n      hi\n",
			fails: []wantFailure{{"src/a.test.ts", "A › b", "src/a.test.ts:3:13", "expect(x).toBe(y)"}}},
		{name: "vitest", source: "vitest", in: " FAIL  src/a.test.ts > A > b\nAssertionError: expected 1 to be 2\n ❯ src/a.test.ts:3:13\n" +
			"      3|   expect(1).toBe(2)\n⎯⎯⎯⎯\n FAIL  src/b.test.ts [ src/b.test.ts ]\nError: Cannot find module './c'\n ❯ src/b.test.ts:1:1\n",
			fails: []wantFailure{{"src/a.test.ts", "A > b", "src/a.test.ts:3:13", "expected 1 to be 2"},
				{"src/b.test.ts", "suite failed to run", "src/b.test.ts:1:1", "Cannot find module"}}},
		{name: "node tap nested", source: "node-test", in: "TAP version 13\n# Subtest: outer\n    # Subtest: inner\n    not ok 1 - inner\n" +
			"      ---\n      location: '/w/x.test.js:3:5'\n      failureType: 'testCodeFailure'\n      error: 'nope'\n      ...\n" +
			"not ok 1 - outer\n  ---\n  failureType: 'subtestsFailed'\n  ...\nnot ok 2 - skipped one # SKIP\n",
			fails: []wantFailure{{"/w/x.test.js", "outer > inner", "/w/x.test.js:3:5", "nope"}}},
		{name: "node spec", source: "node-test", in: "▶ outer\n  ✖ inner (1ms)\n    Error: nope\n        at t (/w/x.test.js:4:9)\n" +
			"▶ outer (2ms)\n✔ fine (0.1ms)\n",
			fails: []wantFailure{{"", "outer > inner", "/w/x.test.js:4:9", "Error: nope"}}},
	})
}

func TestCargoRustcTypeScript(t *testing.T) {
	t.Parallel()
	checkRecognizer(t, []recognizerCase{
		{name: "cargo old panic format", source: "cargo", in: "     Running tests/it.rs (target/debug/deps/it-1)\n\nrunning 1 test\n" +
			"test t::a ... FAILED\n\nfailures:\n\n---- t::a stdout ----\nthread 't::a' panicked at 'boom', tests/it.rs:4:5\n" +
			"note: run with `RUST_BACKTRACE=1`\n\nfailures:\n    t::a\n\ntest result: FAILED. 0 passed; 1 failed\n",
			fails: []wantFailure{{"tests/it.rs", "t::a", "tests/it.rs:4:5", "boom"}}},
		{name: "rustc error without code", source: "rustc", in: "error: expected one of `;`, found `}`\n --> src/main.rs:3:14\n  |\n" +
			"error: could not compile `x` due to previous error\n",
			builds: []BuildError{{Location: "src/main.rs:3:14", Message: "error: expected one of"}}},
		{name: "tsc with continuation", source: "typescript", in: "src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.\n" +
			"  Type 'x' is not 'y'.\nsrc/b.tsx:2:3 - error TS2304: Cannot find name 'z'.\n",
			builds: []BuildError{{Location: "src/a.ts:1:7", Message: "TS2322: Type 'string' is not assignable to type 'number'.\nType 'x' is not 'y'."},
				{Location: "src/b.tsx:2:3", Message: "TS2304"}}},
	})
}

func TestJUnitXML(t *testing.T) {
	t.Parallel()
	in := `<?xml version="1.0"?><testsuites><testsuite name="s"><testcase classname="pkg.A" name="ok"/>` +
		`<testcase classname="pkg.A" name="bad" file="src/a.py" line="12"><failure message="1 != 2" type="AssertionError">trace</failure></testcase>` +
		`<testcase name="err"><error>boom at src/b.js:3:4</error><system-out>noise</system-out></testcase>` +
		`<testcase name="skip"><skipped/></testcase></testsuite></testsuites>`
	checkRecognizer(t, []recognizerCase{{name: "failure and error", source: "junit", in: in, fails: []wantFailure{
		{"pkg.A", "bad", "src/a.py:12", "AssertionError: 1 != 2"}, {"s", "err", "src/b.js:3:4", "boom"}}}})
	// A report cut off mid-write keeps what it holds and says so.
	fc, err := Extract(strings.NewReader(`<testsuite><testcase name="x"><failure message="boom at src/c.js:1:2">`), Options{})
	if err != nil || len(fc.Failures) != 1 || fc.Failures[0].ID != "x" || fc.Failures[0].Location != "src/c.js:1:2" ||
		!strings.Contains(fc.Note, "ends early") || !strings.Contains(fc.Render(0), "Note: the XML report ends early") {
		t.Errorf("truncated XML: %+v, %v", fc, err)
	}
}

func TestGenericFallback(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString("progress line\n")
		if i == 10 {
			b.WriteString("fatal: could not read from remote\n")
		}
	}
	b.WriteString("deploy step done\n")
	fc := extractString(t, b.String())
	if fc.Source != "generic" || !strings.Contains(fc.Generic, "fatal: could not read from remote") ||
		!strings.Contains(fc.Generic, "deploy step done") || !strings.Contains(fc.Generic, "--- last 30 lines ---") {
		t.Errorf("generic excerpt:\n%s", fc.Generic)
	}
	if n := strings.Count(fc.Generic, "progress line"); n > 30+genBefore+genAfter {
		t.Errorf("generic keeps %d progress lines", n)
	}
	if fc.Empty() {
		t.Error("context with a generic excerpt is empty")
	}
	if empty := extractString(t, ""); !empty.Empty() {
		t.Errorf("empty input gives %+v", empty)
	}
}
