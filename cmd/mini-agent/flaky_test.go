package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"github.com/org/mini-agent/internal/flaky/flakytest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateFlaky = flag.Bool("update-flaky", false, "rewrite testdata/flaky/report.golden.json")

// TestFlakyHelp: the help page has the usage, a paragraph, two examples,
// and every flag listed once.
func TestFlakyHelp(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "flaky", "--help")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "Usage: mini-agent flaky --workdir DIR --test-command CMD") {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	_, ex, _ := strings.Cut(out, "\nExamples:\n")
	ex, _, _ = strings.Cut(ex, "\n\n")
	if n := len(strings.Split(strings.TrimRight(ex, "\n"), "\n")); n != 2 {
		t.Errorf("%d examples, want 2:\n%s", n, out)
	}
	for _, want := range []string{"--max-runs N", "--max-minutes M", "--tests IDS", "--json FILE", "--fix", "(required)", "3 the fix failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	c, _ := flakyCommand()
	fset := c.flagSet()
	seen := map[string]int{}
	for _, g := range c.groups {
		for _, n := range g.names {
			seen[n]++
			if fset.Lookup(n) == nil {
				t.Errorf("group %q lists %s, which is no flag", g.title, n)
			}
		}
	}
	fset.VisitAll(func(f *flag.Flag) {
		if seen[f.Name] != 1 {
			t.Errorf("flag --%s listed %d times", f.Name, seen[f.Name])
		}
	})
	if code, out, _ := run(t, "--help"); code != 0 || !strings.Contains(out, "mini-agent flaky") {
		t.Errorf("top-level help does not list flaky (exit %d)", code)
	}
}

// TestFlakyUsageErrors: each bad command line exits 2 with one line on
// stderr naming the flag, before any test runs.
func TestFlakyUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workdir", dir}, "--test-command is required"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--max-runs", "0"}, "--max-runs 0"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--max-runs", "-3"}, "--max-runs -3"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--max-minutes", "0"}, "--max-minutes 0"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--max-minutes", "NaN"}, "--max-minutes NaN"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--max-runs", "many"}, "--max-runs"},
		{[]string{"--workdir", filepath.Join(dir, "nope"), "--test-command", "go test ./..."}, "--workdir"},
		{[]string{"--workdir", dir, "--test-command", "go test 'unterminated"}, "--test-command"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--tests", "TestA;rm -rf /"}, "--tests"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--max-run", "3"}, "did you mean --max-runs"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", dir}, "unexpected arguments"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--price-in", "1"}, "--price-in and --price-out go together"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--json", filepath.Join(dir, "no", "r.json")}, "--json"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--json", dir}, "--json"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--fix", "--bundle", filepath.Join(dir, "no", "b.json")}, "--bundle"},
		{[]string{"--workdir", dir, "--test-command", "go test ./...", "--fix", "--provider", "script"}, "no script given"},
	} {
		code, out, errOut := run(t, append([]string{"flaky"}, c.args...)...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if code != 2 || out != "" || len(lines) != 1 || !strings.Contains(errOut, c.want) || !strings.HasPrefix(errOut, "mini-agent flaky: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestFlakyFailingJSONGolden runs the command on an always-failing module
// with a small budget and compares the JSON report with the golden file
// (seeds, which are random, are replaced by SEED).
func TestFlakyFailingJSONGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	dir := flakytest.CopyModule(t, filepath.Join("..", "..", "internal", "flakyrun", "testdata", "failing"))
	jsonPath := filepath.Join(t.TempDir(), "flaky.json")
	code, out, errOut := run(t, "flaky", "--workdir", dir, "--test-command", "go test ./...", "--max-runs", "4", "--json", jsonPath)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a failing test)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"failing TestSum: 4 of 4 runs failed", "the run budget (--max-runs) ended it", "0 flaky, 1 failing, 1 passing."} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(errOut, "flaky: run "); n != 4 {
		t.Errorf("%d progress lines on stderr, want 4:\n%s", n, errOut)
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, data)
	}
	got := regexp.MustCompile(`"\d{6,}"`).ReplaceAll(data, []byte(`"SEED"`))
	golden := filepath.Join("testdata", "flaky", "report.golden.json")
	if *updateFlaky {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("report differs from %s (run with -update-flaky to accept):\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
}

// TestFlakyPassingExitsZero: nothing flaky or failing is exit 0.
func TestFlakyPassingExitsZero(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	dir := flakytest.CopyModule(t, filepath.Join("..", "..", "internal", "flakyrun", "testdata", "passing"))
	code, out, errOut := run(t, "flaky", "--workdir", dir, "--test-command", "go test ./...", "--max-runs", "2")
	if code != 0 || !strings.Contains(out, "0 flaky, 0 failing, 2 passing.") {
		t.Errorf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// nochangeDiff edits a comment of the order fixture: no fix at all.
const nochangeDiff = `--- a/registry.go
+++ b/registry.go
@@ -1,4 +1,4 @@
-// Package registry keeps the names of registered plugins.
+// Package registry keeps the names of the registered plugins.
 package registry
 
 var plugins = map[string]bool{}
`

// TestFlakyCancelledExits130: a cancelled context is exit 130, not a
// usage error or "flaky".
func TestFlakyCancelledExits130(t *testing.T) {
	t.Parallel()
	dir := flakytest.CopyModule(t, filepath.Join("..", "..", "internal", "flakyrun", "testdata", "passing"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := Main(ctx, []string{"flaky", "--workdir", dir, "--test-command", "go test ./..."}, &out, &errb)
	if code != 130 || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 130 and no report", code, out.String(), errb.String())
	}
}

// TestFlakyFixOrderFixture: --fix on the order fixture with a scripted
// model. proper.diff (clean up the shared registry) is proven by the rerun
// bar: exit 0. forbidden.diff (t.Skip) is rejected by the new-skip check:
// exit 3, status rejected.
func TestFlakyFixOrderFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("stress-runs a real flaky module and runs the fix job")
	}
	t.Parallel()
	fixture := filepath.Join("..", "..", "internal", "flaky", "testdata", "fixtures", "order")
	for _, c := range []struct {
		name     string
		patches  []string // one per attempt
		code     int
		status   string
		check    string
		attempts int
		args     []string
	}{
		{"proper", []string{"proper.diff"}, 0, "proven", "", 1, nil},
		// A detection budget smaller than the bar: the bar still gets the
		// runs it needs (a budget of 12 would leave it unproven).
		{"proper-small-budget", []string{"proper.diff"}, 0, "proven", "", 1, []string{"--max-runs", "12"}},
		// A rejected diff goes back to the model once; a second rejection ends it.
		{"forbidden", []string{"forbidden.diff", "forbidden.diff"}, 3, "rejected", "new-skip", 2, nil},
		{"forbidden-then-proper", []string{"forbidden.diff", "proper.diff"}, 0, "proven", "", 2, nil},
		// A change that fixes nothing passes the harness's plain rerun
		// (declaration order) but not the bar's shuffled reruns.
		{"nochange", []string{"nochange.diff"}, 3, "failed-bar", "", 1, nil},
		// A model that refuses after a proper change proposes no fix: exit
		// 5, as fix and the action say a refusal.
		{"refused", []string{"proper.diff", "refusal"}, 5, "unproven", "", 1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := flakytest.CopyModule(t, fixture)
			flakytest.Commit(t, dir) // the fix job validates on a clean checkout of a commit
			var script strings.Builder
			for i, name := range c.patches {
				if name == "refusal" {
					continue
				}
				patch, err := os.ReadFile(filepath.Join(fixture, name))
				if name == "nochange.diff" {
					patch, err = []byte(nochangeDiff), nil
				}
				if err != nil {
					t.Fatal(err)
				}
				step, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"name": "apply_patch", "arguments": map[string]string{"patch": string(patch)}}}})
				script.Write(step)
				if i+1 < len(c.patches) && c.patches[i+1] == "refusal" {
					script.WriteString("\n" + `{"refusal":"I won't continue with this."}` + "\n")
					continue
				}
				script.WriteString("\n" + `{"message":"## Summary\nFixed the order dependence.\n\n## Root cause\nTestRegister leaves a plugin in the shared registry.\n\n## Assumptions\nnone"}` + "\n")
			}
			scriptPath := filepath.Join(t.TempDir(), "script.jsonl")
			if err := os.WriteFile(scriptPath, []byte(script.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			jsonPath := filepath.Join(t.TempDir(), "flaky.json")
			// --seed: the shuffled orders are the same every time, so the
			// verdict does not depend on luck (random orders call this test
			// "failing" once in 1,024 detections).
			code, out, errOut := run(t, append([]string{"flaky", "--workdir", dir, "--test-command", "go test ./...", "--fix",
				"--seed", "1", "--provider", "script", "--script", scriptPath, "--json", jsonPath}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
			data, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Tests []struct {
					ID, Verdict string
					Seeds       []string
				}
				Fix *struct {
					Status        string
					RunsAfter     int `json:"runs_after"`
					FailuresAfter int `json:"failures_after"`
					Need          int `json:"runs_needed"`
					Checks        []struct{ Name, Severity string }
				}
			}
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatal(err)
			}
			flakyFound := false
			for _, tr := range rep.Tests {
				if tr.ID == "TestStartsEmpty" && tr.Verdict == "flaky" && len(tr.Seeds) > 0 {
					flakyFound = true
				}
			}
			if !flakyFound {
				t.Errorf("TestStartsEmpty not flaky with seeds: %s", data)
			}
			if rep.Fix == nil || rep.Fix.Status != c.status {
				t.Fatalf("fix %+v, want status %s\n%s\nstderr:\n%s", rep.Fix, c.status, data, errOut)
			}
			if c.status == "proven" && (rep.Fix.RunsAfter < rep.Fix.Need || rep.Fix.FailuresAfter != 0 || rep.Fix.Need == 0) {
				t.Errorf("proven with %d runs after (need %d), %d failures", rep.Fix.RunsAfter, rep.Fix.Need, rep.Fix.FailuresAfter)
			}
			if c.name == "refused" && !strings.Contains(out, "the model refused: I won't continue with this") {
				t.Errorf("the summary does not say the model refused:\n%s", out)
			}
			if c.name == "proper-small-budget" && rep.Fix.Need <= 12 {
				t.Errorf("the bar needs %d runs; the case wants a bar above the detection's 12", rep.Fix.Need)
			}
			if c.check != "" {
				hit := false
				for _, ch := range rep.Fix.Checks {
					hit = hit || (ch.Name == c.check && ch.Severity == "reject")
				}
				if !hit {
					t.Errorf("checks %+v lack a rejecting %s", rep.Fix.Checks, c.check)
				}
				if !strings.Contains(out, c.check) {
					t.Errorf("summary does not name the check %s:\n%s", c.check, out)
				}
			}
			if n := strings.Count(errOut, "flaky: fix attempt "); n != c.attempts {
				t.Errorf("%d fix attempts, want %d\nstderr:\n%s", n, c.attempts, errOut)
			}
			if c.attempts == 2 {
				if data, err := os.ReadFile(filepath.Join(dir, "registry_test.go")); err != nil || bytes.Contains(data, []byte("t.Skip")) != (c.status == "rejected") {
					t.Errorf("after the second attempt registry_test.go holds t.Skip: %v (err %v)", bytes.Contains(data, []byte("t.Skip")), err)
				}
			}
			t.Logf("%s: %s", c.name, strings.TrimSpace(out))
		})
	}
}

// fixScript writes a scripted model's trajectory: per patch, one
// apply_patch call and the final message.
func fixScript(t *testing.T, patches ...string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range patches {
		step, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"name": "apply_patch", "arguments": map[string]string{"patch": p}}}})
		b.Write(step)
		b.WriteString("\n" + `{"message":"## Summary\nFixed the order dependence.\n\n## Root cause\nTestSetDefault leaves the package default changed.\n\n## Assumptions\nnone"}` + "\n")
	}
	if len(patches) == 0 {
		b.WriteString(`{"message":"## Summary\nNothing to do.\n\n## Root cause\nnone\n\n## Assumptions\nnone"}` + "\n")
	}
	path := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// nochangeFormatDiff edits a comment of the wholesuite fixture: no fix.
const nochangeFormatDiff = `--- a/format.go
+++ b/format.go
@@ -1,4 +1,4 @@
-// Package format formats numbers.
+// Package format formats integers.
 package format
 
 import "strconv"
`

// TestFlakyTestsWholeSuite: --tests names an order-dependent test of
// testdata/flaky/wholesuite (TestFormatDefault fails only after
// TestSetDefault changed the package default, which a shuffled order does
// about half the time). Alone it never fails, so the whole suite is
// examined and reported, with a note:
//   - detect: it is flaky (alone it would be passing): exit 1;
//   - fix: proper.diff (TestSetDefault restores the default) is proven by
//     a rerun bar on the whole suite: exit 0;
//   - nochange: a diff that fixes nothing fails that bar (a bar narrowed to
//     the test alone would call it proven): exit 3;
//   - unnamed: --fix --tests TestSetDefault, which never fails anywhere:
//     TestFormatDefault is flaky among the whole suite, reported but not
//     fixed, as it was not named: exit 1, no fix attempt.
func TestFlakyTestsWholeSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("stress-runs a real flaky module and runs the fix job")
	}
	t.Parallel()
	fixture := filepath.Join("testdata", "flaky", "wholesuite")
	proper, err := os.ReadFile(filepath.Join(fixture, "proper.diff"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		tests   string
		patches []string // nil: no --fix
		code    int
		status  string // the fix's; "" for none
		notes   []string
	}{
		{"detect", "TestFormatDefault", nil, 1, "",
			[]string{"TestFormatDefault never failed in ", " runs alone, only among the whole suite (an order dependence on the tests around it): the report is the whole suite's"}},
		{"fix", "TestFormatDefault", []string{string(proper)}, 0, "proven",
			[]string{"runs alone, only among the whole suite", "the report is the whole suite's, and the rerun bar of the fix runs the whole suite"}},
		{"nochange", "TestFormatDefault", []string{nochangeFormatDiff}, 3, "failed-bar", nil},
		{"unnamed", "TestSetDefault", []string{}, 1, "",
			[]string{"TestSetDefault never failed in ", " runs alone, nor among the whole suite: the report is the whole suite's",
				"--fix: none of the tests named in --tests is flaky; TestFormatDefault is, but it was not named: reported, not fixed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := flakytest.CopyModule(t, fixture)
			flakytest.Commit(t, dir) // the fix job validates on a clean checkout of a commit
			jsonPath := filepath.Join(t.TempDir(), "flaky.json")
			// --seed: reproducible orders, so the verdicts do not depend
			// on luck.
			args := []string{"flaky", "--workdir", dir, "--test-command", "go test ./...", "--tests", c.tests,
				"--seed", "1", "--max-runs", "16", "--json", jsonPath}
			if c.patches != nil {
				args = append(args, "--fix", "--provider", "script", "--script", fixScript(t, c.patches...))
			}
			code, out, errOut := run(t, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
			data, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Tests []struct {
					ID, Verdict string
					Seeds       []string
				}
				Notes []string
				Fix   *struct {
					Status        string
					RunsAfter     int `json:"runs_after"`
					FailuresAfter int `json:"failures_after"`
					Need          int `json:"runs_needed"`
				}
			}
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatal(err)
			}
			verdicts := map[string]string{}
			for _, tr := range rep.Tests {
				verdicts[tr.ID] = tr.Verdict
			}
			// The whole suite's report: both tests, TestFormatDefault flaky.
			if verdicts["TestFormatDefault"] != "flaky" || verdicts["TestSetDefault"] != "passing" {
				t.Errorf("verdicts %v: want TestFormatDefault flaky, TestSetDefault passing, from the whole suite\n%s", verdicts, data)
			}
			if !strings.Contains(errOut, "flaky: "+c.tests+" never failed alone; running the whole suite\n") {
				t.Errorf("stderr does not say the whole suite is run:\n%s", errOut)
			}
			notes := strings.Join(rep.Notes, "\n")
			for _, want := range c.notes {
				if !strings.Contains(notes, want) || !strings.Contains(out, want) {
					t.Errorf("notes (JSON and summary) lack %q:\n%s\nsummary:\n%s", want, notes, out)
				}
			}
			if c.patches == nil && strings.Contains(notes, "fix") {
				t.Errorf("notes speak of a fix without --fix:\n%s", notes)
			}
			switch {
			case c.status == "":
				if rep.Fix != nil || strings.Contains(errOut, "flaky: fix attempt ") {
					t.Errorf("fix %+v: want none attempted\nstderr:\n%s", rep.Fix, errOut)
				}
			case rep.Fix == nil || rep.Fix.Status != c.status:
				t.Fatalf("fix %+v, want status %s\n%s\nstderr:\n%s", rep.Fix, c.status, data, errOut)
			case c.status == "proven" && (rep.Fix.RunsAfter < rep.Fix.Need || rep.Fix.FailuresAfter != 0 || rep.Fix.Need == 0):
				t.Errorf("proven with %d runs after (need %d), %d failures", rep.Fix.RunsAfter, rep.Fix.Need, rep.Fix.FailuresAfter)
			case c.status == "failed-bar" && rep.Fix.FailuresAfter == 0:
				t.Errorf("failed-bar with no failure after the fix: %+v", rep.Fix)
			}
			if c.status != "" && !strings.Contains(errOut, "mini-agent flaky: fixing TestFormatDefault (") {
				t.Errorf("stderr does not name the fixed test:\n%s", errOut)
			}
			t.Logf("%s: %s", c.name, strings.TrimSpace(out))
		})
	}
}
