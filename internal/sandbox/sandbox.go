// Package sandbox confines a command without confining the caller: the
// caller's own executable is run again in a hidden wrapper mode that
// isolates and restricts itself and then execs the command, so every
// protection is in place before the command's first instruction and is
// inherited by everything it starts.
//
// On Linux the wrapper gives the command, as far as the machine allows:
//   - a kernel sandbox (Landlock): writes only where Policy.Writable says,
//     no ptrace of outside processes, no signals to them (ABI 6);
//   - a network namespace of its own with only loopback (Network);
//   - no way to a root-equivalent local service: it runs with no
//     supplementary group (the docker group gives root through the
//     daemon's socket) and, where mini-agent is root, as an unprivileged
//     user; the unix sockets it could still reach only through what it
//     kept are hidden (Sockets opts a socket in);
//   - no new privileges (no setuid: sudo and su do not work in it);
//   - the files named by Masks replaced by credential-free copies.
//
// Dropping groups and making namespaces need privilege: mini-agent has it
// as root (self-hosted runners), through passwordless sudo (GitHub-hosted
// runners: the runner user is in the docker group and may sudo), or, for
// the namespaces only, through an unprivileged user namespace where the
// kernel and AppArmor allow one. Status says which protections held and
// why the others did not.
//
// A program opts in by calling Main first thing in main (and in TestMain
// for test binaries that run sandboxed commands); Launcher then names the
// executable to use.
//
// Leaf engine: imports nothing above it.
package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
)

// wrapperArg is argv[1] of the wrapper mode. It cannot be a real
// subcommand or flag of mini-agent.
const wrapperArg = "__mini-agent-sandbox-exec__"

// Network is the network a sandboxed command gets.
type Network string

const (
	// NetworkLoopback (the default, also for "") is a network namespace of
	// the command's own with only the loopback interface: it can serve and
	// reach its own servers on 127.0.0.1 and ::1, and nothing else.
	NetworkLoopback Network = "loopback"
	// NetworkOpen is the machine's network, as the caller has it.
	NetworkOpen Network = "open"
)

// ParseNetwork reads a --test-network value: loopback (or empty) or open.
func ParseNetwork(s string) (Network, error) {
	switch Network(strings.ToLower(strings.TrimSpace(s))) {
	case "", NetworkLoopback:
		return NetworkLoopback, nil
	case NetworkOpen:
		return NetworkOpen, nil
	}
	return "", fmt.Errorf("%q is not loopback or open", s)
}

// Mask replaces, for the sandboxed command only, the file at Target by a
// read-only file holding Content (a credential-free copy of a git
// config). The content travels in the wrapper's arguments and is written
// to a memory file there: no file test code could swap stands in for it.
type Mask struct {
	Target  string `json:"target"`
	Content string `json:"content"`
}

// Access is what a run may reach beyond the defaults, and what it must not
// see: the maintainer's opt-ins and the harness's masks.
type Access struct {
	// Network: "" is NetworkLoopback.
	Network Network
	// Sockets are unix sockets the command may connect to although the
	// isolation would keep it from them (the docker socket, for tests that
	// drive containers): absolute paths.
	Sockets []string
	// Masks hide files from the command (persisted checkout credentials).
	Masks []Mask
	// ReadOnly are directories the command must not write in although they
	// may lie in a writable place (the runner's file-command files, by
	// which a step sets the environment of the next ones: RUNNER_TEMP may
	// be in the temp dir): made read-only in its mount namespace.
	ReadOnly []string
	// HandOver: the command's workspace is a directory the harness made
	// for these runs (a clean checkout). Where mini-agent runs as root,
	// the command then runs as an unprivileged user the workspace is given
	// to; in a workspace the harness does not own it keeps uid 0, without
	// capabilities.
	HandOver bool
}

// Policy is what a sandboxed command may do.
type Policy struct {
	// Launcher is an executable that calls Main first thing (Launcher()
	// gives this program's own, when it does). Empty means no sandbox.
	Launcher string
	// Dir is the command's working directory: the workspace.
	Dir string
	// Writable lists the directories and files the command may create,
	// change or remove files in; everything else is read-only (reading and
	// executing stay allowed everywhere). Missing paths are skipped.
	Writable []string
	Access
}

// Status says which protections a sandboxed command gets on this machine.
type Status struct {
	// ABI is the kernel's Landlock ABI version, 0 without Landlock.
	ABI int
	// Writes: writes are limited to Policy.Writable.
	Writes bool
	// Ptrace: the command cannot ptrace, or read /proc/<pid>/environ or
	// mem of, a process outside the sandbox (Landlock's ptrace rule). Not
	// claimed for a command that keeps uid 0 with capabilities, which was
	// measured to keep the access.
	Ptrace bool
	// Signals and AbstractUnix: the command cannot signal, or connect to
	// an abstract unix socket of, a process outside the sandbox (ABI 6).
	Signals      bool
	AbstractUnix bool
	// Reason says why Landlock is off, when it is.
	Reason string

	// Via names the privilege the isolation below was set up with: "root",
	// "sudo", "user namespace", or "" for none.
	Via string
	// Loopback: the command has a network namespace with only loopback.
	// NetworkReason says why not, when not.
	Loopback      bool
	NetworkReason string
	// NoGroups: the command has no supplementary group (beyond those of
	// Sockets) and a primary group that grants nothing; UID is the user it
	// runs as. Unprivileged: that user is not root. Capless: it keeps uid
	// 0 but has no capability. IdentityReason says what was kept and why.
	NoGroups       bool
	Unprivileged   bool
	Capless        bool
	UID            int
	IdentityReason string
	// SocketGroups are the groups kept for the opted-in sockets
	// (Access.Sockets): the only supplementary groups left.
	SocketGroups []int
	// HiddenSockets counts the listening unix sockets hidden from the
	// command (those it could reach only through what it kept).
	HiddenSockets int
	// NoNewPrivs: no setuid program (sudo, su) raises its privileges.
	NoNewPrivs bool
	// Masked counts the files replaced by Masks; MaskReason says why
	// masks were not applied, when they were not.
	Masked     int
	MaskReason string
	// ReadOnly counts the Access.ReadOnly directories made read-only;
	// ReadOnlyReason says why not, when not.
	ReadOnly       int
	ReadOnlyReason string
	// Notes say what else did not go as asked: an opted-in socket that
	// stays out of reach, a workspace or module cache the unprivileged
	// user could not be given.
	Notes []string
}

// Active reports whether the command runs through the wrapper at all.
func (s Status) Active() bool {
	return s.Writes || s.Ptrace || s.Loopback || s.NoGroups || s.Capless || s.NoNewPrivs
}

// String is one line naming the protections that held and, for each one
// that did not, why: the protections line of reports.
func (s Status) String() string {
	var parts []string
	if s.Writes || s.Ptrace {
		var on []string
		if s.Writes {
			on = append(on, "writes limited to workspace, temp and tool caches")
		}
		if s.Ptrace {
			on = append(on, "no ptrace or /proc/<pid>/environ of outside processes")
		}
		if s.Signals {
			on = append(on, "no signals to outside processes")
		}
		if s.AbstractUnix {
			on = append(on, "no abstract unix sockets outside")
		}
		parts = append(parts, fmt.Sprintf("landlock ABI %d: %s", s.ABI, strings.Join(on, "; ")))
	} else {
		parts = append(parts, "landlock off: "+s.Reason)
	}
	via := ""
	if s.Via != "" {
		via = " (via " + s.Via + ")"
	}
	if s.Loopback {
		parts = append(parts, "network: loopback only"+via)
	} else {
		parts = append(parts, "network: open: "+s.NetworkReason)
	}
	groups := "without supplementary groups"
	if len(s.SocketGroups) > 0 {
		groups = fmt.Sprintf("with only the groups of the opted-in sockets %v", s.SocketGroups)
	}
	switch {
	case s.NoGroups && s.Unprivileged:
		parts = append(parts, fmt.Sprintf("local services: runs as uid %d %s%s", s.UID, groups, via))
	case s.Capless:
		p := fmt.Sprintf("local services: runs as uid 0 without capabilities or supplementary groups%s", via)
		if s.IdentityReason != "" {
			p += " (" + s.IdentityReason + ")"
		}
		parts = append(parts, p)
	default:
		parts = append(parts, "local services: groups kept: "+s.IdentityReason)
	}
	if s.HiddenSockets > 0 {
		parts = append(parts, fmt.Sprintf("%d unix sockets hidden", s.HiddenSockets))
	}
	parts = append(parts, s.Notes...)
	if s.NoNewPrivs {
		parts = append(parts, "no new privileges (no sudo)")
	}
	switch {
	case s.ReadOnly > 0:
		parts = append(parts, "runner file commands read-only")
	case s.ReadOnlyReason != "":
		parts = append(parts, "runner file commands writable where Landlock allows: "+s.ReadOnlyReason)
	}
	switch {
	case s.Masked > 0:
		parts = append(parts, fmt.Sprintf("persisted credentials hidden (%d files)", s.Masked))
	case s.MaskReason != "":
		parts = append(parts, "persisted credentials readable: "+s.MaskReason)
	}
	return strings.Join(parts, "; ")
}

var launcherReady atomic.Bool

// Main must be the first call in main (and in TestMain of test binaries
// that run sandboxed commands). In the wrapper mode it confines the process
// and execs the command, never returning; otherwise it records that this
// executable can serve as Launcher and returns.
func Main() {
	if len(os.Args) > 1 && os.Args[1] == wrapperArg {
		os.Exit(wrapperMain(os.Args[2:]))
	}
	launcherReady.Store(true)
}

// Launcher returns this program's executable when Main was called, for
// Policy.Launcher; "" otherwise.
func Launcher() string {
	if !launcherReady.Load() {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// Launch is how to start a command confined by a Policy: Argv with Env,
// and, on Linux, the process attributes SetAttrs adds (new namespaces).
type Launch struct {
	Argv   []string
	Env    []string
	Status Status
	// userNS: start Argv in new user, mount and network namespaces.
	userNS bool
}

// ToolCaches returns the directories build tools write to outside the
// project, as env (the command's environment) sets or implies them: the Go
// build and module caches and temp dir, the XDG cache (pip, yarn, go-build
// by default), npm's cache, cargo's registry and git checkouts, Gradle's
// and Maven's caches. Directories holding programs later steps run from
// PATH or configuration they execute (GOPATH/bin, ~/.cargo/bin, rustup's
// toolchains, ~/.gradle/init.d) are left out.
func ToolCaches(env []string) []string {
	get := func(name string) string { return lastEnv(env, name) }
	home := get("HOME")
	inHome := func(rel string) string {
		if home == "" || !filepath.IsAbs(home) {
			return ""
		}
		return filepath.Join(home, rel)
	}
	cargo := get("CARGO_HOME")
	if cargo == "" {
		cargo = inHome(".cargo")
	}
	dirs := []string{
		get("GOCACHE"), get("GOMODCACHE"), get("GOTMPDIR"),
		get("XDG_CACHE_HOME"), inHome(".cache"),
		get("npm_config_cache"), inHome(".npm"),
		get("PIP_CACHE_DIR"), get("YARN_CACHE_FOLDER"),
		get("CARGO_TARGET_DIR"),
		inHome(".gradle/caches"), inHome(".gradle/wrapper"), inHome(".m2/repository"),
	}
	if filepath.IsAbs(cargo) {
		dirs = append(dirs, filepath.Join(cargo, "registry"), filepath.Join(cargo, "git"), filepath.Join(cargo, ".package-cache"))
	}
	for _, p := range gopath(env) {
		dirs = append(dirs, filepath.Join(p, "pkg"))
	}
	var out []string
	for _, d := range dirs {
		if d != "" && filepath.IsAbs(d) && !slices.Contains(out, filepath.Clean(d)) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// gopath is GOPATH's entries as env sets or implies them ($HOME/go).
func gopath(env []string) []string {
	gp := lastEnv(env, "GOPATH")
	if gp == "" {
		if home := lastEnv(env, "HOME"); filepath.IsAbs(home) {
			gp = filepath.Join(home, "go")
		}
	}
	var out []string
	for p := range strings.SplitSeq(gp, string(os.PathListSeparator)) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// GoModCache is the Go module cache env sets or implies: GOMODCACHE, else
// the first GOPATH entry's pkg/mod ("" when neither is known).
func GoModCache(env []string) string {
	if d := lastEnv(env, "GOMODCACHE"); filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	if gp := gopath(env); len(gp) > 0 && filepath.IsAbs(gp[0]) {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	return ""
}

// lastEnv is the value the environment gives name (its last entry), or "".
func lastEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// setEnv returns env with name set to value (every earlier entry removed).
func setEnv(env []string, name, value string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(out, name+"="+value)
}
