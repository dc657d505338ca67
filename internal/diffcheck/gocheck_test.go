package diffcheck

import (
	"slices"
	"strings"
	"testing"
)

// goTest builds a small Go test file: imports plus bodies of TestA.
func goTest(imports, body string, extra ...string) string {
	return "package x\n\nimport (\n" + imports + "\n)\n\nfunc TestA(t *testing.T) {\n" + body + "\n}\n" + strings.Join(extra, "\n")
}

const (
	impT     = "\t\"testing\""
	impTT    = "\t\"testing\"\n\t\"time\""
	baseBody = "\tgot := compute()\n\tif got != 1 {\n\t\tt.Errorf(\"got %d\", got)\n\t}"
)

func TestGoChecks(t *testing.T) {
	t.Parallel()
	base := goTest(impTT, baseBody)
	tests := []struct {
		name          string
		before, after map[string]string
		want          []string // check names, sorted
	}{
		{"new-sleep", one("x_test.go", base), one("x_test.go", goTest(impTT, "\ttime.Sleep(10 * time.Millisecond)\n"+baseBody)),
			[]string{NewSleep}},
		{"new time.After wait", one("x_test.go", base), one("x_test.go", goTest(impTT, "\t<-time.After(time.Second)\n"+baseBody)),
			[]string{NewSleep}},
		{"new sleep with an aliased time import", one("x_test.go", goTest("\t\"testing\"\n\tclock \"time\"", baseBody)),
			one("x_test.go", goTest("\t\"testing\"\n\tclock \"time\"", "\tclock.Sleep(clock.Second)\n"+baseBody)),
			[]string{NewSleep}},
		{"near miss: sleep inside a synctest bubble", one("x_test.go", base),
			one("x_test.go", goTest(impTT+"\n\t\"testing/synctest\"", "\tsynctest.Test(t, func(t *testing.T) {\n\t\ttime.Sleep(time.Second)\n\t\tsynctest.Wait()\n\t})\n"+baseBody)),
			nil},
		{"near miss: a sleep moved, not added", one("x_test.go", goTest(impTT, "\ttime.Sleep(time.Millisecond)\n"+baseBody)),
			one("x_test.go", goTest(impTT, baseBody+"\n\ttime.Sleep(time.Millisecond)")),
			nil},
		{"near miss: a method named Sleep on a value", one("x_test.go", base),
			one("x_test.go", goTest(impTT, "\tvar c fakeClock\n\tc.Sleep(time.Second)\n"+baseBody)),
			nil},
		{"timeout-only", one("x_test.go", goTest(impTT+"\n\t\"context\"", "\tctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)\n\tdefer cancel()\n\t_ = ctx\n"+baseBody)),
			one("x_test.go", goTest(impTT+"\n\t\"context\"", "\tctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)\n\tdefer cancel()\n\t_ = ctx\n"+baseBody)),
			[]string{TimeoutOnly}},
		{"timeout-only: a longer sleep", one("x_test.go", goTest(impTT, "\ttime.Sleep(10 * time.Millisecond)\n"+baseBody)),
			one("x_test.go", goTest(impTT, "\ttime.Sleep(200 * time.Millisecond)\n"+baseBody)),
			[]string{TimeoutOnly}},
		{"near miss: a larger buffer is not a timeout", one("x_test.go", goTest(impT, "\tbuf := make([]byte, 1024)\n\t_ = buf\n"+baseBody)),
			one("x_test.go", goTest(impT, "\tbuf := make([]byte, 4096)\n\t_ = buf\n"+baseBody)),
			nil},
		{"near miss: a shorter timeout", one("x_test.go", goTest(impTT, "\ttime.Sleep(200 * time.Millisecond)\n"+baseBody)),
			one("x_test.go", goTest(impTT, "\ttime.Sleep(10 * time.Millisecond)\n"+baseBody)),
			nil},
		{"retry-loop: counted loop with break on success", one("x_test.go", base),
			one("x_test.go", goTest(impT, "\tvar got int\n\tfor i := 0; i < 3; i++ {\n\t\tgot = compute()\n\t\tif got == 1 {\n\t\t\tbreak\n\t\t}\n\t}\n\tif got != 1 {\n\t\tt.Errorf(\"got %d\", got)\n\t}")),
			[]string{RetryLoop}},
		{"retry-loop: named attempts around the assertion", one("x_test.go", base),
			one("x_test.go", goTest(impT, "\tfor attempt := range 3 {\n\t\t_ = attempt\n"+baseBody+"\n\t}")),
			[]string{RetryLoop}},
		{"near miss: a table loop with assertions", one("x_test.go", base),
			one("x_test.go", goTest(impT, baseBody+"\n\tfor _, tc := range []int{1, 2} {\n\t\tif tc == 0 {\n\t\t\tt.Errorf(\"zero\")\n\t\t\treturn\n\t\t}\n\t}")),
			nil},
		{"near miss: an endless loop draining a channel", one("x_test.go", base),
			one("x_test.go", goTest(impT, baseBody+"\n\tch := make(chan int)\n\tclose(ch)\n\tfor {\n\t\tif _, ok := <-ch; !ok {\n\t\t\tbreak\n\t\t}\n\t}")),
			nil},
		{"new-skip: testing.Short guard", one("x_test.go", base),
			one("x_test.go", goTest(impT, "\tif testing.Short() {\n\t\tt.Skip(\"flaky\")\n\t}\n"+baseBody)),
			[]string{NewSkip}},
		{"near miss: an existing skip kept", one("x_test.go", goTest(impT, "\tt.Skip(\"later\")\n"+baseBody)),
			one("x_test.go", goTest(impT, "\tt.Skip(\"later\")\n"+strings.Replace(baseBody, "got %d", "got %d, want 1", 1))),
			nil},
		{"new-build-tag", one("x_test.go", base), one("x_test.go", "//go:build !race\n\n"+base),
			[]string{NewBuildTag}},
		{"near miss: a comment that mentions go:build", one("x_test.go", base),
			one("x_test.go", strings.Replace(base, "func TestA", "// TestA needs no //go:build line.\nfunc TestA", 1)),
			nil},
		{"deleted-test", one("x_test.go", base+"\nfunc TestB(t *testing.T) {}\n"), one("x_test.go", base),
			[]string{DeletedTest}},
		{"deleted-test: the whole test file", one("x_test.go", base), map[string]string{},
			[]string{DeletedTest}},
		{"renamed-test", one("x_test.go", base), one("x_test.go", strings.Replace(base, "TestA", "TestAStable", 1)),
			[]string{RenamedTest}},
		{"near miss: a renamed helper that is not a test", one("x_test.go", base+"\nfunc testHelper() {}\n"),
			one("x_test.go", base+"\nfunc testHelperV2() {}\n"),
			nil},
		{"fewer-assertions", one("x_test.go", base),
			one("x_test.go", goTest(impT, "\tgot := compute()\n\tif got != 1 {\n\t\tt.Logf(\"got %d\", got)\n\t}")),
			[]string{FewerAssertions}},
		{"fewer-assertions: testify", one("x_test.go", goTest(impT+"\n\t\"github.com/stretchr/testify/assert\"", "\tassert.Equal(t, 1, compute())\n\tassert.NoError(t, err())")),
			one("x_test.go", goTest(impT+"\n\t\"github.com/stretchr/testify/assert\"", "\tassert.Equal(t, 1, compute())")),
			[]string{FewerAssertions}},
		{"near miss: an assertion reworded", one("x_test.go", base),
			one("x_test.go", strings.Replace(base, "got %d", "compute() = %d, want 1", 1)),
			nil},
		{"new-recover", one("x_test.go", base),
			one("x_test.go", goTest(impTT, "\tdefer func() { recover() }()\n"+baseBody)),
			[]string{NewRecover}},
		{"discarded-error", one("x_test.go", goTest(impT, "\terr := run()\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}")),
			one("x_test.go", goTest(impT, "\terr := run()\n\t_ = err\n\tt.Log(\"done\")\n\tif false {\n\t\tt.Fatal(err)\n\t}")),
			[]string{DiscardedError}},
		{"near miss: a discarded non-error value", one("x_test.go", base),
			one("x_test.go", goTest(impT, "\tv := 3\n\t_ = v\n"+baseBody)),
			nil},
		{"removed-parallel is flagged", one("x_test.go", goTest(impT, "\tt.Parallel()\n"+baseBody)), one("x_test.go", goTest(impT, baseBody)),
			[]string{RemovedParallel}},
		{"non-test-edit is flagged", map[string]string{"x.go": "package x\n\nvar n = 1\n"}, map[string]string{"x.go": "package x\n\nvar n = 2\n"},
			[]string{NonTestEdit}},
		{"near miss: a Skip method in code under test", map[string]string{"r.go": "package x\n\nfunc f(r *R) {\n}\n"}, map[string]string{"r.go": "package x\n\nfunc f(r *R) {\n\tr.Skip(3)\n}\n"},
			[]string{NonTestEdit}},
		{"a binary file in the diff", map[string]string{"testdata/blob.bin": "\x00\x01\x02"}, map[string]string{"testdata/blob.bin": "\x00\x01\x03\x00"},
			nil},
		{"near miss: testdata is test data", map[string]string{"testdata/in.txt": "a\n"}, map[string]string{"testdata/in.txt": "b\n"},
			nil},
		{"protected-file: go.mod", map[string]string{"go.mod": "module example.com/x\n\ngo 1.22\n"}, map[string]string{"go.mod": "module example.com/x\n\ngo 1.23\n"},
			[]string{ProtectedFile}},
		{"protected-file: workflow", map[string]string{".github/workflows/ci.yml": "on: push\n"}, map[string]string{".github/workflows/ci.yml": "on: [push]\n"},
			[]string{ProtectedFile}},
		{"near miss: a package named github", map[string]string{"pkg/github/x_test.go": base}, map[string]string{"pkg/github/x_test.go": strings.Replace(base, "got %d", "got %d!", 1)},
			nil},
		{"a proper fix: sleep replaced by a channel", one("x_test.go", goTest(impTT, "\tgo compute()\n\ttime.Sleep(10 * time.Millisecond)\n"+baseBody)),
			one("x_test.go", goTest(impT, "\tdone := make(chan struct{})\n\tgo func() { compute(); close(done) }()\n\t<-done\n"+baseBody)),
			nil},
	}
	changes := make([]change, len(tests))
	for i, tc := range tests {
		changes[i] = change{tc.before, tc.after}
	}
	diffs := gitDiffs(t, changes)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			diff, src := diffs[i].diff, diffs[i].src
			got, err := Check(diff, src, Options{})
			if err != nil {
				t.Fatalf("Check: %v\n%s", err, diff)
			}
			if names := checkNames(got); !slices.Equal(names, tc.want) {
				t.Fatalf("checks = %v, want %v\nfindings: %v\ndiff:\n%s", names, tc.want, got, diff)
			}
			for _, f := range got {
				wantSev := Reject
				if f.Check == RemovedParallel || f.Check == NonTestEdit {
					wantSev = Flag
				}
				if f.Severity != wantSev || f.Reason == "" || f.File == "" {
					t.Errorf("finding %+v: want severity %s, a file and a reason", f, wantSev)
				}
			}
			if Rejected(got) != slices.ContainsFunc(tc.want, func(c string) bool { return c != RemovedParallel && c != NonTestEdit }) {
				t.Errorf("Rejected = %v for %v", Rejected(got), tc.want)
			}
		})
	}
}

func one(path, content string) map[string]string { return map[string]string{path: content} }

func TestGoFindingLines(t *testing.T) {
	t.Parallel()
	before := goTest(impTT, baseBody)
	after := goTest(impTT, "\tgot0 := 0\n\t_ = got0\n\ttime.Sleep(time.Second)\n"+baseBody)
	diff, src := gitDiff(t, one("x_test.go", before), one("x_test.go", after))
	got, err := Check(diff, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Line != 11 || got[0].File != "x_test.go" {
		t.Fatalf("findings = %v, want one new-sleep at x_test.go:11", got)
	}
	if !strings.Contains(got[0].String(), "x_test.go:11: new-sleep (reject)") {
		t.Errorf("String() = %q", got[0].String())
	}
}
