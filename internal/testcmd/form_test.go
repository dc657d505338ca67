package testcmd

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestFormGoJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
		form Form
	}{
		{"go test ./...", "go test -json ./...", GoJSON},
		{"/usr/local/go/bin/go test -race -run TestX ./pkg", "/usr/local/go/bin/go test -json -race -run TestX ./pkg", GoJSON},
		{"go.exe test ./...", "go.exe test -json ./...", GoJSON},
		{"go test -json ./...", "go test -json ./...", GoJSON},
		{"go test --json=true ./...", "go test --json=true ./...", GoJSON},
		{"go test -v ./...", "go test -json -v ./...", GoJSON},
		{"go test -v=test2json ./...", "go test -v=test2json ./...", Plain},
		{"go test -json=false ./...", "go test -json=false ./...", Plain},
		{"go test -bench . ./...", "go test -bench . ./...", Plain},
		{"go test -c -o x.test ./pkg", "go test -c -o x.test ./pkg", Plain},
		{"go test -list . ./pkg", "go test -list . ./pkg", Plain},
		{"go test ./pkg -args -test.bench=.", "go test ./pkg -args -test.bench=.", Plain},
		{"go vet ./...", "go vet ./...", Plain},
		{"make test", "make test", Plain},
		{"go", "go", Plain},
		{"go test ./... | tee log", "sh -c go test ./... | tee log", Plain},
	}
	for _, tt := range tests {
		c := mustParse(t, tt.in)
		inv, err := c.Argv(nil, Selection{}, GoJSON)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		if got := strings.Join(inv.Argv, " "); got != tt.want || inv.Form != tt.form {
			t.Errorf("%q GoJSON: %q form %v; want %q form %v", tt.in, got, inv.Form, tt.want, tt.form)
		}
		if plain, _ := c.Argv(nil, Selection{}, Plain); strings.Join(plain.Argv, " ") != strings.Join(c.argv, " ") {
			t.Errorf("%q: the form changed the command itself: %q", tt.in, c.argv)
		}
	}
}

func TestFormVerbose(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		form     Form
	}{
		{"go test ./...", "go test -v ./...", Verbose},
		{"go test -v ./...", "go test -v ./...", Verbose},
		{"go test -json ./...", "go test -json ./...", Verbose},
		{"go test -test.v=true ./...", "go test -test.v=true ./...", Verbose},
		{"go test -v=false ./...", "go test -v=false ./...", Plain},
		{"go test ./... -args -v", "go test -v ./... -args -v", Verbose},
		{"pytest -x", "pytest -x", Plain},
		{"/usr/local/go/bin/go test .", "/usr/local/go/bin/go test -v .", Verbose},
	} {
		inv, err := mustParse(t, tt.in).Argv(nil, Selection{}, Verbose)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		if got := strings.Join(inv.Argv, " "); got != tt.want || inv.Form != tt.form {
			t.Errorf("%q Verbose: %q form %v; want %q form %v", tt.in, got, inv.Form, tt.want, tt.form)
		}
	}
}

// The form applies to the narrowed argv: narrowing first, then -v.
func TestFormOnNarrowedArgv(t *testing.T) {
	t.Parallel()
	ws := mappingWorkspace(t)
	inv, err := mustParse(t, "go test -count=1 ./...").Argv(ws, Selection{Tests: []string{" TestA ", "TestB"}, Packages: []string{"pkg"}}, Verbose)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"go", "test", "-v", "-count=1", "-run", "^(TestA|TestB)$", "./pkg"}
	if diff := cmp.Diff(want, inv.Argv); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"TestA", "TestB"}, inv.Tests); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	// A narrowing a shell command cannot take is refused in every form.
	for _, f := range []Form{Plain, GoJSON, Verbose} {
		if _, err := mustParse(t, "go test ./... | tee x").Argv(ws, Selection{Tests: []string{"TestA"}}, f); !errors.Is(err, ErrNarrowing) {
			t.Errorf("form %v: err %v, want ErrNarrowing", f, err)
		}
	}
}

func TestNotPassed(t *testing.T) {
	t.Parallel()
	verbose := func(t *testing.T, line string, tests ...string) *Invocation {
		t.Helper()
		inv, err := mustParse(t, line).Argv(nil, Selection{}, Verbose)
		if err != nil {
			t.Fatal(err)
		}
		inv.Tests = tests // as Argv sets them for a narrowed run (no workspace needed here)
		return inv
	}
	const out = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- SKIP: TestB (0.00s)\n" +
		`{"Action":"output","Test":"TestJ","Output":"--- PASS: TestJ (0.01s)\n"}` + "\nok  \tx\t0.01s\n"
	for _, tt := range []struct {
		name string
		inv  *Invocation
		out  io.Reader
		want []string
	}{
		{"passed, skipped, missing", verbose(t, "go test ./...", "TestA", "TestB", "TestGone"), strings.NewReader(out), []string{"TestB", "TestGone"}},
		{"json output line", verbose(t, "go test -json ./...", "TestJ"), strings.NewReader(out), nil},
		{"a prefix is not the test", verbose(t, "go test ./...", "TestA", "Test"), strings.NewReader(out), []string{"Test"}},
		{"read in one-byte pieces", verbose(t, "go test ./...", "TestA", "TestJ"), iotest.OneByteReader(strings.NewReader(out)), nil},
		{"unreadable output", verbose(t, "go test ./...", "TestA"), iotest.ErrReader(errors.New("gone")), []string{"TestA"}},
		{"no output", verbose(t, "go test ./...", "TestA"), nil, []string{"TestA"}},
		{"plain form cannot tell", verbose(t, "go test -v=false ./...", "TestGone"), strings.NewReader(out), nil},
		{"other runner cannot tell", verbose(t, "pytest", "test_gone"), strings.NewReader(out), nil},
	} {
		if diff := cmp.Diff(tt.want, tt.inv.NotPassed(tt.out)); diff != "" {
			t.Errorf("%s: NotPassed (-want +got):\n%s", tt.name, diff)
		}
	}
}

// A pass line that straddles the reader's 64 KiB chunks is still found.
func TestNotPassedAcrossChunks(t *testing.T) {
	t.Parallel()
	inv, err := mustParse(t, "go test ./...").Argv(nil, Selection{}, Verbose)
	if err != nil {
		t.Fatal(err)
	}
	inv.Tests = []string{"TestLate"}
	for pad := 64<<10 - 20; pad < 64<<10+5; pad++ {
		out := strings.Repeat("x", pad) + "\n--- PASS: TestLate (0.00s)\n"
		if got := inv.NotPassed(strings.NewReader(out)); got != nil {
			t.Fatalf("pad %d: NotPassed = %q", pad, got)
		}
	}
}

func TestDiagnose(t *testing.T) {
	t.Parallel()
	ws := mappingWorkspace(t)
	narrowed, err := mustParse(t, "go test ./...").Argv(ws, Selection{Tests: []string{"TestNope"}}, Plain)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := mustParse(t, "go test ./...").Argv(ws, Selection{}, Plain)
	pytest, _ := mustParse(t, "pytest").Argv(ws, Selection{}, Plain)
	noTests := []byte("ok  \tx\t0.01s [no tests to run]\n")
	for _, tt := range []struct {
		name string
		inv  *Invocation
		code int
		want string
	}{
		{"go narrowed to nothing", narrowed, 0, "no tests to run"},
		{"go whole suite", whole, 0, ""},
		{"go narrowed, failing", narrowed, 1, ""},
		{"pytest collected nothing", pytest, 5, "exit code 5"},
		{"pytest failing", pytest, 1, ""},
	} {
		got := strings.Join(tt.inv.Diagnose(tt.code, noTests), "; ")
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: notes %q, want %q", tt.name, got, tt.want)
		}
	}
}
