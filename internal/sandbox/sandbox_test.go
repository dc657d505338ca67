package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestCommandWithoutLauncherIsUnchanged(t *testing.T) {
	argv := []string{"go", "test", "./..."}
	got, st := Command(Policy{}, argv)
	if !slices.Equal(got, argv) || st.Active() || !strings.Contains(st.String(), "no sandbox launcher") {
		t.Fatalf("Command = %q, %v (%s)", got, st, st)
	}
}

func TestWrapperArgsRoundTrip(t *testing.T) {
	p := Policy{Launcher: "/bin/launcher", Writable: []string{"/ws", "", "-w", "/tmp"}}
	argv := []string{"go", "test", "--", "-w"}
	wrapped, st := Command(p, argv)
	if !st.Active() {
		t.Skipf("no Landlock here (%s): Command does not wrap", st)
	}
	if wrapped[0] != "/bin/launcher" || wrapped[1] != wrapperArg {
		t.Fatalf("wrapped = %q", wrapped)
	}
	w, a, err := parseWrapperArgs(wrapped[2:])
	if err != nil || !slices.Equal(w, []string{"/ws", "-w", "/tmp"}) || !slices.Equal(a, argv) {
		t.Fatalf("parse = %q %q %v", w, a, err)
	}
	for _, bad := range [][]string{nil, {"--"}, {"-w"}, {"-x", "--", "a"}, {"-w", "/a"}} {
		if _, _, err := parseWrapperArgs(bad); err == nil {
			t.Errorf("parseWrapperArgs(%q) accepted", bad)
		}
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
}

func TestStatusString(t *testing.T) {
	off := Status{Reason: "the kernel does not offer Landlock"}
	if off.Active() || off.String() != "landlock off: the kernel does not offer Landlock" {
		t.Fatalf("%q", off.String())
	}
	on := Status{ABI: 7, Writes: true, Ptrace: true, Signals: true}
	if s := on.String(); !strings.HasPrefix(s, "landlock ABI 7: writes limited") || !strings.Contains(s, "no signals") || strings.Contains(s, "abstract") {
		t.Fatalf("%q", s)
	}
}
