//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Who test code runs as and what it can reach: the groups that reach opted-in
// sockets, the sockets hidden from it, the workspace handed to nobody, nobody's
// environment and what nobody can read.

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
