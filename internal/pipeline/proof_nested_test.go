package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
)

// nestedFix is the upstream fix of testdata/proof/nested, whose module is
// in sub/.
var nestedFix = patchCall("--- a/sub/calc.go\n+++ b/sub/calc.go\n@@ -4,2 +4,2 @@\n // addFn is the implementation Add calls.\n-var addFn = func(a, b int) int { return a - b }\n+var addFn = func(a, b int) int { return a + b }\n")

// A Go module in a subdirectory (the test command go -C sub test ./...,
// as for golang/tools' gopls/): the failing test is reproduced and
// validated by narrowed runs, go -C sub test -run ^(TestAdd)$, like a
// module at the root; and the fix is proven. The same repository tested
// by the suite the detection proposes for a root module and a nested one
// runs the narrowed test in each module.
func TestNestedModuleIsNarrowedAndValidated(t *testing.T) {
	slow(t)
	t.Parallel()
	for _, cmd := range []string{"go -C sub test ./...", "go test -C sub ./..."} {
		dir := proofRepo(t, "nested")
		m := &recording{scripted: scripted{outs: []agent.Output{nestedFix, finish}}}
		b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: cmd, FailureLog: ciLog(t, "nested")}, m)
		if b.Baseline == nil || b.Baseline.Verdict != bundle.VerdictReproduced {
			t.Fatalf("%s: baseline %+v, warnings %v", cmd, b.Baseline, b.Warnings)
		}
		if b.Status != bundle.StatusFixed || b.Proof == nil || !b.Proof.Holds {
			t.Fatalf("%s: status %s, proof %+v", cmd, b.Status, b.Proof)
		}
		for _, ph := range []*bundle.Phase{&b.Baseline.Phase, &b.Proof.Phase} {
			narrowed := slices.ContainsFunc(ph.Commands, func(c string) bool {
				return strings.Contains(c, "-C sub") && strings.Contains(c, "-run ^(TestAdd)$")
			})
			if !narrowed || target(t, ph, "TestAdd").Runs < BaselineRuns {
				t.Fatalf("%s: the target was not run narrowed in sub/: commands %q, record %+v", cmd, ph.Commands,
					target(t, ph, "TestAdd"))
			}
			if slices.ContainsFunc(ph.Notes, func(n string) bool { return strings.Contains(n, "cannot be narrowed") }) {
				t.Fatalf("%s: notes %q", cmd, ph.Notes)
			}
		}
	}
}

// The suite detection proposes for a module at the root and one in sub/
// (go test ./... && go -C sub test ./...): the failing test of the nested
// module is narrowed in both modules' commands (it exists in one) and the
// fix is proven.
func TestNestedModulesSuiteIsNarrowedAndValidated(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "nested")
	for name, text := range map[string]string{
		"go.mod":       "module example.com/root\n\ngo 1.22\n",
		"root_test.go": "package root\n\nimport \"testing\"\n\nfunc TestRoot(t *testing.T) {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commitAll(t, dir, "a module at the root too")
	cmd := "go test ./... && go -C sub test ./..."
	m := &recording{scripted: scripted{outs: []agent.Output{nestedFix, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: cmd, FailureLog: ciLog(t, "nested")}, m)
	if b.Status != bundle.StatusFixed || b.Proof == nil || !b.Proof.Holds {
		t.Fatalf("status %s, proof %+v, baseline %+v", b.Status, b.Proof, b.Baseline)
	}
	narrowed := slices.ContainsFunc(b.Proof.Phase.Commands, func(c string) bool {
		return strings.Contains(c, "go test -count=1 -run ^(TestAdd)$ ./... && go -C sub test -count=1 -run ^(TestAdd)$ ./...") ||
			strings.Contains(c, "-run ^(TestAdd)$") && strings.Contains(c, "&& go -C sub test")
	})
	if !narrowed || target(t, &b.Proof.Phase, "TestAdd").Runs < BaselineRuns {
		t.Fatalf("commands %q, record %+v", b.Proof.Phase.Commands, target(t, &b.Proof.Phase, "TestAdd"))
	}
}

// "cd sub && go test ./..." needs a shell: it still runs (whole), and the
// note that it could not be narrowed says to write go -C sub test ./....
func TestCdCommandIsRunWholeWithAdvice(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "nested")
	m := &recording{scripted: scripted{outs: []agent.Output{nestedFix, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "cd sub && go test ./...", FailureLog: ciLog(t, "nested")}, m)
	if b.Baseline == nil {
		t.Fatalf("no baseline: %v", b.Warnings)
	}
	if !slices.ContainsFunc(b.Baseline.Notes, func(n string) bool {
		return strings.Contains(n, "cannot be narrowed") && strings.Contains(n, "`go -C sub test ./...`")
	}) {
		t.Fatalf("notes %q", b.Baseline.Notes)
	}
}

// The harness's go mod download and verify run in the module the test
// command names (go -C sub), not at a root without go.mod; a directory
// reached through a symbolic link is not one the harness enters.
func TestGoModRunsInTheCommandsModules(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "nested")
	for _, tt := range []struct {
		cmd, want string
	}{
		{"go -C sub test ./...", "sub: all modules verified"},
		{"go test ./... && go -C sub test ./...", "sub: all modules verified"},
		{"go test ./...", ""}, // no go.mod at the root: nothing to do
	} {
		p := &prover{repo: dir, commit: headSHA(context.Background(), dir), cmd: mustParse(t, tt.cmd), r: &runner{},
			goBin: resolve("go"), env: os.Environ()}
		tree, _, err := p.checkout(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.goMod(context.Background(), tree, "verify")
		tree.Close()
		if err != nil || out != tt.want {
			t.Errorf("%s: go mod verify gave %q, %v; want %q", tt.cmd, out, err, tt.want)
		}
	}
	if plainDirIn(dir, "sub/../sub") || !plainDirIn(dir, "sub") || plainDirIn(dir, "missing") {
		t.Error("plainDirIn")
	}
	if err := os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if plainDirIn(dir, "link") {
		t.Error("plainDirIn followed a link")
	}
}
