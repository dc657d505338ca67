//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// nobody is the unprivileged user (and group) test code runs as where
// mini-agent is root and the workspace is its own to give, and the primary
// group it gets everywhere it can be set: a group that grants nothing (on
// GitHub's older images the runner's primary group was docker).
const nobody = 65534

// probeTimeout bounds each privilege probe (sudo may ask PAM, LDAP...).
const probeTimeout = 15 * time.Second

// sudoPaths are where a real sudo lives; one found on PATH counts only if
// it is root's and setuid, like these (test code could plant a sudo on a
// directory of PATH it may write to).
var sudoPaths = []string{"/usr/bin/sudo", "/bin/sudo", "/usr/local/bin/sudo", "/run/wrappers/bin/sudo"}

// privilege is how this process can isolate test code: found once, by
// running the wrapper's probe the way the runs will run it.
type privilege struct {
	via  string // "root", "sudo", "user namespace", "" (none)
	sudo string // sudo's path, via "sudo"
	// mount, net, id: the probe's step worked ("" ) or why not.
	mount, net, id string
	// why says why there is no privilege at all (via == "").
	why string
}

var (
	privOnce sync.Once
	priv     privilege
)

// privileges probes once per process, at the first sandboxed run (before
// any test code ran).
func privileges(launcher string) privilege {
	privOnce.Do(func() { priv = probePrivilege(launcher) })
	return priv
}

func probePrivilege(launcher string) privilege {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	if os.Geteuid() == 0 {
		p := runProbe(ctx, nil, wrapperArgv(launcher, wrapperConfig{Probe: true, Net: true, SetID: true, UID: 0, GID: nobody}, nil), false)
		p.via = "root"
		return p
	}
	var whys []string
	if sudo := findSudo(); sudo == "" {
		whys = append(whys, "no sudo")
	} else {
		argv := append([]string{sudo, "-n", "--"}, wrapperArgv(launcher, wrapperConfig{Probe: true, Net: true, SetID: true, UID: os.Getuid(), GID: nobody}, nil)...)
		p := runProbe(ctx, nil, argv, false)
		if p.why == "" {
			p.via, p.sudo = "sudo", sudo
			return p
		}
		whys = append(whys, "no passwordless sudo ("+p.why+")")
	}
	p := runProbe(ctx, nil, wrapperArgv(launcher, wrapperConfig{Probe: true, Net: true, InNS: true}, nil), true)
	if p.why == "" && p.net == "" {
		p.via = "user namespace"
		return p
	}
	why := p.why
	if why == "" {
		why = p.net
	}
	whys = append(whys, "no unprivileged user namespace with a network ("+why+")")
	return privilege{why: "not root, " + strings.Join(whys, ", ")}
}

// runProbe runs a probe and reads its report; why is set when it did not
// run or answer.
func runProbe(ctx context.Context, env, argv []string, userNS bool) privilege {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(env, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if userNS {
		userNSAttrs(cmd.SysProcAttr)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return privilege{why: msg}
	}
	var rep probeReport
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &rep); err != nil {
		return privilege{why: fmt.Sprintf("unreadable probe answer %q", bounded(out.String(), 200))}
	}
	return privilege{mount: rep.Mount, net: rep.Net, id: rep.ID}
}

func bounded(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// findSudo is a root-owned setuid sudo, or "".
func findSudo() string {
	cands := slices.Clone(sudoPaths)
	if p, err := exec.LookPath("sudo"); err == nil {
		cands = append(cands, p)
	}
	for _, p := range cands {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&fs.ModeSetuid == 0 {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == 0 {
			return p
		}
	}
	return ""
}

// userNSAttrs starts a process in new user, mount and network namespaces,
// as the same user and group, with the capabilities the wrapper needs for
// the namespaces' setup in its ambient set (it clears them before exec).
func userNSAttrs(a *syscall.SysProcAttr) {
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
	const capSysAdmin, capNetAdmin = 21, 12
	a.AmbientCaps = []uintptr{capSysAdmin, capNetAdmin}
}

// SetAttrs adds to a the process attributes the launch needs (new
// namespaces for an unprivileged user namespace); call it after the
// caller's own (session, cgroup) are set.
func (l Launch) SetAttrs(a *syscall.SysProcAttr) {
	if l.userNS {
		userNSAttrs(a)
	}
}

// Prepare returns how to start argv with environment env confined by p,
// and which protections it gets. Without a launcher argv and env are
// returned unchanged, and Status says so.
func Prepare(p Policy, argv, env []string) Launch {
	st := Probe()
	if p.Launcher == "" {
		st = Status{ABI: st.ABI, Reason: "no sandbox launcher in this program"}
		st.NetworkReason = "no sandbox launcher in this program"
		st.IdentityReason = "no sandbox launcher in this program"
		if len(p.Masks) > 0 {
			st.MaskReason = "no sandbox launcher in this program"
		}
		return Launch{Argv: argv, Env: env, Status: st}
	}
	pr := privileges(p.Launcher)
	cfg := wrapperConfig{Writable: p.Writable}
	st.NoNewPrivs = true
	st.Via = pr.via
	noPriv := pr.why

	// Network.
	switch {
	case p.Network == NetworkOpen:
		st.NetworkReason = "--test-network open"
	case pr.via == "":
		st.NetworkReason = noPriv
	case pr.net != "":
		st.NetworkReason = pr.net
	default:
		cfg.Net, st.Loopback = true, true
	}
	mountOK := pr.via != "" && pr.mount == ""
	mountWhy := noPriv
	if pr.via != "" && pr.mount != "" {
		mountWhy = pr.mount
	}

	// Identity, and the sockets it still reaches.
	var hide []string
	switch {
	case pr.via == "":
		st.IdentityReason = noPriv
	case pr.via == "user namespace":
		st.IdentityReason = "supplementary groups cannot be dropped in an unprivileged user namespace; not root and no passwordless sudo"
		cfg.InNS = true
		hide = groupOnlySockets(p.Sockets)
	case pr.id != "":
		st.IdentityReason = pr.id
	case pr.via == "root" && p.HandOver:
		cfg.SetID, cfg.UID, cfg.GID = true, nobody, nobody
		st.NoGroups, st.Unprivileged, st.UID = true, true, nobody
		if err := handOver(p.Dir); err != nil {
			// The runs still happen; writes in the workspace fail.
			st.Notes = append(st.Notes, "the workspace could not be given to uid 65534: "+err.Error())
		}
		var notes []string
		env, cfg.Binds, notes = nobodyEnv(env, mountOK)
		st.Notes = append(st.Notes, notes...)
		cfg.Writable = append(slices.Clone(cfg.Writable), sandboxHome())
		groups, notes := socketGroups(p.Sockets, nobody, nil)
		cfg.Groups, st.SocketGroups, st.Notes = groups, groups, append(st.Notes, notes...)
	case pr.via == "root":
		// A workspace the harness does not own stays root's: test code
		// keeps uid 0 to write in it, with no capability, no group, and
		// none of the sockets root listens on.
		cfg.SetID, cfg.UID, cfg.GID = true, 0, nobody
		st.NoGroups, st.Capless = true, true
		st.IdentityReason = "the workspace is root's"
		if mountOK {
			hide = listeningSockets(p.Sockets)
		} else {
			st.Notes = append(st.Notes, "root's unix sockets stay reachable: "+mountWhy)
		}
	default: // sudo
		cfg.SetID, cfg.UID, cfg.GID = true, os.Getuid(), nobody
		st.NoGroups, st.Unprivileged, st.UID = true, true, os.Getuid()
		mine, _ := os.Getgroups()
		groups, notes := socketGroups(p.Sockets, os.Getuid(), append(mine, os.Getgid()))
		cfg.Groups, st.SocketGroups, st.Notes = groups, groups, append(st.Notes, notes...)
	}
	if st.Writes && st.ABI > 0 {
		// Measured: uid 0 with capabilities keeps reading other
		// processes' environ under Landlock; without them it does not.
		st.Ptrace = st.Unprivileged || st.Capless || os.Geteuid() != 0
	}
	if len(hide) > 0 && mountOK {
		cfg.Hide, st.HiddenSockets = hide, len(hide)
	}
	if len(p.Masks) > 0 {
		if mountOK {
			cfg.Masks, st.Masked = p.Masks, len(p.Masks)
		} else {
			st.MaskReason = "no mount namespace: " + mountWhy
		}
	}
	if len(cfg.Binds) > 0 && !mountOK {
		cfg.Binds = nil
	}
	var ro []string
	for _, d := range p.ReadOnly {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !slices.Contains(ro, d) {
			ro = append(ro, d)
		}
	}
	if len(ro) > 0 {
		if mountOK {
			for _, d := range ro {
				cfg.Binds = append(cfg.Binds, Bind{Source: d, Target: d})
			}
			st.ReadOnly = len(ro)
		} else {
			st.ReadOnlyReason = "no mount namespace: " + mountWhy
		}
	}

	out := Launch{Status: st, Env: env}
	switch pr.via {
	case "sudo":
		cfg.SetEnv, cfg.Env = true, env
		out.Argv = append([]string{pr.sudo, "-n", "--"}, wrapperArgv(p.Launcher, cfg, argv)...)
		out.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	case "user namespace":
		out.Argv, out.userNS = wrapperArgv(p.Launcher, cfg, argv), true
	default:
		out.Argv = wrapperArgv(p.Launcher, cfg, argv)
	}
	return out
}

// socketGroups are the groups that let uid reach each opted-in socket
// (among have, when have is not nil), and notes for the sockets no group
// makes reachable.
func socketGroups(sockets []string, uid int, have []int) ([]int, []string) {
	groups := []int{}
	var notes []string
	for _, s := range sockets {
		fi, err := os.Stat(s)
		if err != nil {
			notes = append(notes, fmt.Sprintf("socket %s: %v", s, err))
			continue
		}
		sys := fi.Sys().(*syscall.Stat_t)
		perm := fi.Mode().Perm()
		switch {
		case perm&0o002 != 0, int(sys.Uid) == uid && perm&0o200 != 0:
			// Reachable as it is.
		case perm&0o020 != 0 && (have == nil || slices.Contains(have, int(sys.Gid))):
			if !slices.Contains(groups, int(sys.Gid)) {
				groups = append(groups, int(sys.Gid))
			}
		default:
			notes = append(notes, fmt.Sprintf("socket %s stays out of reach (mode %o, uid %d, gid %d)", s, perm, sys.Uid, sys.Gid))
		}
	}
	return groups, notes
}

// unixSocketPaths lists the pathname unix sockets of this network
// namespace (/proc/net/unix): every daemon's that listens or receives.
func unixSocketPaths() []string {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 8 {
			continue
		}
		p := strings.Join(f[7:], " ")
		if filepath.IsAbs(p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// listeningSockets are the unix sockets test code that keeps uid 0 must
// not see: all of them (a daemon trusts a peer of uid 0), but the
// opted-in ones.
func listeningSockets(allowed []string) []string {
	var out []string
	for _, p := range unixSocketPaths() {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&fs.ModeSocket != 0 && !slices.Contains(allowed, p) {
			out = append(out, p)
		}
	}
	return out
}

// groupOnlySockets are the unix sockets this user may connect to only
// through a group it is in (root:docker 0660): what test code that keeps
// the groups must not see, but the opted-in ones.
func groupOnlySockets(allowed []string) []string {
	uid := os.Getuid()
	groups, _ := os.Getgroups()
	groups = append(groups, os.Getgid())
	var out []string
	for _, p := range unixSocketPaths() {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode()&fs.ModeSocket == 0 || slices.Contains(allowed, p) {
			continue
		}
		sys := fi.Sys().(*syscall.Stat_t)
		perm := fi.Mode().Perm()
		if perm&0o002 != 0 || (int(sys.Uid) == uid && perm&0o200 != 0) {
			continue // anyone's, or its own
		}
		if perm&0o020 != 0 && slices.Contains(groups, int(sys.Gid)) {
			out = append(out, p)
		}
	}
	return out
}

// handOver gives the harness-made workspace dir to nobody: every entry,
// links themselves (not their targets).
func handOver(dir string) error {
	if dir == "" {
		return errors.New("no workspace")
	}
	// Through an os.Root: a directory test code of an earlier run replaced
	// with a link is never followed out of the workspace.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return root.Lchown(p, nobody, nobody)
	})
}

var (
	homeOnce sync.Once
	homeDir  string
)

// sandboxHome is a directory of nobody's for this process's runs as
// nobody: their build caches (root's are not nobody's to write).
func sandboxHome() string {
	homeOnce.Do(func() {
		d, err := os.MkdirTemp("", "mini-agent-sandbox-")
		if err != nil {
			return
		}
		ok := os.Chmod(d, 0o755) == nil
		for _, sub := range []string{"cache", "gomod"} {
			ok = ok && os.Mkdir(filepath.Join(d, sub), 0o755) == nil
		}
		ok = ok && os.Chown(filepath.Join(d, "cache"), nobody, nobody) == nil
		if !ok {
			os.RemoveAll(d)
			return
		}
		homeDir = d
	})
	return homeDir
}

// Cleanup removes what the sandbox made for this process (the build cache
// of runs as nobody). Call it at exit.
func Cleanup() {
	if homeDir != "" {
		os.RemoveAll(homeDir)
	}
}

// nobodyEnv adapts env for a command run as nobody: its build caches in
// the sandbox home, and the harness's Go module cache, when nobody cannot
// reach it (under root's 0700 home), bound read-only where it can.
func nobodyEnv(env []string, canMount bool) ([]string, []Bind, []string) {
	home := sandboxHome()
	if home == "" {
		return env, nil, []string{"no cache directory for uid 65534: builds may fail"}
	}
	cache := filepath.Join(home, "cache")
	env = setEnv(env, "XDG_CACHE_HOME", cache)
	env = setEnv(env, "GOCACHE", filepath.Join(cache, "go-build"))
	if t := lastEnv(env, "TMPDIR"); t != "" && !reachable(t, true) {
		env = setEnv(env, "TMPDIR", os.TempDir())
	}
	var binds []Bind
	var notes []string
	if mc := GoModCache(env); mc != "" && !reachable(mc, false) {
		if _, err := os.Stat(mc); err == nil {
			if canMount {
				target := filepath.Join(home, "gomod")
				binds = append(binds, Bind{Source: mc, Target: target})
				env = setEnv(env, "GOMODCACHE", target)
			} else {
				notes = append(notes, "the Go module cache "+mc+" is not readable by uid 65534")
			}
		}
	}
	if ge := goEnvFile(env); ge != "" && !reachable(ge, false) {
		if data, err := os.ReadFile(ge); err == nil {
			copyPath := filepath.Join(home, "goenv")
			if os.WriteFile(copyPath, data, 0o644) == nil {
				env = setEnv(env, "GOENV", copyPath)
			}
		}
	}
	return env, binds, notes
}

// goEnvFile is the go command's configuration file env implies.
func goEnvFile(env []string) string {
	if g := lastEnv(env, "GOENV"); g != "" {
		if g == "off" {
			return ""
		}
		return g
	}
	if x := lastEnv(env, "XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "go", "env")
	}
	if h := lastEnv(env, "HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "go", "env")
	}
	return ""
}

// NobodyCannotRead lists the paths of paths uid 65534, without groups,
// could not read (by the mode bits): a handed-over clean checkout's runs
// are that user's when mini-agent is root (Access.HandOver), so what they
// must read from elsewhere (the workspace's installed dependencies) has
// to be readable by it.
func NobodyCannotRead(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !reachable(p, false) {
			out = append(out, p)
		}
	}
	return out
}

// reachable reports whether nobody (no groups) can reach path: search
// every directory above it and read it (write it too, with write), by
// the mode bits (ACLs are not read).
func reachable(path string, write bool) bool {
	path = filepath.Clean(path)
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if !allows(dir, 0o1) {
			return false
		}
		if dir == "/" || dir == "." {
			break
		}
	}
	want := os.FileMode(0o4)
	if write {
		want |= 0o2
	}
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		want |= 0o1
	}
	return allows(path, want)
}

// allows reports whether nobody has the rwx bits want (0-7) on path.
func allows(path string, want os.FileMode) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	sys := fi.Sys().(*syscall.Stat_t)
	perm := fi.Mode().Perm()
	switch {
	case sys.Uid == nobody:
		return (perm>>6)&want == want
	case sys.Gid == nobody:
		return (perm>>3)&want == want
	}
	return perm&want == want
}
