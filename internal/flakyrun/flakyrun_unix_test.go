//go:build unix

package flakyrun

import (
	"context"
	"errors"
	"github.com/org/mini-agent/internal/flaky/flakytest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDetectTimeBudget: a run cut by --max-minutes ends the detection,
// is not counted, and its processes are gone.
func TestDetectTimeBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	pids := filepath.Join(t.TempDir(), "pids")
	res, err := Detect(context.Background(), Config{Workdir: hangModule(t), Command: mustParse(t, "go test ./..."),
		MaxTime: 20 * time.Second, EnvAllow: []string{"HANG_PIDS"}, Env: append(os.Environ(), "HANG_PIDS="+pids)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopMaxTime || len(res.Runs) != 0 {
		t.Errorf("stopped by %s after %d runs; want max-time, 0 runs", res.Stop, len(res.Runs))
	}
	assertGone(t, pids)
}

// TestDetectCancel: cancelling kills the running test and its children.
func TestDetectCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	pids := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(pids); err == nil {
				time.Sleep(200 * time.Millisecond) // the file is written whole
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, err := Detect(ctx, Config{Workdir: hangModule(t), Command: mustParse(t, "go test ./..."),
		EnvAllow: []string{"HANG_PIDS"}, Env: append(os.Environ(), "HANG_PIDS="+pids)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Minute {
		t.Errorf("cancellation took %v", d)
	}
	assertGone(t, pids)
}

// hangModule is a copy of testdata/hang whose packages are built already,
// with and without -race (the rotation's first run): the time limits of
// these tests bound the hanging run, not a cold compile on a loaded machine.
func hangModule(t *testing.T) string {
	t.Helper()
	dir := flakytest.CopyModule(t, "testdata/hang")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, race := range []bool{false, true} {
		args := []string{"test", "-count=1", "-run", "^$", "./..."}
		if race {
			args = append(args[:1], append([]string{"-race"}, args[1:]...)...)
		}
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("warming the build: go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

// assertGone checks that the processes whose ids the hang test wrote are dead.
func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the hanging test never wrote its pids: %v", err)
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		t.Fatalf("pid file %q", data)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, f := range fields {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			err := syscall.Kill(pid, 0)
			if errors.Is(err, syscall.ESRCH) || zombie(pid) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process %d still alive after the run ended", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// zombie reports a process that has exited but not been reaped.
func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// TestDetectRunTimeout: a test that hangs past the per-run limit is killed
// with its children and counted as a failure of that test, not dropped.
func TestDetectRunTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	pids := filepath.Join(t.TempDir(), "pids")
	res, err := Detect(context.Background(), Config{Workdir: hangModule(t), Command: mustParse(t, "go test ./..."),
		MaxRuns: 1, RunTimeout: 15 * time.Second, EnvAllow: []string{"HANG_PIDS"}, Env: append(os.Environ(), "HANG_PIDS="+pids)})
	if err != nil {
		t.Fatal(err)
	}
	e := find(res, "TestHang")
	if e == nil || e.Failures != 1 || len(e.Messages) == 0 || !strings.Contains(e.Messages[0], "never finished") {
		t.Fatalf("TestHang: %+v, want one failure that says it never finished", e)
	}
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "time limit") {
		t.Errorf("notes %q do not say a run hit its time limit", res.Notes)
	}
	assertGone(t, pids)
}
