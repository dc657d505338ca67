// Package sandbox confines a command with a kernel sandbox (Landlock, on
// Linux) without confining the caller: the caller's own executable is run
// again in a hidden wrapper mode that restricts itself and then execs the
// command, so the restriction starts before the command's first
// instruction and is inherited by everything it starts.
//
// A program opts in by calling Main first thing in main (and in TestMain
// for test binaries that run sandboxed commands); Launcher then names the
// executable to use. Without Landlock the command runs unconfined and
// Status says so.
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

// Policy is what a sandboxed command may do.
type Policy struct {
	// Launcher is an executable that calls Main first thing (Launcher()
	// gives this program's own, when it does). Empty means no sandbox.
	Launcher string
	// Writable lists the directories and files the command may create,
	// change or remove files in; everything else is read-only (reading and
	// executing stay allowed everywhere). Missing paths are skipped.
	Writable []string
}

// Status says which protections a sandboxed command gets on this machine.
type Status struct {
	// ABI is the kernel's Landlock ABI version, 0 without Landlock.
	ABI int
	// Writes: writes are limited to Policy.Writable.
	Writes bool
	// Ptrace: the command cannot ptrace, or read /proc/<pid>/environ or
	// mem of, a process outside the sandbox (Landlock's ptrace rule). Not
	// claimed when running as root, which was measured to keep the access.
	Ptrace bool
	// Signals and AbstractUnix: the command cannot signal, or connect to
	// an abstract unix socket of, a process outside the sandbox (ABI 6).
	Signals      bool
	AbstractUnix bool
	// Reason says why the sandbox is off, when it is.
	Reason string
}

// Active reports whether any protection applies.
func (s Status) Active() bool { return s.Writes || s.Ptrace }

// String is one line naming the active protections, or why there are none.
func (s Status) String() string {
	if !s.Active() {
		return "landlock off: " + s.Reason
	}
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
	return fmt.Sprintf("landlock ABI %d: %s", s.ABI, strings.Join(on, "; "))
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

// Command returns argv wrapped so that it runs confined by p, and the
// protections it gets. When no protection is available (no Launcher, no
// Landlock), argv is returned unchanged with the reason in Status.
func Command(p Policy, argv []string) ([]string, Status) {
	st := Probe()
	if p.Launcher == "" {
		st = Status{ABI: st.ABI, Reason: "no sandbox launcher in this program"}
	}
	if !st.Active() {
		return argv, st
	}
	out := []string{p.Launcher, wrapperArg}
	for _, w := range p.Writable {
		if w != "" {
			out = append(out, "-w", w)
		}
	}
	out = append(out, "--")
	return append(out, argv...), st
}

// parseWrapperArgs splits the wrapper's arguments into writable paths and
// the command.
func parseWrapperArgs(args []string) (writable, argv []string, err error) {
	for len(args) > 0 {
		switch args[0] {
		case "--":
			if len(args) < 2 {
				return nil, nil, fmt.Errorf("no command")
			}
			return writable, args[1:], nil
		case "-w":
			if len(args) < 2 {
				return nil, nil, fmt.Errorf("-w needs a path")
			}
			writable = append(writable, args[1])
			args = args[2:]
		default:
			return nil, nil, fmt.Errorf("unexpected argument %q", args[0])
		}
	}
	return nil, nil, fmt.Errorf("no command")
}

// ToolCaches returns the directories build tools write to outside the
// project, as env (the command's environment) sets or implies them: the Go
// build and module caches and temp dir, the XDG cache (pip, yarn, go-build
// by default), npm's cache, cargo's registry and git checkouts, Gradle's
// and Maven's caches. Directories holding programs later steps run from
// PATH or configuration they execute (GOPATH/bin, ~/.cargo/bin, rustup's
// toolchains, ~/.gradle/init.d) are left out.
func ToolCaches(env []string) []string {
	get := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
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
	gopath := get("GOPATH")
	if gopath == "" {
		gopath = inHome("go")
	}
	for p := range strings.SplitSeq(gopath, string(os.PathListSeparator)) {
		if p != "" {
			dirs = append(dirs, filepath.Join(p, "pkg"))
		}
	}
	var out []string
	for _, d := range dirs {
		if d != "" && filepath.IsAbs(d) && !slices.Contains(out, filepath.Clean(d)) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}
