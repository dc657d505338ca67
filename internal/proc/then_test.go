//go:build unix

package proc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunThen: Spec.Then runs each command after the one before exited 0,
// as "A && B" would, with one capture and one log for all; the first
// failure stops the run (its exit code is the result's); the time limit
// is the whole run's.
func TestRunThen(t *testing.T) {
	t.Parallel()
	sh := func(script string) []string { return []string{"sh", "-c", script} }
	tests := []struct {
		name      string
		argv      []string
		then      [][]string
		wantCode  int
		wantOut   string
		wantSteps int
	}{
		{"all pass", sh("echo a"), [][]string{sh("echo b >&2"), sh("echo c")}, 0, "a\nb\nc\n", 3},
		{"second fails: third not run", sh("echo a"), [][]string{sh("echo b; exit 4"), sh("echo c")}, 4, "a\nb\n", 2},
		{"first fails: nothing after", sh("echo a; exit 1"), [][]string{sh("echo b")}, 1, "a\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logPath := filepath.Join(t.TempDir(), "out.log")
			res, err := Run(t.Context(), Spec{Argv: tt.argv, Then: tt.then, Env: baseEnv(), MergeStderr: true,
				LogPath: logPath})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantCode || res.Steps != tt.wantSteps || res.TimedOut {
				t.Fatalf("exit %d steps %d timed out %v, want exit %d steps %d", res.ExitCode, res.Steps, res.TimedOut,
					tt.wantCode, tt.wantSteps)
			}
			if got := res.Stdout.String(); got != tt.wantOut {
				t.Errorf("output %q, want %q", got, tt.wantOut)
			}
			if log, err := os.ReadFile(logPath); err != nil || string(log) != tt.wantOut {
				t.Errorf("log %q (%v), want %q", log, err, tt.wantOut)
			}
		})
	}
}

func TestRunThenTimeoutCoversAll(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res, err := Run(t.Context(), Spec{Argv: []string{"sh", "-c", "sleep 0.4"},
		Then: [][]string{{"sh", "-c", "sleep 0.4"}, {"sh", "-c", "sleep 300"}, {"sh", "-c", "echo never"}},
		Env:  baseEnv(), Timeout: time.Second, KillGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Steps != 3 || strings.Contains(res.Stdout.String(), "never") {
		t.Fatalf("timed out %v, steps %d, output %q", res.TimedOut, res.Steps, res.Stdout.String())
	}
	if d := time.Since(start); d > hangBound {
		t.Fatalf("the run took %v: the limit was not the whole run's", d)
	}
}

func TestRunThenNotStarted(t *testing.T) {
	t.Parallel()
	res, err := Run(t.Context(), Spec{Argv: []string{"sh", "-c", "echo a"},
		Then: [][]string{{"/nonexistent/mini-agent-no-such-program"}}, Env: baseEnv()})
	if !errors.Is(err, ErrNotStarted) || res.Steps != 1 {
		t.Fatalf("steps %d, err %v, want ErrNotStarted after one step", res.Steps, err)
	}
	if _, err := Run(t.Context(), Spec{Argv: []string{"true"}, Then: [][]string{{}}}); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("an empty command in Then: %v", err)
	}
}
