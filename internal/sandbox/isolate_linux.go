//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
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
