package pipeline

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
)

func TestDependencyDirs(t *testing.T) {
	t.Parallel()
	ignored := map[string]bool{
		"node_modules/": true, "packages/ui/node_modules/": true, ".venv/": true, "venv/": true,
		"sub/.venv/": true, "node_modules": true, "dist/": true, "zz_fix.go": true, "build/node_modules.txt": true,
	}
	got := dependencyDirs(ignored)
	want := []string{".venv", "node_modules", "packages/ui/node_modules", "venv"}
	if !slices.Equal(got, want) {
		t.Fatalf("dependencyDirs = %q, want %q", got, want)
	}
	many := map[string]bool{}
	for i := range maxDependencyDirs + 10 {
		many[filepath.ToSlash(filepath.Join("p", strings.Repeat("x", i+1), "node_modules"))+"/"] = true
	}
	if n := len(dependencyDirs(many)); n != maxDependencyDirs {
		t.Fatalf("%d dirs, want the cap %d", n, maxDependencyDirs)
	}
}

func TestFingerprintDirsSeesEveryChangeButCaches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("node_modules/padder/index.js", "module.exports = 1;\n")
	write("node_modules/.bin/keep", "x")
	print := func() string {
		t.Helper()
		fp, err := fingerprintDirs(dir, []string{"node_modules", "missing"})
		if err != nil {
			t.Fatal(err)
		}
		return fp
	}
	base := print()
	if again := print(); again != base {
		t.Fatal("the fingerprint of an unchanged tree changed")
	}
	// Caches tools rewrite on every run are not dependencies.
	write("node_modules/.vite/vitest/results.json", "{}")
	write("node_modules/padder/__pycache__/x.pyc", "x")
	if got := print(); got != base {
		t.Fatal("a cache write changed the fingerprint")
	}
	// A same-size rewrite with its modification time set back still shows.
	p := filepath.Join(dir, "node_modules/padder/index.js")
	fi, _ := os.Stat(p)
	write("node_modules/padder/index.js", "module.exports = 2;\n")
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	changed := print()
	if changed == base {
		t.Fatal("a rewritten dependency kept its fingerprint")
	}
	write("node_modules/.bin/new", "y")
	if got := print(); got == changed {
		t.Fatal("a new file in .bin kept the fingerprint")
	}
}

func TestRelativeIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	got := relativeIDs(dir, []string{filepath.Join(dir, "test", "a.test.js"), "TestX", filepath.Join(dir, "test", "a.test.js")})
	if want := []string{"TestX", filepath.Join("test", "a.test.js")}; !slices.Equal(got, want) {
		t.Fatalf("relativeIDs = %q, want %q", got, want)
	}
}

// nodeRepo is testdata/proof/nodedeps committed, with its ignored
// node_modules installed beside: the workspace a JavaScript CI job has
// after `npm ci`.
func nodeRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir := proofRepo(t, "nodedeps")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "padder", "index.js")); err != nil {
		t.Fatalf("the fixture's installed dependency is missing: %v", err)
	}
	return dir
}

// centsFix is the real fix of testdata/proof/nodedeps.
var centsFix = patchCall("--- a/price.js\n+++ b/price.js\n@@ -2,3 +2,3 @@\n // cents renders an amount in cents as \"D.CC\".\n" +
	"-function cents(n) { return Math.floor(n / 100) + '.' + pad(n % 10, 2); }\n+function cents(n) { return Math.floor(n / 100) + '.' + pad(n % 100, 2); }\n module.exports = { cents };\n")

// The clean checkouts have the workspace's installed dependencies: a real
// fix of a JavaScript project that requires a package is proven, and its
// baseline reproduced the real failure, not a missing module.
func TestInstalledDependenciesReachTheCleanCheckouts(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := nodeRepo(t)
	// A workspace only its owner can enter, as a root-owned checkout under
	// /root is: as root, the clean checkouts' runs must still read the
	// dependencies.
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "node --test"}, &scripted{outs: []agent.Output{centsFix, finish}})
	t.Logf("isolation: %s; warnings: %q", b.Isolation, b.Warnings)
	if b.Status != bundle.StatusFixed {
		t.Fatalf("status %s, warnings %v, proof %+v", b.Status, b.Warnings, b.Proof)
	}
	bl := b.Baseline
	if bl.Verdict != bundle.VerdictReproduced || !strings.Contains(strings.Join(bl.Notes, "\n"), "read-only: node_modules") {
		t.Fatalf("baseline %+v", bl)
	}
	if r := target(t, &bl.Phase, "cents pads"); r.Failures == 0 {
		t.Fatalf("the baseline saw %+v", r)
	}
	if raw, _ := json.Marshal(b); strings.Contains(string(raw), "Cannot find module") {
		t.Fatalf("a run could not load the installed dependency:\n%s", raw)
	}
	if slices.ContainsFunc(bl.Failed, func(id string) bool { return strings.Contains(id, os.TempDir()) }) {
		t.Fatalf("a clean checkout's path in a test id: %q", bl.Failed)
	}
	if !b.Proof.Holds || len(b.Proof.NewFailures) != 0 {
		t.Fatalf("proof %+v", b.Proof)
	}
}

// A "fix" written into the installed dependencies (ignored: never in the
// PR) beside a comment edit is not a fix, though the clean checkouts read
// the dependencies from the workspace.
func TestFixInTheInstalledDependenciesIsNotAFix(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := nodeRepo(t)
	// The fingerprint's change times must differ from the fixture's.
	time.Sleep(10 * time.Millisecond)
	depFix := patchCall("--- a/node_modules/padder/index.js\n+++ b/node_modules/padder/index.js\n@@ -2 +2 @@\n" +
		"-module.exports = (s, n) => String(s).padStart(n, '0');\n+module.exports = (s, n) => String(s === 4 ? 34 : s).padStart(n, '0');\n")
	comment := patchCall("--- a/price.js\n+++ b/price.js\n@@ -2 +2 @@\n-// cents renders an amount in cents as \"D.CC\".\n+// cents renders an amount in cents as \"D.CC\" (checked).\n")
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "node --test"}, &scripted{outs: []agent.Output{depFix, comment, finish}})
	if b.Status == bundle.StatusFixed {
		t.Fatalf("a change to node_modules was validated as a fix: diff %q", b.Diff)
	}
	if b.Proof == nil || b.Proof.Holds || !strings.Contains(strings.Join(b.Proof.Reasons, "\n"), "installed dependencies (node_modules) changed") {
		t.Fatalf("proof %+v, warnings %v", b.Proof, b.Warnings)
	}
}
