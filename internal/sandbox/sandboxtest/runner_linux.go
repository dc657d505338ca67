package sandboxtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Runner is a machine laid out like a GitHub-hosted runner, built by a
// test that runs as root: an unprivileged user (the runner) whose groups
// include one that owns a root daemon's socket, root:GROUP 0660 (the
// docker socket; the fake daemon answers GET /_ping with OK), optionally
// with passwordless sudo (a NOPASSWD entry in a sudoers.d file of its
// own), and a RUNNER_TEMP holding the runner's file-command files. Every
// file it makes in /etc (the user, the sudoers entry) is removed when the
// test ends.
type Runner struct {
	User     string
	UID, GID int
	// DaemonGID is the socket's group, one of the user's groups.
	DaemonGID int
	// Socket is the fake daemon's socket.
	Socket string
	// Dir is a directory tree the user can reach (0755, root's).
	Dir string
	// Bin is a copy of the running test binary the user can execute.
	Bin string
	// RunnerTemp holds _runner_file_commands/set_env_* (the user's, as
	// the runner writes them); EnvFile is that file.
	RunnerTemp, EnvFile string
}

// usersLock serialises useradd and userdel across test processes: they
// lock /etc/passwd and fail rather than wait.
const usersLock = "/tmp/mini-agent-test-users.lock"

var seq atomic.Int64

// NeedRoot skips the test, saying why, when it does not run as root or a
// program the layout needs is missing.
func NeedRoot(t testing.TB, programs ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to build the runner-like layout (a user, a root daemon's socket, a sudoers entry, a network namespace)")
	}
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("needs %s to build the runner-like layout (install it: apt-get install -y sudo iproute2 passwd)", p)
		}
	}
}

// NewRunner builds the layout; sudo gives the user passwordless sudo.
func NewRunner(t testing.TB, sudo bool) *Runner {
	t.Helper()
	progs := []string{"useradd", "userdel"}
	if sudo {
		progs = append(progs, "sudo")
	}
	NeedRoot(t, progs...)
	dir, err := os.MkdirTemp("", "mini-agent-runner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Dir: dir, User: fmt.Sprintf("ma%d-%d", os.Getpid()%100000, seq.Add(1))}
	r.addUser(t)
	if sudo {
		entry := filepath.Join("/etc/sudoers.d", "mini-agent-test-"+r.User)
		if err := os.WriteFile(entry, []byte(r.User+" ALL=(ALL) NOPASSWD:ALL\n"), 0o440); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(entry) })
	}
	// A group id no account uses: only the user's process list has it.
	r.DaemonGID = 42000 + os.Getpid()%1000
	r.Bin = filepath.Join(dir, "bin", filepath.Base(os.Args[0]))
	if err := os.Mkdir(filepath.Dir(r.Bin), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, self, r.Bin, 0o755)
	r.Socket = filepath.Join(dir, "run", "docker.sock")
	if err := os.Mkdir(filepath.Dir(r.Socket), 0o755); err != nil {
		t.Fatal(err)
	}
	r.serveDaemon(t)
	r.RunnerTemp = filepath.Join(dir, "runner-temp")
	cmds := filepath.Join(r.RunnerTemp, "_runner_file_commands")
	if err := os.MkdirAll(cmds, 0o755); err != nil {
		t.Fatal(err)
	}
	r.EnvFile = filepath.Join(cmds, "set_env_0b2c7ad5-d3a1-4a4d-9c4e-2f1c9b9e8a11")
	if err := os.WriteFile(r.EnvFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{r.RunnerTemp, cmds, r.EnvFile} {
		if err := os.Chown(p, r.UID, r.GID); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *Runner) addUser(t testing.TB) {
	t.Helper()
	unlock := lockUsers(t)
	out, err := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/bin/sh",
		"--user-group", r.User).CombinedOutput()
	unlock()
	if err != nil {
		t.Fatalf("useradd %s: %v\n%s", r.User, err, out)
	}
	t.Cleanup(func() {
		unlock := lockUsers(t)
		defer unlock()
		if out, err := exec.Command("userdel", r.User).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", r.User, err, out)
		}
	})
	for _, f := range []struct {
		flag string
		dst  *int
	}{{"-u", &r.UID}, {"-g", &r.GID}} {
		out, err := exec.Command("id", f.flag, r.User).Output()
		if err != nil {
			t.Fatalf("id %s %s: %v", f.flag, r.User, err)
		}
		if *f.dst, err = strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
			t.Fatal(err)
		}
	}
}

func lockUsers(t testing.TB) func() {
	f, err := os.OpenFile(usersLock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// serveDaemon listens on Socket as root, the socket root:DaemonGID 0660.
func (r *Runner) serveDaemon(t testing.TB) {
	l, err := net.Listen("unix", r.Socket)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(r.Socket, 0, r.DaemonGID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(r.Socket, 0o660); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/_ping" {
			io.WriteString(w, "OK")
			return
		}
		http.NotFound(w, req)
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

// Command runs Bin as the user, in the user's group and the daemon's (as
// the runner user is in the docker group), with env.
func (r *Runner) Command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	return r.CommandOf(ctx, env, r.Bin, args...)
}

// CommandOf runs prog (a path the user can execute) as the user, like
// Command.
func (r *Runner) CommandOf(ctx context.Context, env []string, prog string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = env
	cmd.Dir = r.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{
		Uid: uint32(r.UID), Gid: uint32(r.GID), Groups: []uint32{uint32(r.GID), uint32(r.DaemonGID)}}}
	return cmd
}

// Mkdir makes a directory of the user's under Dir.
func (r *Runner) Mkdir(t testing.TB, name string) string {
	t.Helper()
	d := filepath.Join(r.Dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, r.UID, r.GID); err != nil {
		t.Fatal(err)
	}
	return d
}

// AskDaemon sends GET /_ping over the socket at path and returns the
// answer's body: what test code reaching the daemon gets.
func AskDaemon(path string) (string, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}}}
	resp, err := c.Get("http://docker/_ping")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	return string(b), err
}

// NetServer is a TCP server on a non-loopback address of a network
// namespace the test makes (ip netns add, a veth pair to this namespace):
// every connection gets Token. Traffic to it stays on the machine.
type NetServer struct {
	Addr, Token string
}

// NewNetServer builds the namespace and the server; both are removed when
// the test ends.
func NewNetServer(t testing.TB) *NetServer {
	t.Helper()
	NeedRoot(t, "ip")
	var ns, peerIP string
	ip := func(args ...string) error {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	// Names and subnets other test processes may hold: try the next one.
	var lastErr error
	for try := 0; try < 20 && ns == ""; try++ {
		n := int((int64(os.Getpid())*7 + seq.Add(1)) % 250)
		name := fmt.Sprintf("ma-test-%d-%d", os.Getpid(), n)
		host, peer := fmt.Sprintf("mah%d", n), fmt.Sprintf("map%d", n)
		hIP, pIP := fmt.Sprintf("10.231.%d.1", n), fmt.Sprintf("10.231.%d.2", n)
		if lastErr = ip("netns", "add", name); lastErr != nil {
			continue
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
		if lastErr = ip("link", "add", host, "type", "veth", "peer", "name", peer); lastErr != nil {
			continue
		}
		t.Cleanup(func() { exec.Command("ip", "link", "del", host).Run() })
		for _, args := range [][]string{
			{"link", "set", peer, "netns", name},
			{"addr", "add", hIP + "/30", "dev", host},
			{"link", "set", host, "up"},
			{"-n", name, "addr", "add", pIP + "/30", "dev", peer},
			{"-n", name, "link", "set", peer, "up"},
			{"-n", name, "link", "set", "lo", "up"},
		} {
			if err := ip(args...); err != nil {
				t.Fatal(err)
			}
		}
		ns, peerIP = name, pIP
	}
	if ns == "" {
		t.Fatalf("no free network namespace for the test server: %v", lastErr)
	}
	l, err := listenIn(ns, peerIP+":0")
	if err != nil {
		t.Fatalf("listen in %s: %v", ns, err)
	}
	s := &NetServer{Addr: l.Addr().String(), Token: "reached-" + ns}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, s.Token+"\n")
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return s
}

// listenIn opens a TCP listener in the named network namespace: the socket
// belongs to the namespace of the thread that makes it.
func listenIn(ns, addr string) (net.Listener, error) {
	runtime.LockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer self.Close()
	target, err := os.Open(filepath.Join("/var/run/netns", ns))
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	l, lerr := net.Listen("tcp", addr)
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// Leave the thread locked: it dies with its goroutine.
		if l != nil {
			l.Close()
		}
		return nil, err
	}
	runtime.UnlockOSThread()
	return l, lerr
}

func copyFile(t testing.TB, src, dst string, perm os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
