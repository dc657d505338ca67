//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A daemon that test code detaches with setsid (leaving the process group
// mini-agent used to kill) dies when the whole run is interrupted, and the
// bundle says what contained the test command.
func TestSetsidDaemonDiesWithTheRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	ws, out := workspace(t), t.TempDir()
	pidfile := filepath.Join(t.TempDir(), "pid")
	logf := filepath.Join(t.TempDir(), "fail.log")
	os.WriteFile(logf, []byte("--- FAIL: TestTotal (0.00s)\n    cart_test.go:8: Total(items, 0) = 1200, want 1500\nFAIL\n"), 0o644)
	line := "sh -c 'setsid sh -c \"echo \\$\\$ > " + pidfile + ".tmp; mv " + pidfile + ".tmp " + pidfile +
		"; exec sleep 300\" < /dev/null > /dev/null 2>&1 & sleep 300'"
	cmd := exec.Command(binary, "fix", "--workdir", ws, "--test-command", line,
		"--failure-log", logf, "--provider", "script", "--script", "testdata/slow.jsonl",
		"--trace", filepath.Join(out, "trace.jsonl"), "--bundle", filepath.Join(out, "bundle.json"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && pid == 0 {
		if b, err := os.ReadFile(pidfile); err == nil {
			pid, _ = strconv.Atoi(string(bytes.TrimSpace(b)))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pid == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("test command never started\n%s", stderr.String())
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); !bytes.Contains(st, []byte(") S ")) && !bytes.Contains(st, []byte(") R ")) {
		t.Fatalf("daemon not running before the interrupt: %s", st)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("mini-agent did not exit after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr.String())
	}
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !bytes.Contains(st, []byte(") Z ")) {
		t.Fatalf("the setsid daemon survived the interrupted run: %s", st)
	}
	b := readBundle(t, filepath.Join(out, "bundle.json"))
	if !strings.HasPrefix(b.Isolation, "processes: ") || !strings.Contains(b.Isolation, "landlock") {
		t.Errorf("bundle isolation %q", b.Isolation)
	}
}

// A daemon left by a run_test call that returns normally is gone when the
// call's result reaches the model, and the trace (the tool result), the
// bundle and the PR body name the protections.
func TestSetsidDaemonDiesWithRunTestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	ws, out := workspace(t), t.TempDir()
	pidfile := filepath.Join(t.TempDir(), "pid")
	logf := filepath.Join(t.TempDir(), "fail.log")
	os.WriteFile(logf, []byte("--- FAIL: TestTotal (0.00s)\n    cart_test.go:8: Total(items, 0) = 1200, want 1500\nFAIL\n"), 0o644)
	// The daemon records whether it is still alive when run_test returns:
	// the second run of the command (validation) finds the first's pid.
	line := "sh -c 'setsid sh -c \"echo \\$\\$ >> " + pidfile + "; exec sleep 300\" < /dev/null > /dev/null 2>&1 & sleep 0.5; exit 1'"
	r := runBinary(t, t.Context(), nil, "fix", "--workdir", ws, "--test-command", line,
		"--failure-log", logf, "--provider", "script", "--script", "testdata/runtest_once.jsonl",
		"--trace", filepath.Join(out, "trace.jsonl"), "--bundle", filepath.Join(out, "bundle.json"),
		"--summary", filepath.Join(out, "summary.md"))
	pids, _ := os.ReadFile(pidfile)
	fields := strings.Fields(string(pids))
	if len(fields) == 0 {
		t.Fatalf("the daemon never started (exit %d)\n%s", r.code, r.stderr)
	}
	for _, f := range fields {
		pid, _ := strconv.Atoi(f)
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		if st, err := os.ReadFile("/proc/" + f + "/stat"); err == nil && !bytes.Contains(st, []byte(") Z ")) {
			t.Errorf("daemon %s outlived its run_test: %s", f, st)
		}
	}
	trace, _ := os.ReadFile(filepath.Join(out, "trace.jsonl"))
	if !strings.Contains(string(trace), `{"type":"run_test.isolation",`) || !strings.Contains(string(trace), `"protections":"processes: `) {
		t.Errorf("trace does not say what contained the test command:\n%s", trace)
	}
	if !regexp.MustCompile(`"leftovers_killed":[1-9]`).Match(trace) {
		t.Errorf("trace does not count the killed daemon:\n%s", trace)
	}
	b := readBundle(t, filepath.Join(out, "bundle.json"))
	if !strings.HasPrefix(b.Isolation, "processes: ") {
		t.Errorf("bundle isolation %q", b.Isolation)
	}
	summary, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	if !strings.Contains(string(summary), "Test command isolation: "+b.Isolation) {
		t.Errorf("summary lacks the isolation line:\n%s", summary)
	}
}
