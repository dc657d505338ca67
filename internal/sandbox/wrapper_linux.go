//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// wrapperMain isolates and confines this process, then execs the command.
// It runs as whoever started it: the harness's user, root through sudo,
// or the harness's user in new namespaces. Exit codes: 126 the sandbox
// could not be set up, 127 the command could not be run.
func wrapperMain(args []string) int {
	// Namespaces unshared below belong to this thread; the exec must
	// happen on it.
	runtime.LockOSThread()
	cfg, argv, err := parseWrapperArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mini-agent sandbox: %v\n", err)
		return 126
	}
	rep := isolate(cfg)
	if cfg.Probe {
		b, _ := json.Marshal(rep)
		fmt.Println(string(b))
		return 0
	}
	for _, e := range []string{rep.Mount, rep.Net, rep.ID} {
		if e != "" {
			// The harness probed the same steps before it asked for them:
			// a failure now is not a state to run test code in.
			fmt.Fprintf(os.Stderr, "mini-agent sandbox: %s\n", e)
			return 126
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "mini-agent sandbox: no_new_privs: %v\n", err)
		return 126
	}
	if st := Probe(); st.Writes {
		cfg2 := landlock.Config{HandledAccessFS: handledFS, Scoped: landlock.V11.Scoped}.BestEffort()
		if err := cfg2.Restrict(rules(cfg.Writable)...); err != nil {
			fmt.Fprintf(os.Stderr, "mini-agent sandbox: landlock: %v\n", err)
			return 126
		}
	}
	env := os.Environ()
	if cfg.SetEnv {
		env = cfg.Env
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		if path, err = lookPath(path, env); err != nil {
			fmt.Fprintf(os.Stderr, "mini-agent sandbox: %v\n", err)
			return 127
		}
	}
	err = syscall.Exec(path, argv, env)
	fmt.Fprintf(os.Stderr, "mini-agent sandbox: exec %s: %v\n", argv[0], err)
	return 127
}

// lookPath finds name on env's PATH (the command's, not the wrapper's:
// sudo gives the wrapper its own).
func lookPath(name string, env []string) (string, error) {
	for _, dir := range strings.Split(lastEnv(env, "PATH"), ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(name)
}

// isolate makes the namespaces, mounts and identity cfg asks for, in that
// order (each later step needs the privileges the identity drops), and
// reports each step's failure.
func isolate(cfg wrapperConfig) probeReport {
	var rep probeReport
	if len(cfg.Masks)+len(cfg.Hide)+len(cfg.Binds) > 0 || cfg.Probe {
		rep.Mount = errText("mount namespace", mountNS(cfg))
	}
	if cfg.Net {
		rep.Net = errText("network namespace", netNS(cfg.InNS))
	}
	if cfg.SetID {
		rep.ID = errText("user and groups", setIdentity(cfg))
	}
	if cfg.InNS {
		// Raised by the harness for the steps above only.
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && rep.ID == "" {
			rep.ID = errText("ambient capabilities", err)
		}
	}
	return rep
}

func errText(what string, err error) string {
	if err == nil {
		return ""
	}
	return what + ": " + err.Error()
}

// mountNS gives this thread a mount namespace of its own whose mounts do
// not propagate back, and mounts the masks, hidden sockets and binds.
func mountNS(cfg wrapperConfig) error {
	if !cfg.InNS {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return err
		}
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make / a slave mount: %w", err)
	}
	bind := func(src, dst string) error {
		if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s over %s: %w", src, dst, err)
		}
		// Read-only: what test code writes never lands in the source.
		if err := unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", dst, err)
		}
		return nil
	}
	if len(cfg.Masks) > 0 {
		// The masks' files are written now, in a fresh directory of the
		// wrapper's own, and unlinked once mounted (a mount keeps its
		// file): no path test code could have swapped for a link stands in
		// for them, and nothing is left behind.
		dir, err := os.MkdirTemp("", "mini-agent-mask-")
		if err != nil {
			return fmt.Errorf("masks: %w", err)
		}
		defer os.RemoveAll(dir)
		for i, m := range cfg.Masks {
			src := fmt.Sprintf("%s/%d", dir, i)
			if err := os.WriteFile(src, []byte(m.Content), 0o644); err != nil {
				return fmt.Errorf("masks: %w", err)
			}
			if err := os.Chmod(src, 0o644); err != nil {
				return fmt.Errorf("masks: %w", err)
			}
			if err := bind(src, m.Target); err != nil {
				return err
			}
		}
	}
	for _, s := range cfg.Hide {
		if err := unix.Mount("/dev/null", s, "", unix.MS_BIND, ""); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("hide %s: %w", s, err)
		}
	}
	for _, b := range cfg.Binds {
		if err := unix.Mount(b.Source, b.Target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s at %s: %w", b.Source, b.Target, err)
		}
		if err := unix.Mount("", b.Target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", b.Target, err)
		}
	}
	return nil
}

// netNS gives this thread a network namespace of its own (unless it was
// started in one) and brings its loopback interface up.
func netNS(inNS bool) error {
	if !inNS {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return err
		}
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read lo's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}

// setIdentity sets the groups, then the gid, then either the uid (every
// capability goes with uid 0) or, keeping uid 0, drops every capability
// from the bounding, ambient, inheritable, permitted and effective sets.
func setIdentity(cfg wrapperConfig) error {
	if err := syscall.Setgroups(cfg.Groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(cfg.GID, cfg.GID, cfg.GID); err != nil {
		return fmt.Errorf("setresgid %d: %w", cfg.GID, err)
	}
	if cfg.UID != 0 {
		if err := syscall.Setresuid(cfg.UID, cfg.UID, cfg.UID); err != nil {
			return fmt.Errorf("setresuid %d: %w", cfg.UID, err)
		}
		return nil
	}
	return dropCapabilities()
}

// dropCapabilities empties this thread's capability sets; the exec
// happens on it, so the command starts with none, and an empty bounding
// set keeps a uid-0 exec from regaining them.
func dropCapabilities() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
