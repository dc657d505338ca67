package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"testing"
)

// TestVersionFromLdflags builds the binary the way the release does and
// checks both spellings print the linked-in version.
func TestVersionFromLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "mini-agent")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil || string(out) != "mini-agent v9.8.7-test\n" {
			t.Errorf("%s: %q, %v", arg, out, err)
		}
	}
}

// TestVersionFromBuildInfo: a build without -ldflags (TestMain's, like
// `go build` or `go install`) reports the module's build information.
func TestVersionFromBuildInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	r := runBinary(t, context.Background(), nil, "version")
	if r.code != 0 || !regexp.MustCompile(`^mini-agent (\(devel\)|v\d+\.\d+\.\d+\S*)( \([0-9a-f]{12}(, modified)?\))?\n$`).MatchString(r.stdout) {
		t.Errorf("exit %d, %q", r.code, r.stdout)
	}
}

func TestVersionString(t *testing.T) {
	// Not parallel: it swaps package variables.
	defer func(v string, f func() (*debug.BuildInfo, bool)) { version, readBuildInfo = v, f }(version, readBuildInfo)
	info := func(v string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "github.com/org/mini-agent", Version: v}, Settings: settings}, true
		}
	}
	for _, c := range []struct {
		linked string
		info   func() (*debug.BuildInfo, bool)
		want   string
	}{
		{"v1.2.3", info("(devel)"), "v1.2.3"},
		{"", info("v1.4.2"), "v1.4.2"},
		{"", info("(devel)", debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "(devel) (0123456789ab, modified)"},
		{"", info("v0.0.0-20260101000000-0123456789ab", debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef"}),
			"v0.0.0-20260101000000-0123456789ab"},
		{"", info(""), "(devel)"},
		{"", func() (*debug.BuildInfo, bool) { return nil, false }, "(unknown)"},
	} {
		version, readBuildInfo = c.linked, c.info
		if got := versionString(); got != c.want {
			t.Errorf("linked %q: versionString = %q, want %q", c.linked, got, c.want)
		}
	}
}
