//go:build linux

package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/failure"
	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/sandbox/sandboxtest"
	"github.com/org/mini-agent/internal/testcmd"
)

// Hostile test code, run through run_test the way a model-written test
// would run: it tries to outlive the call, read another process's
// environment, write outside the workspace and signal outside processes.
// The attacks that a same-user process could do run as nobody (uid 65534)
// when the tests run as root, as on CI: hosted runners run jobs
// unprivileged.

const hostileEnv = "TOOLS_HOSTILE_HELPER"

func hostileHelperArgs() ([]string, bool) {
	if os.Getenv(hostileEnv) == "" {
		return nil, false
	}
	return os.Args[1:], true
}

// hostileHelper performs one attack and exits 0 when it worked.
func hostileHelper(args []string) int {
	if len(args) > 0 && args[0] == "root" {
		args = args[1:] // as the tests run
	} else if len(args) > 0 && args[0] == "nobody" {
		if os.Getuid() == 0 {
			// Under the sandbox as root, test code keeps uid 0 with no
			// capability left: it cannot drop, and attacks as what it is.
			if err := errors.Join(syscall.Setgroups(nil), syscall.Setgid(65534), syscall.Setuid(65534)); err != nil && !capless() {
				fmt.Println("drop:", err)
				return 2
			}
		}
		args = args[1:]
	}
	if len(args) < 2 {
		fmt.Println("bad helper args", args)
		return 2
	}
	var err error
	switch args[0] {
	case "dial":
		var c net.Conn
		if c, err = net.DialTimeout("tcp", args[1], 3*time.Second); err == nil {
			c.SetDeadline(time.Now().Add(3 * time.Second))
			b := make([]byte, 200)
			n, _ := c.Read(b)
			c.Close()
			fmt.Printf("%s", b[:n])
		}
	case "swaplog":
		// The newest saved log of a run in flight is this run's: make it a
		// link to a file the harness can read and test code should not.
		// (Given the runs directory, when the caller names it: other
		// tests' runs, in parallel, have logs in the temp dir too.)
		pattern := filepath.Join(os.TempDir(), "mini-agent-runs-*", "*.log")
		if len(args) > 2 {
			pattern = filepath.Join(args[2], "*.log")
		}
		var logs []string
		logs, err = filepath.Glob(pattern)
		newest, at := "", time.Time{}
		for _, l := range logs {
			if fi, err := os.Lstat(l); err == nil && fi.ModTime().After(at) {
				newest, at = l, fi.ModTime()
			}
		}
		if err == nil && newest == "" {
			err = fmt.Errorf("no log found in %s: %v", os.TempDir(), logs)
		}
		if err == nil {
			os.Remove(newest)
			err = os.Symlink(args[1], newest)
			fmt.Println("swapped", newest)
		}
	case "readenv":
		var b []byte
		b, err = os.ReadFile("/proc/" + args[1] + "/environ")
		os.Stdout.Write(bytes.ReplaceAll(b, []byte{0}, []byte{'\n'}))
	case "kill":
		pid, _ := strconv.Atoi(args[1])
		err = syscall.Kill(pid, syscall.SIGKILL)
	case "write":
		err = os.WriteFile(args[1], []byte("planted by test code"), 0o755)
	default:
		err = errors.New("unknown attack")
	}
	if err != nil {
		fmt.Println("attack failed:", err)
		return 1
	}
	fmt.Println("attack worked")
	return 0
}

// capless reports whether this process has no effective capability.
func capless() bool {
	b, err := os.ReadFile("/proc/self/status")
	return err == nil && bytes.Contains(b, []byte("\nCapEff:\t0000000000000000\n"))
}

// hostileRun runs the test binary as the helper through run_test.
func hostileRun(t *testing.T, noSandbox bool, args ...string) RunOutcome {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := openWS(t, t.TempDir())
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, self+" "+strings.Join(args, " ")), NoSandbox: noSandbox,
		Env: append(os.Environ(), hostileEnv+"=1"), EnvAllow: []string{hostileEnv}})
	out, err := rt.Run(t.Context(), testcmd.Selection{}, testcmd.Plain)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func requireLandlock(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(); !st.Active() {
		if _, err := os.Stat("/sys/kernel/security/landlock"); err == nil {
			t.Fatalf("Landlock is in the kernel but the sandbox is off: %s", st)
		}
		t.Skipf("no Landlock on this kernel: %s", st)
	}
}

func TestHostileCannotReadOutsideEnviron(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	v, canary := sandboxtest.Victim(t, true)
	pid := strconv.Itoa(v.Process.Pid)
	if out := hostileRun(t, true, "nobody", "readenv", pid); !strings.Contains(out.Output, canary) {
		t.Fatalf("control: without the sandbox the attack should work:\n%s", out.Text())
	}
	out := hostileRun(t, false, "nobody", "readenv", pid)
	if strings.Contains(out.Output, canary) || !strings.Contains(out.Output, "attack failed: open /proc/"+pid+"/environ: permission denied") {
		t.Fatalf("test code read the environment of a process outside:\n%s", out.Text())
	}
	if !strings.Contains(out.Text(), "isolation: processes: ") || !strings.Contains(out.Protections, "landlock ABI") {
		t.Errorf("protections not reported: %q\n%s", out.Protections, out.Text())
	}
}

func TestHostileCannotSignalOutside(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	if st := sandbox.Probe(); !st.Signals {
		t.Skipf("no Landlock signal scoping on this kernel: %s", st)
	}
	for _, who := range []string{"root", "nobody"} {
		t.Run(who, func(t *testing.T) {
			t.Parallel()
			v, _ := sandboxtest.Victim(t, true)
			out := hostileRun(t, false, who, "kill", strconv.Itoa(v.Process.Pid))
			if !strings.Contains(out.Output, "attack failed: operation not permitted") || v.Process.Signal(syscall.Signal(0)) != nil {
				t.Fatalf("test code killed a process outside:\n%s", out.Text())
			}
			c, _ := sandboxtest.Victim(t, true)
			if out := hostileRun(t, true, who, "kill", strconv.Itoa(c.Process.Pid)); out.ExitCode != 0 {
				t.Fatalf("control: without the sandbox the attack should work:\n%s", out.Text())
			}
		})
	}
}

// outsideDir is a directory every user can write in but that is none of
// the sandbox's writable places.
func outsideDir(t *testing.T) string {
	t.Helper()
	for _, base := range []string{"/var/tmp", "."} {
		abs, err := filepath.Abs(base)
		if err != nil || strings.HasPrefix(abs+"/", filepath.Clean(os.TempDir())+"/") || strings.HasPrefix(abs+"/", "/tmp/") {
			continue
		}
		d, err := os.MkdirTemp(abs, ".hostile-write-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
		return d
	}
	t.Fatal("no directory outside the sandbox's writable places")
	return ""
}

func TestHostileCannotWriteOutside(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	dir := outsideDir(t)
	for _, who := range []string{"root", "nobody"} {
		t.Run(who, func(t *testing.T) {
			t.Parallel()
			target := filepath.Join(dir, who+"-hook")
			out := hostileRun(t, false, who, "write", target)
			if _, err := os.Stat(target); err == nil || !strings.Contains(out.Output, "attack failed: open "+target+": permission denied") {
				t.Fatalf("test code wrote outside the workspace:\n%s", out.Text())
			}
			if out := hostileRun(t, true, who, "write", target); out.ExitCode != 0 {
				t.Fatalf("control: without the sandbox the attack should work:\n%s", out.Text())
			}
		})
	}
}

// daemonLine starts a grandchild that leaves the run's session (setsid in
// a forked child) and records its pid, then exits or hangs.
func daemonLine(pidfile, then string) string {
	return fmt.Sprintf(`setsid sh -c 'echo $$ > %[1]s.tmp; mv %[1]s.tmp %[1]s; exec sleep 300' < /dev/null > /dev/null 2>&1 & `+
		`while [ ! -s %[1]s ]; do sleep 0.01; done; echo started; %[2]s`, pidfile, then)
}

func TestHostileDaemonDiesWithRunTest(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"return", "timeout", "cancel"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			pidfile := filepath.Join(t.TempDir(), "daemon.pid")
			then := "exit 0"
			if end != "return" {
				then = "sleep 300"
			}
			ws := openWS(t, t.TempDir())
			rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, daemonLine(pidfile, then)), Timeout: 3 * time.Second})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if end == "cancel" {
				go func() {
					for ctx.Err() == nil {
						if b, _ := os.ReadFile(pidfile); len(b) > 0 {
							cancel()
							return
						}
						time.Sleep(10 * time.Millisecond)
					}
				}()
			}
			out, err := rt.Run(ctx, testcmd.Selection{}, testcmd.Plain)
			switch {
			case end == "cancel" && !errors.Is(err, context.Canceled):
				t.Fatalf("cancel: err %v", err)
			case end != "cancel" && err != nil:
				t.Fatal(err)
			case end == "timeout" && !out.TimedOut:
				t.Fatalf("not timed out:\n%s", out.Text())
			}
			b, err := os.ReadFile(pidfile)
			if err != nil {
				t.Fatalf("daemon never started:\n%s", out.Text())
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("the setsid daemon %d outlived run_test (%s)", pid, out.Protections)
			}
			if out.Leftovers < 1 || !strings.Contains(out.Text(), "processes the command left running were killed") {
				t.Errorf("leftover kill not reported (%d):\n%s", out.Leftovers, out.Text())
			}
		})
	}
}

// A real `go test` of a module passes in the sandbox (build cache, module
// cache and temp dir writable), and reports the sandbox.
func TestSandboxedGoTestPasses(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	ws := copyFixture(t, "run_gomod")
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "go test -count=1 ./b")})
	out, err := rt.Run(t.Context(), testcmd.Selection{}, testcmd.Plain)
	if err != nil || !out.Passed() {
		t.Fatalf("err %v:\n%s", err, out.Text())
	}
	if !strings.Contains(out.Protections, "landlock ABI") || rt.Protections() != out.Protections {
		t.Fatalf("protections %q / %q", out.Protections, rt.Protections())
	}
}

// A failure printed after the saved log's cap is still found by failure
// extraction reading the saved log: the in-memory tail is appended to it.
func TestFailureAfterLogCapIsExtracted(t *testing.T) {
	t.Parallel()
	ws := openWS(t, t.TempDir())
	// 70 MB of 100-byte lines (yes is the cheapest generator of them).
	line := `yes ` + strings.Repeat("x", 99) + ` | head -c 70000000; echo; ` +
		`echo '--- FAIL: TestLateFailure (0.00s)'; echo '    late_test.go:7: the failure after 64 MB'; echo FAIL; exit 1`
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, line)})
	out, err := rt.Run(t.Context(), testcmd.Selection{}, testcmd.Plain)
	if err != nil {
		t.Fatal(err)
	}
	if out.OutputBytes < 70000000 || !strings.Contains(out.Text(), "was capped at") {
		t.Fatalf("output not over the cap:\n%s", out.Text())
	}
	fc, err := failure.ExtractFile(out.LogPath, failure.Options{Workspace: ws.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	if ids := fc.IDs(); !contains(ids, "TestLateFailure") {
		t.Fatalf("failure after the cap lost: ids %q", ids)
	}
}

// Each run_test call that ran the command is followed in the trace by an
// event naming what contained it; other tools' calls and calls that ran
// nothing are not.
func TestIsolationEvents(t *testing.T) {
	t.Parallel()
	ws := openWS(t, t.TempDir())
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "true")})
	rec := &agent.Recorder{}
	sink := rt.IsolationEvents(rec)
	end := func(tool string) {
		sink.Emit(agent.Event{Type: agent.EventToolEnd, Data: map[string]any{"tool": tool, "step": 1, "id": "c1"}})
	}
	end("run_test") // before any run: nothing to say
	if _, err := rt.Run(t.Context(), testcmd.Selection{}, testcmd.Plain); err != nil {
		t.Fatal(err)
	}
	end("search")
	end("run_test")
	end("run_test") // no new run
	var iso []agent.Event
	for _, e := range rec.Events() {
		if e.Type == EventIsolation {
			iso = append(iso, e)
		}
	}
	if len(rec.Events()) != 5 || len(iso) != 1 || iso[0].Data["protections"] != rt.Protections() ||
		!strings.HasPrefix(rt.Protections(), "processes: ") {
		t.Fatalf("events %+v", rec.Events())
	}
}
