//go:build unix

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangBound is how long a run may take before a test calls it hung. It is a
// correctness bound (the children sleep 300 s), not a speed target.
const hangBound = 20 * time.Second

func baseEnv() []string { return []string{"PATH=" + os.Getenv("PATH")} }

func TestRunExitCodesAndStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		script     string
		merge      bool
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"ok", "echo out; echo err >&2", false, 0, "out\n", "err\n"},
		{"exit 3", "echo out; exit 3", false, 3, "out\n", ""},
		{"merged in order", "echo a; echo b >&2; echo c", true, 0, "a\nb\nc\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Run(t.Context(), Spec{Argv: []string{"sh", "-c", tt.script}, Env: baseEnv(), MergeStderr: tt.merge})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantCode || res.TimedOut || res.Cancelled {
				t.Fatalf("result %+v", res)
			}
			if got := res.Stdout.String(); got != tt.wantStdout {
				t.Errorf("stdout %q, want %q", got, tt.wantStdout)
			}
			if got := res.Stderr.String(); got != tt.wantStderr {
				t.Errorf("stderr %q, want %q", got, tt.wantStderr)
			}
		})
	}
}

func TestRunNilEnvIsEmpty(t *testing.T) {
	t.Parallel()
	res, err := Run(t.Context(), Spec{Argv: []string{"/usr/bin/env"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout.TotalBytes != 0 {
		t.Fatalf("child saw an environment: %q", res.Stdout.String())
	}
}

func TestRunNotStarted(t *testing.T) {
	t.Parallel()
	_, err := Run(t.Context(), Spec{Argv: []string{"mini-agent-no-such-program"}, Env: baseEnv()})
	if !errors.Is(err, ErrNotStarted) {
		t.Fatalf("err = %v, want ErrNotStarted", err)
	}
}

func TestRunLogFileAndCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	full := filepath.Join(dir, "full.log")
	res, err := Run(t.Context(), Spec{Argv: []string{"sh", "-c", "echo one; echo two >&2"}, Env: baseEnv(), MergeStderr: true, LogPath: full})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(full); string(b) != "one\ntwo\n" || res.LogBytes != 8 || res.LogErr != nil {
		t.Fatalf("log %q, result %+v", b, res)
	}

	capped := filepath.Join(dir, "capped.log")
	res, err = Run(t.Context(), Spec{Argv: []string{"sh", "-c", "printf 0123456789"}, Env: baseEnv(), LogPath: capped, LogLimit: 4})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(capped)
	if !strings.HasPrefix(string(b), "0123\n[mini-agent: log capped at 4 bytes; 6 more bytes") || res.LogDropped != 6 {
		t.Fatalf("capped log %q, result %+v", b, res)
	}
	if res.Stdout.String() != "0123456789" {
		t.Fatalf("capture lost bytes: %q", res.Stdout.String())
	}
}

// grandchildScript starts a sleeping grandchild, says so, records its pid
// (after the output a cancelled run must keep), then waits.
const grandchildScript = `sleep 300 & echo started; echo $! > "$1"; wait`

func TestRunKillsGrandchild(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"timeout", "timeout, SIGTERM ignored", "cancel"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			pidfile := filepath.Join(t.TempDir(), "pid")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			spec := Spec{Argv: []string{"sh", "-c", grandchildScript, "sh", pidfile}, Env: baseEnv(), KillGrace: 200 * time.Millisecond}
			switch mode {
			case "timeout, SIGTERM ignored":
				// Ignored dispositions survive exec: the sleep ignores TERM too,
				// so only the SIGKILL after the grace period ends them.
				spec.Argv[2] = "trap '' TERM; " + grandchildScript
				fallthrough
			case "timeout":
				spec.Timeout = time.Second // long enough for sh to record the pid on a loaded machine
			default:
				go func() {
					waitForPid(t, pidfile)
					cancel()
				}()
			}
			start := time.Now()
			res, err := Run(ctx, spec)
			elapsed := time.Since(start)
			if elapsed > hangBound {
				t.Fatalf("Run took %v", elapsed)
			}
			if spec.Timeout > 0 {
				if err != nil || !res.TimedOut || res.Cancelled {
					t.Fatalf("timeout: err %v, result %+v", err, res)
				}
			} else if !errors.Is(err, context.Canceled) || !res.Cancelled || res.TimedOut {
				t.Fatalf("cancel: err %v, result %+v", err, res)
			}
			if res.ExitCode != -1 || res.Signal == "" {
				t.Errorf("leader not reported as killed: %+v", res)
			}
			if !strings.Contains(res.Stdout.String(), "started") {
				t.Errorf("output before the kill lost: %q", res.Stdout.String())
			}
			assertDies(t, waitForPid(t, pidfile))
		})
	}
}

// A leader that exits normally leaves a background grandchild holding the
// pipe: Run must kill it and return, not wait 300 s for EOF.
func TestRunReapsBackgroundAfterExit(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	res, err := Run(t.Context(), Spec{Argv: []string{"sh", "-c", `sleep 300 & echo $! > "$1"; echo done`, "sh", pidfile}, Env: baseEnv()})
	if err != nil || res.ExitCode != 0 || res.Stdout.String() != "done\n" {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if elapsed := time.Since(start); elapsed > hangBound {
		t.Fatalf("Run took %v", elapsed)
	}
	assertDies(t, waitForPid(t, pidfile))
}

// A process that leaves the group (setsid) cannot be killed through it;
// Run must still return once the drain delay is over.
func TestRunDoesNotHangOnEscapedHolder(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pid")
	script := `python3 -c 'import os,sys,time
if os.fork() == 0:
    os.setsid(); open(sys.argv[1], "w").write(str(os.getpid())); time.sleep(300)
' "$1"; echo parent-done`
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	start := time.Now()
	res, err := Run(t.Context(), Spec{Argv: []string{"sh", "-c", script, "sh", pidfile}, Env: baseEnv()})
	pid := waitForPid(t, pidfile)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if err != nil || res.ExitCode != 0 || !strings.Contains(res.Stdout.String(), "parent-done") {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if elapsed := time.Since(start); elapsed > hangBound {
		t.Fatalf("Run took %v", elapsed)
	}
}

func waitForPid(t *testing.T, pidfile string) int {
	deadline := time.Now().Add(hangBound)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidfile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("no pid in %s", pidfile)
	return 0
}

// assertDies polls until pid is gone (or a zombie nobody reaped yet: in a
// container, pid 1 may be slow to reap orphans).
func assertDies(t *testing.T, pid int) {
	t.Helper()
	if pid <= 0 {
		return
	}
	deadline := time.Now().Add(hangBound)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("grandchild %d still alive", pid)
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err) // no /proc (macOS): trust kill(0)
	}
	// Format: pid (comm) state ...; comm may hold spaces and parens.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
