//go:build linux

package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/sandbox/sandboxtest"
)

// The attacks of hostile test code on a machine laid out like a
// GitHub-hosted runner (sandboxtest.Runner): mini-agent runs as an
// unprivileged user in the daemon socket's group, with or without
// passwordless sudo. Each attack runs first without the sandbox (the
// control: it works) and then through it.

const canary = "MINI_AGENT_CANARY=canary-in-the-harness-environment"

// scene is one runner layout with a workspace holding a persisted
// checkout credential, a masked copy of its config, and a server on a
// network namespace of the test's own.
type scene struct {
	r      *sandboxtest.Runner
	srv    *sandboxtest.NetServer
	ws     string
	config string // the workspace's .git/config
	mask   sandbox.Mask
}

const persisted = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3BlcnNpc3RlZA=="

func newScene(t *testing.T, sudo bool) *scene {
	r := sandboxtest.NewRunner(t, sudo)
	s := &scene{r: r, srv: sandboxtest.NewNetServer(t), ws: r.Mkdir(t, "ws")}
	git := r.Mkdir(t, "ws/.git")
	s.config = filepath.Join(git, "config")
	if err := os.WriteFile(s.config, []byte("[http \"https://github.com/\"]\n\textraheader = "+persisted+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.mask = sandbox.Mask{Target: s.config, Content: "[core]\n\tbare = false\n"}
	return s
}

// spec is the harness's policy for the scene's workspace.
func (s *scene) spec(a sandbox.Access) harnessSpec {
	a.Masks = append(a.Masks, s.mask)
	return harnessSpec{Dir: s.ws, Writable: []string{s.ws}, Access: a}
}

// run plays mini-agent as the runner user: the attack through the
// sandbox, or directly with spec.Direct.
func (s *scene) run(t *testing.T, spec harnessSpec, attack ...string) harnessResult {
	t.Helper()
	b, _ := json.Marshal(spec)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := s.r.Command(ctx, []string{helperEnv + "=1", "PATH=" + os.Getenv("PATH"), canary},
		append([]string{"harness", string(b)}, attack...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("harness as %s: %v\n%s", s.r.User, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var res harnessResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("harness answer %q: %v", out, err)
	}
	return res
}

// attacks are the hostile test code's attempts, each with what it prints
// when it works.
func (s *scene) attacks() map[string][]string {
	return map[string][]string{
		"docker socket":        {"docker", s.r.Socket},
		"sudo to root":         {"sudo"},
		"non-loopback address": {"dial", s.srv.Addr, s.srv.Token},
		"interfaces":           {"ifaces"},
		"runner file command":  {"append", s.r.EnvFile},
		"persisted credential": {"read", s.config, persisted},
		"harness environ":      {"readenv", "HARNESS"},
	}
}

func TestHostedRunnerLayoutWithSudo(t *testing.T) {
	t.Parallel()
	s := newScene(t, true)
	attacks := s.attacks()
	for name, a := range attacks {
		if res := s.run(t, harnessSpec{Direct: true, Dir: s.ws}, a...); !res.OK {
			t.Fatalf("control: %s failed without the sandbox: %s", name, res.Out)
		}
	}
	os.WriteFile(s.r.EnvFile, nil, 0o644)
	var status string
	for name, a := range attacks {
		res := s.run(t, s.spec(sandbox.Access{}), a...)
		if res.OK || !strings.Contains(res.Out, "error: ") {
			t.Errorf("%s worked through the sandbox, or did not run:\n%s\n(%s)", name, res.Out, res.Status)
		}
		if strings.Contains(res.Out, persisted) || strings.Contains(res.Out, canary) || strings.Contains(res.Out, s.srv.Token) {
			t.Errorf("%s: a secret reached test code: %s", name, res.Out)
		}
		status = res.Status
	}
	if data, _ := os.ReadFile(s.r.EnvFile); len(data) != 0 {
		t.Errorf("the runner's env file was written: %q", data)
	}
	for _, want := range []string{"network: loopback only (via sudo)",
		fmt.Sprintf("local services: runs as uid %d without supplementary groups (via sudo)", s.r.UID),
		"no new privileges (no sudo)", "persisted credentials hidden (1 files)"} {
		if !strings.Contains(status, want) {
			t.Errorf("status %q lacks %q", status, want)
		}
	}
	// RUNNER_TEMP in a place Landlock lets test code write to (the temp
	// dir): the file-command directory is read-only all the same.
	loose := s.spec(sandbox.Access{})
	loose.Writable = append(loose.Writable, s.r.RunnerTemp)
	if res := s.run(t, loose, attacks["runner file command"]...); !res.OK {
		t.Fatalf("control: with RUNNER_TEMP writable the env file should be writable: %s", res.Out)
	}
	os.WriteFile(s.r.EnvFile, nil, 0o644)
	loose.Access.ReadOnly = []string{filepath.Dir(s.r.EnvFile)}
	if res := s.run(t, loose, attacks["runner file command"]...); res.OK || !strings.Contains(res.Status, "runner file commands read-only") {
		t.Errorf("the env file was written through a read-only file-command directory: %s (%s)", res.Out, res.Status)
	}
	if data, _ := os.ReadFile(s.r.EnvFile); len(data) != 0 {
		t.Errorf("the runner's env file was written: %q", data)
	}
	// The config is there, without the credential.
	if res := s.run(t, s.spec(sandbox.Access{}), "read", s.config, "bare = false"); !res.OK {
		t.Errorf("the masked config: %s", res.Out)
	}
	// Test code keeps its user (the workspace is its own) and nothing else.
	res := s.run(t, s.spec(sandbox.Access{}), "id")
	if want := fmt.Sprintf("uid=%d gid=65534 groups=[]", s.r.UID); !res.OK || !strings.Contains(res.Out, want) {
		t.Errorf("identity in the sandbox: %s, want %s", res.Out, want)
	}
	// The opt-ins: the network, and the socket, named.
	open := s.spec(sandbox.Access{Network: sandbox.NetworkOpen, Sockets: []string{s.r.Socket}})
	for _, name := range []string{"non-loopback address", "docker socket"} {
		if res := s.run(t, open, attacks[name]...); !res.OK || !strings.Contains(res.Status, "network: open: --test-network open") {
			t.Errorf("%s with test-network open and test-socket: %s (%s)", name, res.Out, res.Status)
		}
	}
	if res := s.run(t, open, "id"); !strings.Contains(res.Out, fmt.Sprintf("groups=[%d]", s.r.DaemonGID)) ||
		!strings.Contains(res.Status, fmt.Sprintf("with only the groups of the opted-in sockets [%d] (via sudo)", s.r.DaemonGID)) {
		t.Errorf("identity with test-socket: %s (%s)", res.Out, res.Status)
	}
}

// Without sudo (a developer's laptop): an unprivileged user namespace
// gives the network namespace and the mounts; the groups stay, so the
// sockets reachable only through them are hidden, and the status says so.
func TestRunnerLayoutWithoutSudo(t *testing.T) {
	t.Parallel()
	s := newScene(t, false)
	attacks := s.attacks()
	delete(attacks, "sudo to root") // no sudo to attack
	for name, a := range attacks {
		if res := s.run(t, harnessSpec{Direct: true, Dir: s.ws}, a...); !res.OK {
			t.Fatalf("control: %s failed without the sandbox: %s", name, res.Out)
		}
	}
	os.WriteFile(s.r.EnvFile, nil, 0o644)
	probe := s.run(t, s.spec(sandbox.Access{}), "id")
	if !strings.Contains(probe.Status, "(via user namespace)") {
		// The kernel or AppArmor refuses unprivileged user namespaces here:
		// the status must say the network stays open and why.
		if !strings.Contains(probe.Status, "network: open: not root, no sudo, no unprivileged user namespace") {
			t.Fatalf("no user namespace and the status does not say why: %s", probe.Status)
		}
		t.Skipf("unprivileged user namespaces are refused on this machine: %s", probe.Status)
	}
	for name, a := range attacks {
		res := s.run(t, s.spec(sandbox.Access{}), a...)
		if res.OK || !strings.Contains(res.Out, "error: ") {
			t.Errorf("%s worked through the sandbox, or did not run:\n%s\n(%s)", name, res.Out, res.Status)
		}
	}
	for _, want := range []string{"network: loopback only (via user namespace)", "groups kept: supplementary groups cannot be dropped",
		"unix sockets hidden", "persisted credentials hidden (1 files)"} {
		if !strings.Contains(probe.Status, want) {
			t.Errorf("status %q lacks %q", probe.Status, want)
		}
	}
	if res := s.run(t, s.spec(sandbox.Access{}), "read", s.config, "bare = false"); !res.OK {
		t.Errorf("the masked config: %s", res.Out)
	}
	if res := s.run(t, s.spec(sandbox.Access{Sockets: []string{s.r.Socket}}), attacks["docker socket"]...); !res.OK {
		t.Errorf("docker socket with test-socket: %s (%s)", res.Out, res.Status)
	}
}

// As root (self-hosted runners): in a workspace the harness made, test
// code runs as nobody; in one it did not, as uid 0 without capabilities
// or groups, with root's unix sockets hidden.
func TestRunnerLayoutAsRoot(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	s := newScene(t, false)
	self := exeCopy(t)
	handed := worldDir(t, "handed")
	run := func(sandboxed bool, a sandbox.Access, dir string, args ...string) (string, bool, string) {
		a.Masks = append(a.Masks, s.mask)
		p := sandbox.Policy{Launcher: self, Dir: dir, Writable: []string{dir}, Access: a}
		argv := append([]string{self}, args...)
		env := []string{helperEnv + "=1", "PATH=" + os.Getenv("PATH")}
		l := sandbox.Launch{Argv: argv, Env: env}
		if sandboxed {
			l = sandbox.Prepare(p, argv, env)
		}
		out, ok := runLaunch(t, l, dir)
		return out, ok, l.Status.String()
	}
	attacks := s.attacks()
	delete(attacks, "harness environ") // TestSandboxHidesEnvironOfOutsideProcesses
	for name, a := range attacks {
		if out, ok, _ := run(false, sandbox.Access{}, s.ws, a...); !ok {
			t.Fatalf("control: %s failed as root without the sandbox: %s", name, out)
		}
	}
	os.WriteFile(s.r.EnvFile, nil, 0o644)
	for _, c := range []struct {
		name string
		dir  string
		a    sandbox.Access
		want []string
	}{
		{"workspace not the harness's", s.ws, sandbox.Access{},
			[]string{"network: loopback only (via root)", "runs as uid 0 without capabilities or supplementary groups (via root)", "unix sockets hidden"}},
		{"workspace the harness made", handed, sandbox.Access{HandOver: true},
			[]string{"network: loopback only (via root)", "runs as uid 65534 without supplementary groups (via root)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var status string
			for name, a := range attacks {
				out, ok, st := run(true, c.a, c.dir, a...)
				if ok || !strings.Contains(out, "error: ") {
					t.Errorf("%s worked through the sandbox, or did not run:\n%s\n(%s)", name, out, st)
				}
				status = st
			}
			for _, want := range c.want {
				if !strings.Contains(status, want) {
					t.Errorf("status %q lacks %q", status, want)
				}
			}
			if out, ok, _ := run(true, c.a, c.dir, "read", s.config, "bare = false"); !ok {
				t.Errorf("the masked config: %s", out)
			}
			a := c.a
			a.Sockets = []string{s.r.Socket}
			if out, ok, st := run(true, a, c.dir, attacks["docker socket"]...); !ok {
				t.Errorf("docker socket with test-socket: %s (%s)", out, st)
			}
		})
	}
	if data, _ := os.ReadFile(s.r.EnvFile); len(data) != 0 {
		t.Errorf("the runner's env file was written: %q", data)
	}
	if fi, err := os.Stat(handed); err != nil || !slices.Contains([]string{"65534"}, strconv.Itoa(int(statUID(fi)))) {
		t.Errorf("the harness's workspace was not given to nobody: %v", err)
	}
}
