//go:build linux

package sandbox_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/sandbox/sandboxtest"
)

// The test binary is its own launcher, and doubles as the hostile program
// run inside the sandbox when helperEnv is set: its arguments name an
// attack, optionally after "nobody" (drop to uid/gid 65534 first, as code
// under test runs on a hosted runner). As "harness SPEC ATTACK..." it
// plays mini-agent itself: it runs the attack through sandbox.Prepare (or
// directly, the control) and prints what happened as JSON.
const helperEnv = "SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	sandbox.Main()
	if os.Getenv(helperEnv) != "" {
		os.Exit(helper(os.Args[1:]))
	}
	code := m.Run()
	sandbox.Cleanup()
	if exePath != "" {
		os.RemoveAll(filepath.Dir(exePath))
	}
	os.Exit(code)
}

func helper(args []string) int {
	if len(args) > 0 && args[0] == "harness" {
		return harness(args[1:])
	}
	if len(args) > 0 && args[0] == "nobody" {
		if err := dropToNobody(); err != nil {
			fmt.Println("drop:", err)
			return 2
		}
		args = args[1:]
	}
	if len(args) < 1 {
		fmt.Println("bad helper args", args)
		return 2
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	var err error
	switch args[0] {
	case "write":
		err = os.WriteFile(arg(1), []byte("planted"), 0o644)
	case "append":
		var f *os.File
		if f, err = os.OpenFile(arg(1), os.O_WRONLY|os.O_APPEND, 0); err == nil {
			_, err = f.WriteString("GOFLAGS=-toolexec=/tmp/x\n")
			f.Close()
		}
	case "readenv":
		var b []byte
		b, err = os.ReadFile("/proc/" + arg(1) + "/environ")
		os.Stdout.Write(bytes.ReplaceAll(b, []byte{0}, []byte{'\n'}))
	case "read":
		var b []byte
		if b, err = os.ReadFile(arg(1)); err == nil {
			os.Stdout.Write(b)
			if !bytes.Contains(b, []byte(arg(2))) {
				err = errors.New("no secret in it")
			}
		}
	case "kill":
		pid, _ := strconv.Atoi(arg(1))
		err = syscall.Kill(pid, syscall.SIGTERM)
	case "docker":
		var ans string
		if ans, err = sandboxtest.AskDaemon(arg(1)); err == nil && ans != "OK" {
			err = fmt.Errorf("daemon answered %q", ans)
		}
	case "sudo":
		var out []byte
		out, err = exec.Command("sudo", "-n", "id", "-u").CombinedOutput()
		fmt.Printf("%s", out)
		if err == nil && strings.TrimSpace(string(out)) != "0" {
			err = errors.New("not root")
		}
	case "ifaces":
		var ifs []net.Interface
		ifs, err = net.Interfaces()
		var names []string
		for _, i := range ifs {
			names = append(names, i.Name)
		}
		fmt.Println("interfaces:", strings.Join(names, ","))
		if err == nil && len(names) == 1 && names[0] == "lo" {
			err = errors.New("loopback only")
		}
	case "dial":
		var c net.Conn
		if c, err = net.DialTimeout("tcp", arg(1), 3*time.Second); err == nil {
			c.SetDeadline(time.Now().Add(3 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			fmt.Print(line)
			if strings.TrimSpace(line) != arg(2) {
				err = errors.New("no token")
			}
		}
	case "id":
		fmt.Printf("uid=%d gid=%d groups=%v\n", os.Getuid(), os.Getgid(), must(os.Getgroups()))
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

func must[T any](v T, _ error) T { return v }

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

// harnessSpec is what the helper playing mini-agent runs an attack with.
type harnessSpec struct {
	Direct   bool           `json:"direct,omitempty"`
	Dir      string         `json:"dir,omitempty"`
	Writable []string       `json:"writable,omitempty"`
	Access   sandbox.Access `json:"access"`
}

// harnessResult is what it reports.
type harnessResult struct {
	Out    string `json:"out"`
	OK     bool   `json:"ok"`
	Status string `json:"status,omitempty"`
}

func harness(args []string) int {
	var spec harnessSpec
	if len(args) < 2 || json.Unmarshal([]byte(args[0]), &spec) != nil {
		fmt.Println("bad harness args", args)
		return 2
	}
	self, _ := os.Executable()
	attack := slices.Clone(args[1:])
	for i, a := range attack {
		if a == "HARNESS" {
			attack[i] = strconv.Itoa(os.Getpid())
		}
	}
	argv := append([]string{self}, attack...)
	env := []string{helperEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"}
	var res harnessResult
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, spec.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if !spec.Direct {
		l := sandbox.Prepare(sandbox.Policy{Launcher: sandbox.Launcher(), Dir: spec.Dir, Writable: spec.Writable, Access: spec.Access}, argv, env)
		res.Status = l.Status.String()
		cmd = exec.Command(l.Argv[0], l.Argv[1:]...)
		cmd.Env, cmd.Dir = l.Env, spec.Dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		l.SetAttrs(cmd.SysProcAttr)
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		out = append(out, []byte("start: "+err.Error())...)
	}
	res.Out, res.OK = string(out), err == nil
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return 0
}

// attack runs the test binary as the hostile helper, confined by p when
// sandboxed, and reports its output and whether the attack worked.
func attack(t *testing.T, sandboxed bool, p sandbox.Policy, args ...string) (string, bool) {
	t.Helper()
	// A copy every user can run: the sandbox may make the attack nobody.
	self := exeCopy(t)
	if p.Launcher != "" {
		p.Launcher = self
	}
	argv := append([]string{self}, args...)
	env := append(os.Environ(), helperEnv+"=1")
	attrs := &syscall.SysProcAttr{}
	if sandboxed {
		if len(args) > 0 && args[0] == "nobody" && os.Geteuid() == 0 {
			// Root cannot drop to nobody in the sandbox (it has no
			// capability left): the sandbox makes it nobody, as it does for
			// a workspace the harness made.
			p.HandOver = true
			if p.Dir == "" {
				p.Dir = worldDir(t, "ws")
			}
		}
		l := sandbox.Prepare(p, argv, env)
		if !l.Status.Active() {
			t.Fatalf("sandbox inactive: %s", l.Status)
		}
		argv, env = l.Argv, l.Env
		l.SetAttrs(attrs)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.SysProcAttr = env, attrs
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return string(out), err == nil
}

var (
	exeOnce sync.Once
	exePath string
	exeErr  error
)

// exeCopy is a copy of the test binary in a directory every user can
// reach (go test builds it in a 0700 one), removed when the tests end.
func exeCopy(t *testing.T) string {
	exeOnce.Do(func() {
		self, err := os.Executable()
		if err != nil {
			exeErr = err
			return
		}
		dir, err := os.MkdirTemp("", "sandbox-test-bin-")
		if err != nil {
			exeErr = err
			return
		}
		os.Chmod(dir, 0o755)
		data, err := os.ReadFile(self)
		if err != nil {
			exeErr = err
			return
		}
		exePath = filepath.Join(dir, "sandbox.test")
		exeErr = os.WriteFile(exePath, data, 0o755)
	})
	if exeErr != nil {
		t.Fatal(exeErr)
	}
	return exePath
}

// needLandlock fails when the kernel has Landlock but Status says it is
// inactive, and skips (saying why) on a kernel without it.
func needLandlock(t *testing.T) sandbox.Status {
	st := sandbox.Probe()
	if !st.Writes {
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
			if out, ok := attack(t, true, p, append(who, "write", target)...); ok || !strings.Contains(out, "error: open "+target+": permission denied") {
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
// both are nobody here, and as root it keeps uid 0 without capabilities
// (with capabilities, this kernel lets a Landlock-confined root read the
// environ of outside processes; without them it does not).
func TestSandboxHidesEnvironOfOutsideProcesses(t *testing.T) {
	needLandlock(t)
	p := sandbox.Policy{Launcher: sandbox.Launcher()}
	for _, who := range [][]string{{"nobody"}, nil} {
		v, canary := sandboxtest.Victim(t, who != nil)
		pid := strconv.Itoa(v.Process.Pid)
		if out, ok := attack(t, false, p, append(who, "readenv", pid)...); !ok || !strings.Contains(out, canary) {
			t.Fatalf("%v control: unconfined read of the victim's environ failed: %s", who, out)
		}
		out, ok := attack(t, true, p, append(who, "readenv", pid)...)
		if ok || strings.Contains(out, canary) || !strings.Contains(out, "error: open /proc/"+pid+"/environ: permission denied") {
			t.Fatalf("%v: confined process read another process's environ: %s", who, out)
		}
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
			if out, ok := attack(t, true, p, append(who, "kill", pid)...); ok || !strings.Contains(out, "error: operation not permitted") {
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
// workspace, the temp dir and the tool caches writable, and loopback only.
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
	p := sandbox.Policy{Launcher: sandbox.Launcher(), Dir: ws, Writable: append([]string{ws, os.TempDir()}, sandbox.ToolCaches(env)...)}
	l := sandbox.Prepare(p, []string{gobin, "test", "-count=1", "./..."}, env)
	if !l.Status.Active() {
		t.Fatalf("sandbox inactive: %s", l.Status)
	}
	cmd := exec.Command(l.Argv[0], l.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = ws, l.Env, &syscall.SysProcAttr{}
	l.SetAttrs(cmd.SysProcAttr)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test in the sandbox (%s): %v\n%s", l.Status, err, out)
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
			argv, env := []string{truePath}, os.Environ()
			attrs := &syscall.SysProcAttr{}
			if mode == "sandboxed" {
				l := sandbox.Prepare(sandbox.Policy{Launcher: sandbox.Launcher(), Writable: []string{os.TempDir()}}, argv, env)
				if !l.Status.Active() {
					b.Skipf("no sandbox: %s", l.Status)
				}
				argv, env = l.Argv, l.Env
				l.SetAttrs(attrs)
			}
			for b.Loop() {
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Env, cmd.SysProcAttr = env, attrs
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// runLaunch runs l in dir and reports its output and whether it exited 0.
func runLaunch(t *testing.T, l sandbox.Launch, dir string) (string, bool) {
	t.Helper()
	cmd := exec.Command(l.Argv[0], l.Argv[1:]...)
	cmd.Env, cmd.Dir = l.Env, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	l.SetAttrs(cmd.SysProcAttr)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return string(out), err == nil
}

func statUID(fi os.FileInfo) uint32 { return fi.Sys().(*syscall.Stat_t).Uid }
