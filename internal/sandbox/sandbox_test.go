package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestPrepareWithoutLauncherIsUnchanged(t *testing.T) {
	argv, env := []string{"go", "test", "./..."}, []string{"A=1"}
	l := Prepare(Policy{Access: Access{Masks: []Mask{{"/a", "[core]"}}}}, argv, env)
	if !slices.Equal(l.Argv, argv) || !slices.Equal(l.Env, env) || l.Status.Active() {
		t.Fatalf("Prepare = %q %q, %+v", l.Argv, l.Env, l.Status)
	}
	for _, want := range []string{"landlock off: ", "network: open: ", "groups kept: ", "persisted credentials readable: "} {
		if s := l.Status.String(); !strings.Contains(s, want) {
			t.Errorf("status %q lacks %q", s, want)
		}
	}
}

func TestWrapperArgsRoundTrip(t *testing.T) {
	cfg := wrapperConfig{Writable: []string{"/ws", "-w", "/tmp"}, Net: true, SetID: true, UID: 1001, GID: 65534,
		Masks: []Mask{{Target: "/ws/.git/config", Content: "[core]\n"}}, SetEnv: true, Env: []string{"A=--"}}
	argv := []string{"go", "test", "--", "-w"}
	wrapped := wrapperArgv("/bin/launcher", cfg, argv)
	if wrapped[0] != "/bin/launcher" || wrapped[1] != wrapperArg {
		t.Fatalf("wrapped = %q", wrapped)
	}
	got, a, err := parseWrapperArgs(wrapped[2:])
	if err != nil || !slices.Equal(a, argv) || !slices.Equal(got.Writable, cfg.Writable) || got.UID != 1001 || !got.Net ||
		len(got.Masks) != 1 || got.Masks[0] != cfg.Masks[0] || !slices.Equal(got.Env, cfg.Env) {
		t.Fatalf("parse = %+v %q %v", got, a, err)
	}
	probe := wrapperArgv("/bin/launcher", wrapperConfig{Probe: true}, nil)
	if c, a, err := parseWrapperArgs(probe[2:]); err != nil || !c.Probe || a != nil {
		t.Fatalf("probe parse = %+v %q %v", c, a, err)
	}
	for _, bad := range [][]string{nil, {"{"}, {"{}"}, {"{}", "go"}, {"{}", "--"}, {`{"probe":true}`, "--", "x"}} {
		if _, _, err := parseWrapperArgs(bad); err == nil {
			t.Errorf("parseWrapperArgs(%q) accepted", bad)
		}
	}
}

func TestParseNetwork(t *testing.T) {
	for in, want := range map[string]Network{"": NetworkLoopback, "loopback": NetworkLoopback, " Open ": NetworkOpen} {
		if got, err := ParseNetwork(in); err != nil || got != want {
			t.Errorf("ParseNetwork(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseNetwork("host"); err == nil {
		t.Error("ParseNetwork(host) accepted")
	}
}

func TestToolCaches(t *testing.T) {
	env := []string{"HOME=/home/u", "GOCACHE=/c/go-build", "GOPATH=/g1:/g2", "CARGO_HOME=relative", "PIP_CACHE_DIR=/p/"}
	got := ToolCaches(env)
	for _, want := range []string{"/c/go-build", "/home/u/.cache", "/home/u/.npm", "/g1/pkg", "/g2/pkg", "/p",
		"/home/u/.gradle/caches", "/home/u/.m2/repository"} {
		if !slices.Contains(got, want) {
			t.Errorf("ToolCaches lacks %s: %q", want, got)
		}
	}
	for _, bad := range []string{"relative", "/home/u", "/home/u/go/pkg", "/g1", "/g1/bin", "/home/u/.cargo", "/home/u/.cargo/bin",
		"relative/registry", "/home/u/.cargo/registry", "/home/u/.rustup", "/home/u/.gradle"} {
		if slices.Contains(got, bad) {
			t.Errorf("ToolCaches has %s: %q", bad, got)
		}
	}
	got = ToolCaches([]string{"HOME=/h"})
	for _, want := range []string{"/h/go/pkg", "/h/.cargo/registry", "/h/.cargo/git"} {
		if !slices.Contains(got, want) {
			t.Errorf("default %s missing: %q", want, got)
		}
	}
	if got := GoModCache(env); got != "/g1/pkg/mod" {
		t.Errorf("GoModCache = %q", got)
	}
	if got := GoModCache([]string{"HOME=/h", "GOMODCACHE=/m/"}); got != "/m" {
		t.Errorf("GoModCache = %q", got)
	}
}

func TestStatusString(t *testing.T) {
	off := Status{Reason: "the kernel does not offer Landlock", NetworkReason: "not root, no sudo", IdentityReason: "not root, no sudo"}
	if off.Active() || off.String() != "landlock off: the kernel does not offer Landlock; network: open: not root, no sudo; local services: groups kept: not root, no sudo" {
		t.Fatalf("%q", off.String())
	}
	on := Status{ABI: 7, Writes: true, Ptrace: true, Signals: true, Via: "sudo", Loopback: true, NoGroups: true, Unprivileged: true,
		UID: 1001, NoNewPrivs: true, Masked: 2}
	want := "landlock ABI 7: writes limited to workspace, temp and tool caches; no ptrace or /proc/<pid>/environ of outside processes; " +
		"no signals to outside processes; network: loopback only (via sudo); local services: runs as uid 1001 without supplementary groups (via sudo); " +
		"no new privileges (no sudo); persisted credentials hidden (2 files)"
	if s := on.String(); s != want {
		t.Fatalf("\n got %q\nwant %q", s, want)
	}
	root := Status{ABI: 7, Writes: true, Via: "root", Loopback: true, NoGroups: true, Capless: true, IdentityReason: "the workspace is root's",
		HiddenSockets: 3, NoNewPrivs: true, NetworkReason: "x"}
	if s := root.String(); !strings.Contains(s, "runs as uid 0 without capabilities or supplementary groups (via root) (the workspace is root's); 3 unix sockets hidden") {
		t.Fatalf("%q", s)
	}
}
