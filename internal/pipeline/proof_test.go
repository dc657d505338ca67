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

// proofRepo copies testdata/proof/NAME into a new git repository and
// commits it: files named X.txt become X (go.mod, _test.go files) and
// gitignore.txt becomes .gitignore, so the fixtures are no part of this
// module.
func proofRepo(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	copyFixture(t, filepath.Join("testdata", "proof", name), dir)
	gitRun(t, dir, "init", "-q", "-b", "main")
	commitAll(t, dir, "fixture "+name)
	return dir
}

// copyFixture copies src into dst, renaming X.txt to X and gitignore.txt
// to .gitignore, leaving out ci.log (given to the run, not committed).
func copyFixture(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		name := strings.TrimSuffix(d.Name(), ".txt")
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case name == "ci.log":
			return nil
		case name == "gitignore":
			name = ".gitignore"
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, filepath.Dir(rel), name), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ciLog(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "proof", name, "ci.log"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// finish is the model's final message.
var finish = agent.Output{Message: "## Summary\nfixed\n## Root cause\ncalc.go\n## Assumptions\nnone"}

// commentEdit changes only a comment of calc.go.
var commentEdit = patchCall("--- a/calc.go\n+++ b/calc.go\n@@ -1,2 +1,2 @@\n-// Package calc adds numbers.\n+// Package calc adds numbers, correctly.\n package calc\n")

// realFix is the upstream fix of testdata/proof/calc.
var realFix = patchCall("--- a/calc.go\n+++ b/calc.go\n@@ -4,2 +4,2 @@\n // addFn is the implementation Add calls.\n-var addFn = func(a, b int) int { return a - b }\n+var addFn = func(a, b int) int { return a + b }\n")

func run(t *testing.T, job Job, m agent.Model, env ...string) *bundle.Bundle {
	t.Helper()
	out, err := Run(context.Background(), job, Deps{Model: script(m), Environ: append(os.Environ(), env...)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Bundle
}

func target(t *testing.T, p *bundle.Phase, id string) bundle.TestRecord {
	t.Helper()
	r, ok := p.Target(id)
	if !ok {
		t.Fatalf("no record of %s in %+v", id, p.Targets)
	}
	return r
}

func slow(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
}

// A CI log says TestAdd failed; here it passes on every run: the run ends
// not-reproduced before the model is asked anything, and a comment edit
// never becomes a "fix".
func TestFailureThatDoesNotReproduceIsNotFixedByAnEdit(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "firstrun")
	marker := filepath.Join(t.TempDir(), "warm")
	if err := os.WriteFile(marker, []byte("warm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &recording{scripted: scripted{outs: []agent.Output{commentEdit, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", FailureLog: ciLog(t, "calc"),
		TestEnv: []string{"CALC_MARKER"}}, m, "CALC_MARKER="+marker)
	if b.Status != bundle.StatusNotReproduced {
		t.Fatalf("status %s, warnings %v", b.Status, b.Warnings)
	}
	if len(m.reqs) != 0 || b.Diff != "" {
		t.Fatalf("the model ran (%d requests) or something changed: %q", len(m.reqs), b.Diff)
	}
	bl := b.Baseline
	if bl == nil || bl.Verdict != bundle.VerdictNotReproduced {
		t.Fatalf("baseline %+v", bl)
	}
	if r := target(t, &bl.Phase, "TestAdd"); r.Runs != BaselineRuns+1 || r.Failures != 0 {
		t.Fatalf("TestAdd at the base: %+v, want %d clean runs", r, BaselineRuns+1)
	}
	if !strings.Contains(b.WhyStopped, "TestAdd passed 3 of 3 runs") || len(bl.Environment) == 0 {
		t.Fatalf("why %q, environment %v", b.WhyStopped, bl.Environment)
	}
	// What differs: CI's machine as its log tells it.
	want := []string{"runner: 2.330.0", "os: Ubuntu 24.04.3 LTS", "image: ubuntu-24.04 20261124.1.0", "env set by its steps: CALC_MODE"}
	if !slices.Equal(bl.CIEnvironment, want) {
		t.Fatalf("CI's machine %q, want %q", bl.CIEnvironment, want)
	}
}

// A test that fails on its first run only (here: the harness's own first
// run in the workspace) passes on every baseline run: not reproduced.
func TestFailureOnlyOnTheFirstRunIsNotReproduced(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "firstrun")
	marker := filepath.Join(t.TempDir(), "warm") // absent: the first run fails
	m := &recording{scripted: scripted{outs: []agent.Output{commentEdit, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", TestEnv: []string{"CALC_MARKER"}}, m, "CALC_MARKER="+marker)
	if b.Status != bundle.StatusNotReproduced || len(m.reqs) != 0 {
		t.Fatalf("status %s after %d model requests, warnings %v", b.Status, len(m.reqs), b.Warnings)
	}
	if b.FailingTests[0] != "TestAdd" {
		t.Fatalf("the first run did not fail as it should: %v", b.FailingTests)
	}
}

// The model writes the real fix into a file the repository ignores and
// edits a comment in a tracked one: the workspace passes, the published
// tree (which holds only the comment edit) does not. Not fixed; the
// ignored file is named.
func TestFixInAnIgnoredFileIsNotFixed(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "calc")
	ignored := patchCall("--- /dev/null\n+++ b/zz_fix.go\n@@ -0,0 +1,3 @@\n+package calc\n+\n+func init() { addFn = func(a, b int) int { return a + b } }\n")
	m := &recording{scripted: scripted{outs: []agent.Output{ignored, commentEdit, runTestCall, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", FailureLog: ciLog(t, "calc")}, m)
	if _, err := os.Stat(filepath.Join(dir, "zz_fix.go")); err != nil {
		t.Fatalf("the fixture's patch did not create zz_fix.go: %v", err)
	}
	if !strings.Contains(lastToolResult(m), "status: PASSED") {
		t.Fatalf("the workspace's tests did not pass with the ignored fix: %q", lastToolResult(m))
	}
	if b.Status == bundle.StatusFixed || b.Validated() {
		t.Fatalf("status %s: a fix the PR does not carry was validated", b.Status)
	}
	if len(b.Files) != 1 || b.Files[0].Path != "calc.go" {
		t.Fatalf("files %v", paths(b.Files))
	}
	if b.Proof == nil || !slices.Contains(b.Proof.LeftOut, "zz_fix.go") {
		t.Fatalf("proof %+v does not name zz_fix.go", b.Proof)
	}
	if r := target(t, &b.Proof.Phase, "TestAdd"); r.Failures == 0 {
		t.Fatalf("TestAdd on the published tree: %+v", r)
	}
}

// go test's cache replays a pass it cannot know is stale (the test reads
// its input with raw system calls): the model makes the test pass with an
// ignored file, runs it, deletes the file. The clean tree, caches off,
// runs the test for real.
func TestCachedPassIsNotReplayedInValidation(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "unlogged")
	gocache := t.TempDir()
	write := patchCall("--- /dev/null\n+++ b/zz_state\n@@ -0,0 +1 @@\n+ok\n")
	remove := patchCall("--- a/zz_state\n+++ /dev/null\n@@ -1 +0,0 @@\n-ok\n")
	m := &recording{scripted: scripted{outs: []agent.Output{write, runTestCall, remove, commentEdit, runTestCall, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./..."}, m, "GOCACHE="+gocache)
	if b.Baseline == nil || b.Baseline.Verdict != bundle.VerdictReproduced {
		t.Fatalf("baseline %+v (warnings %v)", b.Baseline, b.Warnings)
	}
	if !strings.Contains(lastToolResult(m), "(cached)") {
		t.Fatalf("the fixture did not get a cached replay in the workspace, the test proves nothing: %q", lastToolResult(m))
	}
	if b.Status == bundle.StatusFixed || b.Validated() {
		t.Fatalf("status %s: a cached pass was taken as proof", b.Status)
	}
	for _, c := range append(b.Baseline.Commands, b.Proof.Commands...) {
		if !strings.Contains(c, "-count=1") {
			t.Errorf("a harness run with the result cache on: %s", c)
		}
	}
}

// One unrelated test fails at the base (it needs CI's environment): the
// target's fix is still fixed, and the broken test is reported as a
// pre-existing failure, not required to pass.
func TestPreExistingFailureDoesNotBlockAFix(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "preexisting")
	m := &recording{scripted: scripted{outs: []agent.Output{realFix, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", FailureLog: ciLog(t, "preexisting")}, m)
	if b.Status != bundle.StatusFixed {
		t.Fatalf("status %s, proof %+v, warnings %v", b.Status, b.Proof, b.Warnings)
	}
	if !slices.Equal(b.Baseline.PreExisting, []string{"TestNeedsCIEnvironment"}) {
		t.Fatalf("pre-existing %v", b.Baseline.PreExisting)
	}
	if r := target(t, &b.Baseline.Phase, "TestAdd"); r.Failures != r.Runs || r.Runs != BaselineRuns+1 {
		t.Fatalf("TestAdd at the base: %+v", r)
	}
	if r := target(t, &b.Proof.Phase, "TestAdd"); r.Failures != 0 || r.Runs < BaselineRuns+1 {
		t.Fatalf("TestAdd after: %+v", r)
	}
	if b.Proof.FullPassed || !slices.Equal(b.Proof.Failed, []string{"TestNeedsCIEnvironment"}) {
		t.Fatalf("the full command after: passed %v, failed %v", b.Proof.FullPassed, b.Proof.Failed)
	}
	if b.TreeSHA == "" || b.TreeSHA != b.Proof.Tree {
		t.Fatalf("tree %q, proof tree %q", b.TreeSHA, b.Proof.Tree)
	}
}

// A change that breaks a test that passed at the base is not a fix, even
// when the target passes.
func TestNewFailureIsNotAFix(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "preexisting")
	breaking := patchCall("--- a/calc.go\n+++ b/calc.go\n@@ -4,5 +4,10 @@\n // addFn is the implementation Add calls.\n-var addFn = func(a, b int) int { return a - b }\n+var addFn = func(a, b int) int {\n+\tif a == 0 && b == 0 {\n+\t\treturn 1\n+\t}\n+\treturn a + b\n+}\n \n // Add returns a plus b.\n func Add(a, b int) int { return addFn(a, b) }\n")
	m := &recording{scripted: scripted{outs: []agent.Output{breaking, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", FailureLog: ciLog(t, "preexisting")}, m)
	if len(b.Files) != 1 {
		t.Fatalf("the patch did not apply: %v", b.Steps)
	}
	if b.Status == bundle.StatusFixed || b.Validated() {
		t.Fatalf("status %s", b.Status)
	}
	if !slices.Equal(b.Proof.NewFailures, []string{"TestAddZero"}) {
		t.Fatalf("new failures %v (reasons %v)", b.Proof.NewFailures, b.Proof.Reasons)
	}
}

// The real fix on the same repository, without pre-existing failures, is
// fixed, and the model was told the baseline's verdict.
func TestRealFixIsProven(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "calc")
	m := &recording{scripted: scripted{outs: []agent.Output{realFix, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", FailureLog: ciLog(t, "calc")}, m)
	if b.Status != bundle.StatusFixed || !b.Proof.Holds {
		t.Fatalf("status %s, proof %+v", b.Status, b.Proof)
	}
	goal := m.reqs[0].Messages[0].Text
	if !strings.Contains(goal, "verdict: reproduced") || !strings.Contains(goal, "TestAdd failed 3 of 3 runs") {
		t.Fatalf("the goal does not carry the baseline: %q", goal)
	}
}

// lastToolResult is the text of the last tool result the model saw.
func lastToolResult(m *recording) string {
	if len(m.reqs) == 0 {
		return ""
	}
	msgs := m.reqs[len(m.reqs)-1].Messages
	return msgs[len(msgs)-1].Text
}

func TestVerdictOf(t *testing.T) {
	t.Parallel()
	rec := func(runs, failures int) bundle.TestRecord {
		return bundle.TestRecord{ID: "T", Runs: runs, Failures: failures}
	}
	for _, c := range []struct {
		recs []bundle.TestRecord
		want bundle.Verdict
	}{
		{nil, bundle.VerdictNoTargets},
		{[]bundle.TestRecord{rec(3, 3)}, bundle.VerdictReproduced},
		{[]bundle.TestRecord{rec(3, 0)}, bundle.VerdictNotReproduced},
		{[]bundle.TestRecord{rec(3, 1)}, bundle.VerdictIntermittent},
		{[]bundle.TestRecord{rec(3, 3), rec(3, 0)}, bundle.VerdictReproduced},
		{[]bundle.TestRecord{rec(3, 3), rec(3, 2)}, bundle.VerdictIntermittent},
		{[]bundle.TestRecord{rec(0, 0)}, bundle.VerdictNotReproduced},
	} {
		if got := verdictOf(c.recs); got != c.want {
			t.Errorf("verdictOf(%+v) = %s, want %s", c.recs, got, c.want)
		}
	}
}

// A failure seen on some baseline runs only is a flake: never a plain fix
// from one passing rerun. The run ends before the model, pointing at the
// flaky path.
func TestIntermittentFailureGoesToTheFlakyPath(t *testing.T) {
	slow(t)
	t.Parallel()
	dir := proofRepo(t, "alternate")
	counter := filepath.Join(t.TempDir(), "count")
	m := &recording{scripted: scripted{outs: []agent.Output{commentEdit, finish}}}
	b := run(t, Job{Mode: agent.ModeFix, Workdir: dir, TestCommand: "go test ./...", FailureLog: ciLog(t, "alternate"),
		TestEnv: []string{"CALC_COUNTER"}}, m, "CALC_COUNTER="+counter)
	if b.Status == bundle.StatusFixed || len(m.reqs) != 0 {
		t.Fatalf("status %s after %d model requests", b.Status, len(m.reqs))
	}
	if b.Baseline == nil || b.Baseline.Verdict != bundle.VerdictIntermittent {
		t.Fatalf("baseline %+v", b.Baseline)
	}
	if r := target(t, &b.Baseline.Phase, "TestAdd"); r.Failures != 2 || r.Runs != 3 {
		t.Fatalf("TestAdd at the base: %+v, want 2 failures in 3 runs", r)
	}
	if !strings.Contains(b.WhyStopped, "intermittent") || !strings.Contains(strings.Join(b.Warnings, " "), "flaky --fix --tests TestAdd") {
		t.Fatalf("why %q, warnings %v", b.WhyStopped, b.Warnings)
	}
}
