package testcmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUncachedArgv(t *testing.T) {
	t.Parallel()
	ws := mappingWorkspace(t)
	const (
		goNote     = "-count=1 was added"
		pytestNote = "-p no:cacheprovider was added"
	)
	for _, tt := range []struct {
		name    string
		command string
		sel     Selection
		form    Form
		want    []string
		notes   []string // substrings, in order; nil: no note at all
	}{
		// go test
		{"go", "go test ./...", Selection{}, Plain, []string{"go", "test", "-count=1", "./..."}, []string{goNote}},
		{"go by path", "/usr/local/go/bin/go test -race ./pkg", Selection{}, Plain,
			[]string{"/usr/local/go/bin/go", "test", "-count=1", "-race", "./pkg"}, []string{goNote}},
		{"go -count=1 kept", "go test -count=1 ./...", Selection{}, Plain, []string{"go", "test", "-count=1", "./..."}, nil},
		{"go -count 3 kept", "go test -v -count 3 ./...", Selection{}, Plain, []string{"go", "test", "-v", "-count", "3", "./..."}, nil},
		{"go --count=2 kept", "go test --count=2 ./...", Selection{}, Plain, []string{"go", "test", "--count=2", "./..."}, nil},
		{"go -test.count kept", "go test -test.count=5 ./...", Selection{}, Plain, []string{"go", "test", "-test.count=5", "./..."}, nil},
		{"go -count after -args ignored", "go test ./pkg -args -count=2", Selection{}, Plain,
			[]string{"go", "test", "-count=1", "./pkg", "-args", "-count=2"}, []string{goNote}},
		{"go -test.count after --args ignored", "go test ./pkg --args -test.count=2", Selection{}, Plain,
			[]string{"go", "test", "-count=1", "./pkg", "--args", "-test.count=2"}, []string{goNote}},
		{"go -count as another flag's value", "go test -run -count ./...", Selection{}, Plain,
			[]string{"go", "test", "-count=1", "-run", "-count", "./..."}, []string{goNote}},
		{"go json form", "go test ./...", Selection{}, GoJSON, []string{"go", "test", "-count=1", "-json", "./..."}, []string{goNote}},
		{"go verbose narrowed", "go test -timeout 5m ./...", Selection{Tests: []string{"TestA"}, Packages: []string{"pkg"}}, Verbose,
			[]string{"go", "test", "-count=1", "-v", "-timeout", "5m", "-run", "^(TestA)$", "./pkg"}, []string{goNote}},
		// pytest
		{"pytest", "pytest -q tests", Selection{}, Plain, []string{"pytest", "-p", "no:cacheprovider", "-q", "tests"}, []string{pytestNote}},
		{"python -m pytest", "python3 -m pytest -x", Selection{}, Plain,
			[]string{"python3", "-m", "pytest", "-p", "no:cacheprovider", "-x"}, []string{pytestNote}},
		{"pytest narrowed", "pytest -k slow", Selection{Tests: []string{"test_a"}, Packages: []string{"tests/test_x.py"}}, Plain,
			[]string{"pytest", "-p", "no:cacheprovider", "-k", "(slow) and (test_a)", "tests/test_x.py"},
			[]string{"combined with the command's own -k slow", pytestNote}},
		{"pytest already off", "pytest -p no:cacheprovider -q", Selection{}, Plain, []string{"pytest", "-p", "no:cacheprovider", "-q"}, nil},
		{"pytest already off, glued", "pytest -pno:cacheprovider", Selection{}, Plain, []string{"pytest", "-pno:cacheprovider"}, nil},
		{"pytest other plugin blocked", "pytest -p no:randomly tests", Selection{}, Plain,
			[]string{"pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "tests"}, []string{pytestNote}},
		{"pytest cache options dropped", "pytest --lf -q --ff --lfnf none --sw-skip --cache-show '*' tests", Selection{}, Plain,
			[]string{"pytest", "-p", "no:cacheprovider", "-q", "tests"},
			[]string{pytestNote, "own --lf was dropped", "own --ff was dropped", "own --lfnf none was dropped",
				"own --sw-skip was dropped", "own --cache-show * was dropped"}},
		{"pytest --cache-show without value", "pytest --cache-show -q", Selection{}, Plain,
			[]string{"pytest", "-p", "no:cacheprovider", "-q"}, []string{pytestNote, "own --cache-show was dropped"}},
		{"pytest option as a value, and after --", "pytest -k --lf -- --ff", Selection{}, Plain,
			[]string{"pytest", "-p", "no:cacheprovider", "-k", "--lf", "--", "--ff"}, []string{pytestNote}},
		// runners with no result cache
		{"cargo", "cargo test --workspace", Selection{}, Plain, []string{"cargo", "test", "--workspace"}, nil},
		{"cargo toolchain", "cargo +nightly test", Selection{}, Plain, []string{"cargo", "+nightly", "test"}, nil},
		{"jest", "npx jest --ci", Selection{}, Plain, []string{"npx", "jest", "--ci"}, nil},
		{"vitest", "vitest run", Selection{}, Plain, []string{"vitest", "run"}, nil},
		{"npm", "npm test", Selection{}, Plain, []string{"npm", "test"}, []string{"npm test runs the package's test script"}},
		// nothing can be added
		{"shell syntax", "go test ./... | tee log", Selection{}, Plain, []string{"sh", "-c", "go test ./... | tee log"},
			[]string{"the runner's own caches are not controlled (shell syntax or an unknown runner)"}},
		{"unknown runner", "make test", Selection{}, Plain, []string{"make", "test"},
			[]string{"the runner's own caches are not controlled (shell syntax or an unknown runner)"}},
		{"mocha", "npx mocha", Selection{}, Plain, []string{"npx", "mocha"},
			[]string{"the runner's own caches are not controlled (shell syntax or an unknown runner)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv, err := mustParse(t, tt.command).Argv(ws, tt.sel, tt.form)
			if err != nil {
				t.Fatal(err)
			}
			argvBefore, notesBefore := slices.Clone(inv.Argv), slices.Clone(inv.Notes)
			got := inv.Uncached()
			if diff := cmp.Diff(tt.want, got.Argv); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
			checkNotes(t, got.Notes, tt.notes)
			if !slices.Equal(inv.Argv, argvBefore) || !slices.Equal(inv.Notes, notesBefore) {
				t.Errorf("Uncached changed the invocation it was called on: %q %q", inv.Argv, inv.Notes)
			}
			if got == inv || got.Form != inv.Form || !slices.Equal(got.Tests, inv.Tests) {
				t.Errorf("not a copy of the invocation: %+v from %+v", got, inv)
			}
			again := got.Uncached()
			if !slices.Equal(again.Argv, got.Argv) || !slices.Equal(again.Notes, got.Notes) {
				t.Errorf("Uncached twice: %q %q, once: %q %q", again.Argv, again.Notes, got.Argv, got.Notes)
			}
		})
	}
}

// checkNotes wants each of want, in order, in a note of its own, and no
// other note.
func checkNotes(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("notes %q, want %d matching %q", got, len(want), want)
		return
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("note %d is %q, want it to say %q", i, got[i], w)
		}
	}
}

// Uncached after Stress: a Stress Count is the run's -count and stays; a
// Stress without one leaves the cache to Uncached.
func TestUncachedAfterStress(t *testing.T) {
	t.Parallel()
	ws := mappingWorkspace(t)
	for _, tt := range []struct {
		name    string
		command string
		form    Form
		stress  Stress
		want    []string
		notes   []string
	}{
		{"stress count", "go test ./...", Plain, Stress{Count: 20}, []string{"go", "test", "-count=20", "./..."}, nil},
		{"stress count replaces the command's", "go test -count=1 ./...", GoJSON, Stress{Count: 5, Race: true},
			[]string{"go", "test", "-count=5", "-race", "-json", "./..."}, []string{"-count=1 was replaced"}},
		{"stress without count", "go test ./...", Verbose, Stress{Shuffle: "on"},
			[]string{"go", "test", "-count=1", "-shuffle=on", "-v", "./..."}, []string{"-count=1 was added"}},
		{"command's count kept", "go test -count=3 ./...", Plain, Stress{CPU: []int{1, 2}},
			[]string{"go", "test", "-cpu=1,2", "-count=3", "./..."}, nil},
		{"nothing asked", "go test ./...", Plain, Stress{}, []string{"go", "test", "-count=1", "./..."}, []string{"-count=1 was added"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv, err := mustParse(t, tt.command).Argv(ws, Selection{}, tt.form)
			if err != nil {
				t.Fatal(err)
			}
			stressed, err := inv.Stress(tt.stress)
			if err != nil {
				t.Fatal(err)
			}
			got := stressed.Uncached()
			if diff := cmp.Diff(tt.want, got.Argv); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
			checkNotes(t, got.Notes, tt.notes)
		})
	}
}

// What reads a run's output still works on the uncached copy: it keeps
// the runner, the form and the selected tests.
func TestUncachedKeepsTheVerdict(t *testing.T) {
	t.Parallel()
	inv, err := mustParse(t, "go test ./...").Argv(mappingWorkspace(t), Selection{Tests: []string{"TestA", "TestB"}}, Verbose)
	if err != nil {
		t.Fatal(err)
	}
	got := inv.Uncached()
	out := "=== RUN   TestA\n--- PASS: TestA (0.00s)\nok  \tx\t0.01s\n"
	if diff := cmp.Diff([]string{"TestB"}, got.NotPassed(strings.NewReader(out))); diff != "" {
		t.Errorf("NotPassed (-want +got):\n%s", diff)
	}
	if notes := got.Diagnose(0, []byte("ok x 0.1s [no tests to run]")); len(notes) != 1 {
		t.Errorf("Diagnose: %q", notes)
	}
}
