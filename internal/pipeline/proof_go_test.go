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

// An ignored go.work that replaces the module's dependency with a fixed
// copy in an ignored directory: the workspace passes, the clean tree sees
// neither.
func TestIgnoredGoWorkIsNotUsedInValidation(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "workdep")
	work := patchCall("--- /dev/null\n+++ b/go.work\n@@ -0,0 +1,5 @@\n+go 1.22\n+\n+use .\n+\n+replace example.com/adder => ./zz_adder\n" +
		"--- /dev/null\n+++ b/zz_adder/go.mod\n@@ -0,0 +1,3 @@\n+module example.com/adder\n+\n+go 1.22\n" +
		"--- /dev/null\n+++ b/zz_adder/adder.go\n@@ -0,0 +1,3 @@\n+package adder\n+\n+func Add(a, b int) int { return a + b }\n")
	m := &recording{scripted: scripted{outs: []agent.Output{work, commentEdit, runTestCall, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", FailureLog: ciLog(t, "workdep")}, m)
	if res := lastToolResult(m); !strings.Contains(res, "PASSED") {
		t.Fatalf("the workspace's tests did not pass with the go.work, the test proves nothing: %q", res)
	}
	if b.Status == bundle.StatusFixed || b.Validated() {
		t.Fatalf("status %s: a go.work the PR does not carry was used", b.Status)
	}
	if len(b.Files) != 1 || b.Proof == nil || !slices.Contains(b.Proof.LeftOut, "go.work") {
		t.Fatalf("files %v, proof %+v", paths(b.Files), b.Proof)
	}
}

// goEnv turns an untracked go.work off and leaves a tracked one on.
func TestGoWorkOffUnlessTracked(t *testing.T) {
	slow(t)
	t.Parallel()
	for _, tracked := range []bool{false, true} {
		dir := proofRepo(t, "workdep")
		if err := os.WriteFile(filepath.Join(dir, "go.work"), []byte("go 1.22\n\nuse .\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if tracked {
			gitRun(t, dir, "add", "-f", "go.work")
			commitAll(t, dir, "track go.work")
		}
		p := &prover{repo: dir, commit: headSHA(context.Background(), dir), cmd: mustParse(t, "go test ./..."), r: &runner{}}
		tree, _, err := p.checkout(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		env := p.goEnv(tree)
		_, statErr := os.Stat(filepath.Join(tree.Dir(), "go.work"))
		tree.Close()
		if got := slices.Contains(env, "GOWORK=off"); got == tracked {
			t.Errorf("tracked go.work %v: env %v", tracked, env)
		}
		if (statErr == nil) != tracked {
			t.Errorf("tracked go.work %v: in the clean tree: %v", tracked, statErr)
		}
	}
}

// Test code rewrites a dependency in the module cache (writable to it
// here: the test binary has no kernel sandbox launcher) so that the
// workspace passes with a comment edit: the module cache does not verify,
// and nothing is proven.
func TestRewrittenModuleCacheIsNotAFix(t *testing.T) {
	slow(t)
	t.Parallel()
	env := moduleProxy(t)
	dir := t.TempDir()
	copyFixture(t, filepath.Join("testdata", "proof", "modcache"), dir)
	goRun(t, dir, env, "mod", "tidy")
	gitRun(t, dir, "init", "-q", "-b", "main")
	commitAll(t, dir, "fixture modcache")
	marker := patchCall("--- /dev/null\n+++ b/zz_rewrite\n@@ -0,0 +1 @@\n+yes\n")
	m := &recording{scripted: scripted{outs: []agent.Output{marker, runTestCall, commentEdit, runTestCall, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", FailureLog: ciLog(t, "modcache")}, m, env...)
	if b.Baseline == nil || b.Baseline.Verdict != bundle.VerdictReproduced {
		t.Fatalf("baseline %+v, warnings %v", b.Baseline, b.Warnings)
	}
	if res := lastToolResult(m); !strings.Contains(res, "PASSED") {
		t.Fatalf("the rewritten dependency did not make the workspace pass, the test proves nothing: %q", res)
	}
	if b.Status == bundle.StatusFixed || b.Validated() {
		t.Fatalf("status %s: a rewritten module cache passed validation", b.Status)
	}
	if b.Proof == nil || len(b.Proof.Reasons) == 0 || !strings.Contains(b.Proof.Reasons[0], "module cache does not verify") {
		t.Fatalf("proof %+v", b.Proof)
	}
}
