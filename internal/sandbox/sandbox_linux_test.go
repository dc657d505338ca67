//go:build linux

package sandbox_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/sandbox/sandboxtest"
)

// The test binary is its own launcher, and doubles as the hostile program
// run inside the sandbox when helperEnv is set: its arguments name an
// attack, optionally after "nobody" (drop to uid/gid 65534 first, as code
// under test runs on a hosted runner).
const helperEnv = "SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	sandbox.Main()
	if os.Getenv(helperEnv) != "" {
		os.Exit(helper(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func helper(args []string) int {
	if len(args) > 0 && args[0] == "nobody" {
		if err := dropToNobody(); err != nil {
			fmt.Println("drop:", err)
			return 2
		}
		args = args[1:]
	}
	if len(args) != 2 {
		fmt.Println("bad helper args", args)
		return 2
	}
	var err error
	switch args[0] {
	case "write":
		err = os.WriteFile(args[1], []byte("planted"), 0o644)
	case "readenv":
		var b []byte
		b, err = os.ReadFile("/proc/" + args[1] + "/environ")
		os.Stdout.Write(bytes.ReplaceAll(b, []byte{0}, []byte{'\n'}))
	case "kill":
		pid, _ := strconv.Atoi(args[1])
		err = syscall.Kill(pid, syscall.SIGTERM)
	default:
		err = errors.New("unknown attack")
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

func dropToNobody() error {
	if os.Getuid() != 0 {
		return nil // already unprivileged
	}
	if err := syscall.Setgroups(nil); err != nil {
		return err
	}
	if err := syscall.Setgid(65534); err != nil {
		return err
	}
	return syscall.Setuid(65534)
}

// attack runs the test binary as the hostile helper, confined by p when
// sandboxed, and reports its output and whether the attack worked.
func attack(t *testing.T, sandboxed bool, p sandbox.Policy, args ...string) (string, bool) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{self}, args...)
	if sandboxed {
		var st sandbox.Status
		argv, st = sandbox.Command(p, argv)
		if !st.Active() {
			t.Fatalf("sandbox inactive: %s", st)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return string(out), err == nil
}

// needLandlock fails when the kernel has Landlock but Status says it is
// inactive, and skips (saying why) on a kernel without it.
func needLandlock(t *testing.T) sandbox.Status {
	st := sandbox.Probe()
	if !st.Active() {
		if _, err := os.Stat("/sys/kernel/security/landlock"); err == nil {
			t.Fatalf("Landlock is in the kernel but the sandbox is off: %s", st)
		}
		t.Skipf("no Landlock on this kernel: %s", st)
	}
	return st
}

// worldDir is a temporary directory every user may reach and write in, so
// the attacks dropped to nobody fail only because of the sandbox.
func worldDir(t *testing.T, name string) string {
	d, err := os.MkdirTemp("", "sandbox-test-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o777); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSandboxLimitsWrites(t *testing.T) {
	needLandlock(t)
	allowed, outside := worldDir(t, "allowed"), worldDir(t, "outside")
	p := sandbox.Policy{Launcher: sandbox.Launcher(), Writable: []string{allowed}}
	for _, who := range [][]string{nil, {"nobody"}} {
		name := "root"
		if who != nil {
			name = "nobody"
		}
		t.Run(name, func(t *testing.T) {
			target := filepath.Join(outside, name+"-planted")
			if out, ok := attack(t, false, p, append(who, "write", target)...); !ok {
				t.Fatalf("control: unconfined write failed: %s", out)
			}
			os.Remove(target)
			if out, ok := attack(t, true, p, append(who, "write", target)...); ok || !strings.Contains(out, "permission denied") {
				t.Fatalf("confined write outside the writable dirs: ok=%v %s", ok, out)
			}
			if _, err := os.Stat(target); err == nil {
				t.Fatal("file planted outside the writable dirs")
			}
			if out, ok := attack(t, true, p, append(who, "write", filepath.Join(allowed, name+"-in"))...); !ok {
				t.Fatalf("confined write inside a writable dir failed: %s", out)
			}
			if out, ok := attack(t, true, p, append(who, "write", "/dev/null")...); !ok {
				t.Fatalf("confined write to /dev/null failed: %s", out)
			}
		})
	}
}

// Code under test runs as the same user as the harness's own children:
// both are nobody here. (As root, this kernel lets the confined process read
// the environ of outside processes anyway: root is not a boundary Landlock
// keeps, and hosted runners run jobs unprivileged.)
func TestSandboxHidesEnvironOfOutsideProcesses(t *testing.T) {
	needLandlock(t)
	p := sandbox.Policy{Launcher: sandbox.Launcher()}
	v, canary := sandboxtest.Victim(t, true)
	pid := strconv.Itoa(v.Process.Pid)
	if out, ok := attack(t, false, p, "nobody", "readenv", pid); !ok || !strings.Contains(out, canary) {
		t.Fatalf("control: unconfined read of the victim's environ failed: %s", out)
	}
	out, ok := attack(t, true, p, "nobody", "readenv", pid)
	if ok || strings.Contains(out, canary) {
		t.Fatalf("confined process read another process's environ: %s", out)
	}
}

func TestSandboxBlocksSignalsToOutsideProcesses(t *testing.T) {
	if st := needLandlock(t); !st.Signals {
		t.Skipf("this kernel's Landlock has no signal scoping: %s", st)
	}
	p := sandbox.Policy{Launcher: sandbox.Launcher()}
	for _, who := range [][]string{nil, {"nobody"}} {
		name := "root"
		if who != nil {
			name = "nobody"
		}
		t.Run(name, func(t *testing.T) {
			v, _ := sandboxtest.Victim(t, who != nil)
			pid := strconv.Itoa(v.Process.Pid)
			if out, ok := attack(t, true, p, append(who, "kill", pid)...); ok {
				t.Fatalf("confined process signalled an outside process: %s", out)
			}
			if err := v.Process.Signal(syscall.Signal(0)); err != nil {
				t.Fatalf("victim gone: %v", err)
			}
			control, _ := sandboxtest.Victim(t, who != nil)
			if out, ok := attack(t, false, p, append(who, "kill", strconv.Itoa(control.Process.Pid))...); !ok {
				t.Fatalf("control: unconfined kill failed: %s", out)
			}
		})
	}
}

// A real `go test` of a small module passes inside the sandbox with the
// workspace, the temp dir and the tool caches writable.
func TestSandboxRunsGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	needLandlock(t)
	ws := t.TempDir()
	for _, f := range []string{"go.mod", "add.go", "add_test.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "gomod", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	env := os.Environ()
	p := sandbox.Policy{Launcher: sandbox.Launcher(), Writable: append([]string{ws, os.TempDir()}, sandbox.ToolCaches(env)...)}
	argv, st := sandbox.Command(p, []string{gobin, "test", "-count=1", "./..."})
	if !st.Active() {
		t.Fatalf("sandbox inactive: %s", st)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = ws, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test in the sandbox: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "generated.out")); err != nil {
		t.Fatalf("the test's write in the workspace is missing: %v", err)
	}
}

// BenchmarkStartOverhead measures what the wrapper adds to starting a
// command: run `true` directly and through the sandbox in the same run.
func BenchmarkStartOverhead(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"direct", "sandboxed"} {
		b.Run(mode, func(b *testing.B) {
			argv := []string{truePath}
			if mode == "sandboxed" {
				var st sandbox.Status
				argv, st = sandbox.Command(sandbox.Policy{Launcher: sandbox.Launcher(), Writable: []string{os.TempDir()}}, argv)
				if !st.Active() {
					b.Skipf("no sandbox: %s", st)
				}
			}
			for b.Loop() {
				if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
