package testcmd

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// runGo runs an invocation's argv with the real go command in
// testdata/gomod and returns the combined output.
func runGo(t *testing.T, inv *Invocation) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, inv.Argv[0], inv.Argv[1:]...)
	cmd.Dir = filepath.Join("testdata", "gomod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v\n%s", inv.Argv, err, out)
	}
	return out
}

// The verdict read from real go test output, in both forms the harness
// uses: a passing test is confirmed; a skipped or missing one (exit 0 all
// the same) is not.
func TestNotPassedOnRealGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH")
	}
	ws := openDir(t, filepath.Join("testdata", "gomod"))
	sel := Selection{Tests: Names([]string{"TestPass", "TestSkip", "TestTable/one", "TestRenamed"}), Packages: []string{"."}}
	for _, form := range []Form{Verbose, GoJSON} {
		inv, err := mustParse(t, "go test -count=1 ./...").Argv(ws, sel, form)
		if err != nil {
			t.Fatal(err)
		}
		if inv.Form != form {
			t.Fatalf("form %v not applied: %q", form, inv.Argv)
		}
		out := runGo(t, inv)
		if diff := cmp.Diff([]string{"TestSkip", "TestRenamed"}, inv.NotPassed(bytes.NewReader(out))); diff != "" {
			t.Errorf("%v: NotPassed (-want +got):\n%s\noutput:\n%s", form, diff, out)
		}
	}
}

// The stress flags are ones the real go command takes, with the effect
// asked: -count=2 with -cpu=1,2 runs each test four times.
func TestStressOnRealGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH")
	}
	ws := openDir(t, filepath.Join("testdata", "gomod"))
	inv, err := mustParse(t, "go test -count=1 ./...").Argv(ws, Selection{Tests: []string{"TestPass"}}, Verbose)
	if err != nil {
		t.Fatal(err)
	}
	inv, err = inv.Stress(Stress{Count: 2, Shuffle: "12345", CPU: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(runGo(t, inv))
	if n := strings.Count(out, "--- PASS: TestPass ("); n != 4 {
		t.Errorf("TestPass passed %d times, want 4:\n%s", n, out)
	}
	if !strings.Contains(out, "-test.shuffle 12345") {
		t.Errorf("no shuffle seed in the output:\n%s", out)
	}
}
