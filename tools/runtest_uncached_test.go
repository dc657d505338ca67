package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/testcmd"
)

// Uncached reaches the argv of Run and RunStressed (after the stressors),
// and not the model's run_test calls. A stub go records nothing: only the
// argv as run is checked.
func TestRunTestUncachedArgv(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	stub := filepath.Join(bin, "go")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := openWS(t, t.TempDir())
	for _, uncached := range []bool{false, true} {
		rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, stub+" test ./..."), Uncached: uncached})
		plain, stressed, counted := []string{stub, "test", "./..."}, []string{stub, "test", "-shuffle=on", "./..."}, []string{stub, "test", "-count=3", "./..."}
		if uncached {
			plain = []string{stub, "test", "-count=1", "./..."}
			stressed = []string{stub, "test", "-count=1", "-shuffle=on", "./..."}
		}
		out, err := rt.Run(t.Context(), testcmd.Selection{}, testcmd.Plain)
		if err != nil || !slices.Equal(out.Argv, plain) {
			t.Errorf("uncached %v: Run ran %q (err %v), want %q", uncached, out.Argv, err, plain)
		}
		if got := slices.ContainsFunc(out.Notes, func(n string) bool { return strings.Contains(n, "-count=1 was added") }); got != uncached {
			t.Errorf("uncached %v: Run's notes %q", uncached, out.Notes)
		}
		out, err = rt.RunStressed(t.Context(), testcmd.Selection{}, testcmd.Plain, testcmd.Stress{Shuffle: "on"})
		if err != nil || !slices.Equal(out.Argv, stressed) {
			t.Errorf("uncached %v: RunStressed ran %q (err %v), want %q", uncached, out.Argv, err, stressed)
		}
		out, err = rt.RunStressed(t.Context(), testcmd.Selection{}, testcmd.Plain, testcmd.Stress{Count: 3})
		if err != nil || !slices.Equal(out.Argv, counted) {
			t.Errorf("uncached %v: RunStressed with a count ran %q (err %v), want %q", uncached, out.Argv, err, counted)
		}
		res := execute(t, rt, `{}`)
		if res.IsError || !strings.Contains(res.Text, "command: "+stub+" test ./...\n") {
			t.Errorf("uncached %v: the model's run was not the command as configured:\n%s", uncached, res.Text)
		}
	}
}

// With Uncached, two runs of `go test ./...` both execute the test; without
// it the second is go test's replay of the cached pass. The test appends a
// line to a file outside its module (go test rechecks only the files inside
// the module for a cached result), so the file counts real executions.
func TestRunTestUncachedGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test twice with a fresh build cache")
	}
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH")
	}
	// One fresh build cache for both cases: each fixture has its own
	// module and marker path, so neither's results can answer the other.
	env := append(os.Environ(), "GOCACHE="+t.TempDir(), "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local")
	for _, uncached := range []bool{false, true} {
		t.Run("uncached="+strconv.FormatBool(uncached), func(t *testing.T) {
			t.Parallel()
			mod := t.TempDir()
			marker := filepath.Join(t.TempDir(), "executions")
			src := `package fixture

import (
	"os"
	"testing"
)

func TestRecordsEachExecution(t *testing.T) {
	f, err := os.OpenFile(` + strconv.Quote(marker) + `, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("executed\n"); err != nil {
		t.Fatal(err)
	}
}
`
			for name, text := range map[string]string{"go.mod": "module example.com/fixture\n\ngo 1.21\n", "fixture_test.go": src} {
				if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rt := NewRunTest(openWS(t, mod), RunTestConfig{Command: mustParse(t, "go test ./..."), Env: env, Uncached: uncached})
			var outputs []string
			for i := range 2 {
				out, err := rt.Run(t.Context(), testcmd.Selection{}, testcmd.Plain)
				if err != nil || !out.Passed() {
					t.Fatalf("run %d: %+v, %v", i+1, out, err)
				}
				outputs = append(outputs, out.Output)
			}
			b, err := os.ReadFile(marker)
			if err != nil {
				t.Fatalf("the test never ran: %v\n%s", err, outputs[0])
			}
			executions := strings.Count(string(b), "executed\n")
			replayed := strings.Contains(outputs[1], "(cached)")
			if uncached && (executions != 2 || replayed) {
				t.Errorf("uncached: %d executions, second run replayed %v; want 2, false:\n%s", executions, replayed, outputs[1])
			}
			if !uncached && (executions != 1 || !replayed) {
				t.Errorf("cached: %d executions, second run replayed %v; want 1, true:\n%s", executions, replayed, outputs[1])
			}
			if strings.Contains(outputs[0], "(cached)") {
				t.Errorf("the first run was answered from a cache:\n%s", outputs[0])
			}
		})
	}
}
