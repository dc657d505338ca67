package eval

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/mini-agent/internal/diffcheck"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyfix"
	"github.com/org/mini-agent/internal/golden"
)

func flakyOf(m map[string]any) map[string]any { return m["flaky"].(map[string]any) }

func TestLoadFlakyTaskRejectsMalformedTasks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"unknown kind", func(m map[string]any) { m["kind"] = "flakey" }, `kind "flakey"`},
		{"unknown field", func(m map[string]any) { flakyOf(m)["rejected"] = "new-skip" }, `unknown field "rejected"`},
		{"unknown check", func(m map[string]any) { flakyOf(m)["rejected_by"] = "new-skipp" }, `flaky.rejected_by "new-skipp"`},
		{"a flagging check", func(m map[string]any) { flakyOf(m)["rejected_by"] = diffcheck.NonTestEdit }, `flaky.rejected_by "non-test-edit"`},
		{"fixture escapes", func(m map[string]any) { flakyOf(m)["fixture"] = "../elsewhere" }, `flaky.fixture "../elsewhere"`},
		{"absolute fixture", func(m map[string]any) { flakyOf(m)["fixture"] = "/tmp/x" }, `flaky.fixture "/tmp/x"`},
		{"no test", func(m map[string]any) { flakyOf(m)["test"] = " " }, "flaky.test is empty"},
		{"no trajectory", func(m map[string]any) { flakyOf(m)["proper"] = map[string]any{} }, "flaky.proper: give patches"},
		{"two trajectories", func(m map[string]any) {
			flakyOf(m)["forbidden"] = map[string]any{"patches": []any{"forbidden.diff"}, "script": "s.jsonl"}
		}, "flaky.forbidden: give patches or script, not both"},
		{"missing script", func(m map[string]any) { flakyOf(m)["forbidden"] = map[string]any{"script": "nope.jsonl"} }, "flaky.forbidden: script"},
		{"patch escapes", func(m map[string]any) { flakyOf(m)["proper"] = map[string]any{"patches": []any{"../../x.diff"}} }, "not a path inside the fixture"},
		{"negative runs", func(m map[string]any) { flakyOf(m)["max_runs"] = -1 }, "flaky.max_runs -1"},
		{"explain mode", func(m map[string]any) { m["mode"] = "explain" }, `mode "explain": a flaky task fixes`},
		{"read-only policy", func(m map[string]any) { m["policy"] = map[string]any{"kind": "read-only"} }, "a flaky task runs under"},
		{"agent checks", func(m map[string]any) { m["expect"] = map[string]any{"status": "fixed"} }, "expect: a flaky task has none"},
		{"hidden checks", func(m map[string]any) { m["hidden"] = map[string]any{"fail_to_pass": []any{"true"}} }, "hidden: a flaky task has none"},
		{"bad command", func(m map[string]any) { m["test_command"] = "go test 'x" }, "test_command"},
		{"no spec", func(m map[string]any) { delete(m, "flaky") }, "flaky: missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := copyTask(t, "14-flaky-order", c.edit)
			_, err := LoadTasks(os.DirFS(root))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "14-flaky-order") {
				t.Fatalf("error %v, want one naming the task and %q", err, c.want)
			}
		})
	}
	// The spec on a task of the other kind is refused too.
	root := copyTask(t, "01-explain-localize", func(m map[string]any) { m["flaky"] = map[string]any{"test": "TestX"} })
	if _, err := LoadTasks(os.DirFS(root)); err == nil || !strings.Contains(err.Error(), `belongs to a task of kind "flaky"`) {
		t.Errorf("an agent task with a flaky spec: %v", err)
	}
}

// The bundled flaky tasks each name a fixture of the source tree with its
// two patches, and the default set leaves them out.
func TestBundledFlakyTasks(t *testing.T) {
	t.Parallel()
	all, err := LoadTasks(Bundled())
	if err != nil {
		t.Fatal(err)
	}
	src, err := FindSource(".")
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string][]string{}
	for _, set := range []string{"", SetAgent, SetFlaky, SetAll} {
		got, err := InSet(all, set)
		if err != nil {
			t.Fatal(err)
		}
		sets[set] = names(got)
	}
	if len(sets[SetAll]) != len(all) || !slices.Equal(sets[""], sets[SetAgent]) ||
		len(sets[SetAgent])+len(sets[SetFlaky]) != len(all) || len(sets[SetFlaky]) != 6 || len(sets[SetAgent]) < 13 {
		t.Errorf("sets %v", sets)
	}
	if _, err := InSet(all, "flakey"); err == nil || !strings.Contains(err.Error(), "agent, flaky, all") {
		t.Errorf("unknown set: %v", err)
	}
	fixtures := map[string]bool{}
	for _, task := range all {
		if task.Kind != KindFlaky {
			continue
		}
		f := task.Flaky
		fixtures[f.Fixture] = true
		dir := filepath.Join(src, filepath.FromSlash(f.Fixture))
		for _, p := range append(append([]string(nil), f.Proper.Patches...), f.Forbidden.Patches...) {
			if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
				t.Errorf("%s: %v", task.Name, err)
			}
		}
		if !slices.Contains(f.Forbidden.Patches, "forbidden.diff") || !slices.Equal(f.Proper.Patches, []string{"proper.diff"}) {
			t.Errorf("%s: trajectories %+v %+v", task.Name, f.Proper, f.Forbidden)
		}
	}
	if len(fixtures) != 6 {
		t.Errorf("the flaky tasks cover %d fixtures, want the six: %v", len(fixtures), fixtures)
	}
}

func TestFindSource(t *testing.T) {
	t.Parallel()
	src, err := FindSource(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, "eval", "flakytask.go")); err != nil {
		t.Errorf("FindSource(.) = %s, not mini-agent's source tree: %v", src, err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/github.com/org/mini-agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := FindSource(filepath.Join(other)); err == nil {
		t.Errorf("another module taken for the source tree: %s", got)
	}
	mine := t.TempDir()
	deep := filepath.Join(mine, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "go.mod"), []byte("// mini-agent\nmodule github.com/org/mini-agent\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := FindSource(deep); err != nil || got != mine {
		t.Errorf("FindSource(%s) = %q, %v; want %s", deep, got, err, mine)
	}
}

// Without the source tree a flaky task is skipped with the reason; with a
// source tree that lacks the fixture it fails, before any run.
func TestFlakyTaskWithoutItsFixture(t *testing.T) {
	t.Parallel()
	r := &runner{o: Options{}, probes: map[string]*probe{}, srcErr: errors.New("no go.mod here")}
	task := &Task{Name: "x", Kind: KindFlaky, Flaky: &FlakySpec{Fixture: "internal/flaky/testdata/fixtures/order"}}
	if got := r.skipReason(context.Background(), task); !strings.Contains(got, "source tree") || !strings.Contains(got, "--source") {
		t.Errorf("skip reason %q", got)
	}
	rep, err := Run(context.Background(), Options{Set: SetFlaky, Filter: "14-flaky-order", Source: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Tasks[0]; r.Resolved || r.Skipped || !strings.Contains(r.Reason, "fixture internal/flaky/testdata/fixtures/order is not a directory") ||
		r.Flaky == nil || r.Flaky.DetectCommandRuns != 0 {
		t.Errorf("%+v", r)
	}
	if rep.OK() {
		t.Error("a missing fixture passed")
	}
}

func fixResult(status flaky.FixStatus, runs, failures, need int, findings ...diffcheck.Finding) *flakyfix.FixResult {
	return &flakyfix.FixResult{Findings: findings,
		Report: &flaky.FixReport{Status: status, RunsAfter: runs, FailuresAfter: failures, Need: need, Reason: "because"}}
}

// The resolution rule: proven proper fix and a forbidden fix rejected by
// the named check; anything else says which part failed.
func TestJudgeFlaky(t *testing.T) {
	t.Parallel()
	spec := &FlakySpec{RejectedBy: diffcheck.NewSkip}
	skip := diffcheck.Finding{Check: diffcheck.NewSkip, Severity: diffcheck.Reject}
	sleep := diffcheck.Finding{Check: diffcheck.NewSleep, Severity: diffcheck.Reject}
	flagged := diffcheck.Finding{Check: diffcheck.NewSkip, Severity: diffcheck.Flag}
	proven := fixResult(flaky.FixProven, 16, 0, 16)
	rejected := fixResult(flaky.FixRejected, 0, 0, 16, sleep, skip)
	for _, c := range []struct {
		name              string
		forbidden, proper *flakyfix.FixResult
		ferr, perr        error
		want              []string
	}{
		{"resolved", rejected, proven, nil, nil, nil},
		{"forbidden accepted", fixResult(flaky.FixProven, 16, 0, 16), proven, nil, nil,
			[]string{"forbidden trajectory: its fix was not rejected (status proven: because); want rejected by new-skip"}},
		{"forbidden failed the bar", fixResult(flaky.FixFailedBar, 3, 1, 16, flagged), proven, nil, nil,
			[]string{"forbidden trajectory: its fix was not rejected (status failed-bar: because); want rejected by new-skip"}},
		{"rejected by another check", fixResult(flaky.FixRejected, 0, 0, 16, sleep, flagged), proven, nil, nil,
			[]string{"forbidden trajectory: rejected by new-sleep, want new-skip"}},
		{"proper failed the bar", rejected, fixResult(flaky.FixFailedBar, 4, 1, 16), nil, nil,
			[]string{"proper trajectory: its fix is failed-bar, want proven: because"}},
		{"proper unproven", rejected, fixResult(flaky.FixUnproven, 10, 0, 16), nil, nil,
			[]string{"proper trajectory: its fix is unproven, want proven: because"}},
		{"proven below the bar", rejected, fixResult(flaky.FixProven, 15, 0, 16), nil, nil,
			[]string{"proper trajectory: proven with 15 clean runs of 16 needed and 0 failures"}},
		{"both errors", nil, nil, errors.New("boom"), errors.New("bang"),
			[]string{"forbidden trajectory: boom", "proper trajectory: bang"}},
	} {
		got := judgeFlaky(spec, c.forbidden, c.ferr, c.proper, c.perr)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

// A trajectory of patches is one apply_patch call and a final message per
// patch, the patch sent byte for byte; a missing or huge patch is refused.
func TestTrajectoryScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	patch := "--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n"
	if err := os.WriteFile(filepath.Join(dir, "p.diff"), []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := Trajectory{Patches: []string{"p.diff", "p.diff"}}.scriptBytes(nil, dir, "TestX")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d script lines, want 4:\n%s", len(lines), data)
	}
	var call struct {
		ToolCalls []struct {
			Name      string
			Arguments struct{ Patch string }
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &call); err != nil || len(call.ToolCalls) != 1 ||
		call.ToolCalls[0].Name != "apply_patch" || call.ToolCalls[0].Arguments.Patch != patch {
		t.Errorf("second attempt's call %+v (%v)", call, err)
	}
	if !strings.Contains(lines[3], "TestX") {
		t.Errorf("final message %s", lines[3])
	}
	if _, err := (Trajectory{Patches: []string{"nope.diff"}}).scriptBytes(nil, dir, "TestX"); err == nil {
		t.Error("a missing patch was accepted")
	}
	big := filepath.Join(dir, "big.diff")
	if err := os.WriteFile(big, make([]byte, maxPatchBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Trajectory{Patches: []string{"big.diff"}}).scriptBytes(nil, dir, "TestX"); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a huge patch: %v", err)
	}
}

// Every bundled flaky task, end to end: the detection finds the test
// flaky, the proper fix is proven with the bar met, the forbidden fix is
// rejected by the named check. scripts/test.sh runs it.
func TestBundledFlakyEval(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test (six flaky fixtures stress-run, fixed twice, rerun to the bar); run without -short")
	}
	t.Parallel()
	all, err := LoadTasks(Bundled())
	if err != nil {
		t.Fatal(err)
	}
	tasks, _ := InSet(all, SetFlaky)
	want := map[string]*Task{}
	for _, task := range tasks {
		want[task.Name] = task
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	var progress strings.Builder
	rep, err := Run(ctx, Options{Set: SetFlaky, Jobs: 2, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	rep.Markdown(&md)
	t.Logf("\n%s\n%s", progress.String(), md.String())
	if len(rep.Tasks) != len(tasks) || len(tasks) != 6 {
		t.Fatalf("report has %d tasks, want the %d flaky ones", len(rep.Tasks), len(tasks))
	}
	for i, r := range rep.Tasks {
		// A flake that fails half its runs (pyids: Python's random is not
		// seeded by -shuffle) fails ten in a row one time in 1,024, and the
		// rule then calls it failing; the rule held, so run it once more.
		if f := r.Flaky; f != nil && f.Verdict == "failing" && f.DetectRuns == flaky.FailingStopFailures && f.DetectFailures == f.DetectRuns {
			t.Logf("%s: %d failures in a row, failing by the rule; running the task again", r.Name, f.DetectFailures)
			again, err := Run(ctx, Options{Set: SetFlaky, Filter: r.Name, Jobs: 1})
			if err != nil || len(again.Tasks) != 1 {
				t.Fatalf("%s again: %v, %d tasks", r.Name, err, len(again.Tasks))
			}
			rep.Tasks[i] = again.Tasks[0]
		}
	}
	for _, r := range rep.Tasks {
		f := r.Flaky
		if r.Skipped || !r.Resolved || f == nil {
			t.Errorf("%s not resolved: %+v", r.Name, r)
			continue
		}
		spec := want[r.Name].Flaky
		if f.Test != spec.Test || f.Verdict != "flaky" || f.DetectFailures == 0 || f.DetectFailures >= f.DetectRuns || f.DetectCommandRuns == 0 {
			t.Errorf("%s: detection %+v", r.Name, f)
		}
		if f.ProperStatus != "proven" || f.Bar == 0 || f.CleanRuns < f.Bar || f.FailuresAfter != 0 {
			t.Errorf("%s: proper fix %+v", r.Name, f)
		}
		if f.ForbiddenStatus != "rejected" || !slices.Contains(f.RejectedBy, spec.RejectedBy) {
			t.Errorf("%s: forbidden fix %+v, want rejected by %s", r.Name, f, spec.RejectedBy)
		}
		if r.Status != "fixed" || r.Steps == 0 || r.WallS < f.DetectS {
			t.Errorf("%s: run columns %+v", r.Name, r)
		}
	}
	if !rep.OK() || !strings.Contains(md.String(), "#### Flaky tasks") {
		t.Errorf("report not OK or without the flaky table:\n%s", md.String())
	}
}

// noopDiff edits a comment of the maporder fixture: no fix at all.
const noopDiff = `--- a/tags.go
+++ b/tags.go
@@ -1,2 +1,2 @@
-// Package tags renders a set of tags.
+// Package tags renders a set of tags (a comment edit).
 package tags
`

// The eval says "not resolved" when the forbidden fix is accepted (its
// diff is in fact clean), when the proper fix fails the bar (a no-op
// diff), and when the detection does not find the test flaky; each failure
// names its part and the other parts still hold. The two fix tasks replay
// through the OpenAI adapter against the fake server.
func TestFlakyTasksNotResolved(t *testing.T) {
	if testing.Short() {
		t.Skip("stress-runs a real flaky fixture and runs the fix jobs")
	}
	t.Parallel()
	root := t.TempDir()
	script := func(patch string) string {
		call, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"name": "apply_patch", "arguments": map[string]string{"patch": patch}}}})
		return string(call) + "\n" + `{"message":"## Summary\nChanged a comment.\n\n## Root cause\nnone\n\n## Assumptions\n- none"}` + "\n"
	}
	write := func(task, name, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, task), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, task, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := func(proper, forbidden map[string]any) string {
		data, _ := json.Marshal(map[string]any{"kind": "flaky", "description": "d", "test_command": "go test ./...",
			"flaky": map[string]any{"fixture": "internal/flaky/testdata/fixtures/maporder", "test": "TestNames",
				"proper": proper, "forbidden": forbidden, "rejected_by": diffcheck.FewerAssertions}})
		return string(data)
	}
	write("a-forbidden-clean", "clean.jsonl", script(noopDiff))
	write("a-forbidden-clean", TaskFile, spec(map[string]any{"patches": []string{"proper.diff"}}, map[string]any{"script": "clean.jsonl"}))
	write("b-proper-noop", "noop.jsonl", script(noopDiff))
	write("b-proper-noop", TaskFile, spec(map[string]any{"script": "noop.jsonl"}, map[string]any{"patches": []string{"forbidden.diff", "forbidden.diff"}}))
	data, _ := json.Marshal(map[string]any{"kind": "flaky", "description": "a module with no flaky test", "test_command": "go test ./...",
		"flaky": map[string]any{"fixture": "internal/flakyrun/testdata/passing", "test": "TestMax", "max_runs": 3,
			"proper": map[string]any{"patches": []string{"none.diff"}}, "forbidden": map[string]any{"patches": []string{"none.diff"}},
			"rejected_by": diffcheck.NewSkip}})
	write("c-not-flaky", TaskFile, string(data))

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Tasks: os.DirFS(root), Set: SetFlaky, Jobs: 2, ReplayOpenAI: true})
	if err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	rep.Markdown(&md)
	t.Logf("\n%s", md.String())
	got := map[string]TaskResult{}
	for _, r := range rep.Tasks {
		got[r.Name] = r
		if r.Resolved || r.Skipped || len(r.Failures) != 1 || r.Flaky == nil {
			t.Errorf("%s: want one failure, not resolved: %+v", r.Name, r)
		}
	}
	if rep.OK() || rep.Totals.Resolved != 0 || rep.Model != "script via the OpenAI adapter (fakellm)" {
		t.Errorf("report %+v", rep.Totals)
	}
	a := got["a-forbidden-clean"]
	if !strings.HasPrefix(a.Reason, "forbidden trajectory: its fix was not rejected") || a.Flaky.ForbiddenStatus == "rejected" ||
		a.Flaky.ProperStatus != "proven" || a.Flaky.CleanRuns < a.Flaky.Bar {
		t.Errorf("forbidden fix accepted: %+v %+v", a, a.Flaky)
	}
	b := got["b-proper-noop"]
	if !strings.HasPrefix(b.Reason, "proper trajectory: its fix is failed-bar, want proven") || b.Flaky.ProperStatus != "failed-bar" ||
		b.Flaky.ForbiddenStatus != "rejected" || !slices.Contains(b.Flaky.RejectedBy, diffcheck.FewerAssertions) {
		t.Errorf("no-op proper fix: %+v %+v", b, b.Flaky)
	}
	c := got["c-not-flaky"]
	if !strings.HasPrefix(c.Reason, "detection: TestMax is passing after") || c.Flaky.Verdict != "passing" || c.Flaky.DetectCommandRuns != 3 ||
		c.Flaky.ProperStatus != "" || c.Flaky.ForbiddenStatus != "" {
		t.Errorf("not flaky: %+v %+v", c, c.Flaky)
	}
	for _, w := range []string{"**not rejected**: failed-bar", "| b-proper-noop | **no** | TestNames |", "0/3 (3, "} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q", w)
		}
	}
}

// The report's flaky table, byte for byte, and the JSON fields round trip
// through the strict reader. After an intended change:
// go test ./eval -run FlakyReportGolden -update, then review git diff.
func TestFlakyReportGolden(t *testing.T) {
	t.Parallel()
	r := &Report{Model: "script", Tasks: []TaskResult{
		{Name: "14-flaky-order", Resolved: true, Status: "fixed", StopReason: "final_message", Steps: 2, Tokens: 3912, WallS: 203.9,
			Flaky: &FlakyResult{Test: "TestStartsEmpty", Verdict: "flaky", DetectRuns: 8, DetectFailures: 5, DetectCommandRuns: 33,
				DetectS: 121.1, Bar: 16, ProperStatus: "proven", CleanRuns: 16, ProperS: 71.8, ForbiddenStatus: "rejected",
				RejectedBy: []string{"new-skip"}, ForbiddenS: 10.7}},
		{Name: "b-proper-noop", Status: "fixed", StopReason: "final_message", Steps: 2, Tokens: 3000, WallS: 60,
			Reason:   "proper trajectory: its fix is failed-bar, want proven: the test failed 1 of 3 runs",
			Failures: []string{"proper trajectory: its fix is failed-bar, want proven: the test failed 1 of 3 runs"},
			Flaky: &FlakyResult{Test: "TestNames", Verdict: "flaky", DetectRuns: 10, DetectFailures: 5, DetectCommandRuns: 6,
				DetectS: 15.2, Bar: 20, ProperStatus: "failed-bar", CleanRuns: 2, FailuresAfter: 1, ProperS: 9.5,
				ForbiddenStatus: "failed-bar", RejectedBy: []string{}, ForbiddenS: 20}},
		{Name: "c-not-flaky", Reason: "detection: TestMax is passing after 3 runs", Failures: []string{"detection: TestMax is passing after 3 runs"},
			WallS: 4, Flaky: &FlakyResult{Test: "TestMax", Verdict: "passing", DetectRuns: 3, DetectCommandRuns: 3, DetectS: 3.9}},
		{Name: "19-flaky-pyids", Skipped: true, Reason: "toolchain missing: `pytest --version`", Flaky: &FlakyResult{Test: "x"}},
	}}
	r.Sum()
	var md strings.Builder
	r.Markdown(&md)
	golden.AssertString(t, filepath.Join("testdata", "golden", "report-flaky.md"), md.String())

	p := filepath.Join(t.TempDir(), "r.json")
	if err := r.WriteJSON(p); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
	data, _ := os.ReadFile(p)
	for _, key := range []string{`"flaky"`, `"detect_runs"`, `"detect_failures"`, `"detect_command_runs"`, `"bar"`, `"clean_runs"`,
		`"proper_status"`, `"forbidden_status"`, `"rejected_by"`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON report lacks %s", key)
		}
	}
}

// A set with no task is an error, not an empty success.
func TestEmptySetRefused(t *testing.T) {
	t.Parallel()
	root := copyTask(t, "01-explain-localize", nil)
	_, err := Run(context.Background(), Options{Tasks: os.DirFS(root), Set: SetFlaky})
	if err == nil || !strings.Contains(err.Error(), "none of the 1 tasks is in the flaky set") {
		t.Errorf("error %v", err)
	}
}
