package flakyrun

import (
	"context"
	"errors"
	"github.com/org/mini-agent/internal/flaky/flakytest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/testcmd"
)

// flakyFixture is one of internal/flaky's real flaky modules.
func flakyFixture(t *testing.T, name string) string {
	return flakytest.CopyModule(t, filepath.Join("..", "flaky", "testdata", "fixtures", name))
}

func mustParse(t *testing.T, line string) *testcmd.Command {
	t.Helper()
	c, err := testcmd.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func find(res *Result, id string) *flaky.Evidence {
	for _, e := range res.Tests {
		if e.ID == id {
			return e
		}
	}
	return nil
}

// TestDetectGoFixturesFlaky finds each Go fixture's flaky test within the
// default budgets, from the whole suite (no --tests).
func TestDetectGoFixturesFlaky(t *testing.T) {
	if testing.Short() {
		t.Skip("stress-runs real flaky modules with go test")
	}
	cases := []struct {
		fixture, test string
		race          bool // a race report is expected
	}{
		{"order", "TestStartsEmpty", false},
		{"race", "TestResult", true},
		{"sleepwait", "TestGet", false},
		{"maporder", "TestNames", false},
		{"randjitter", "TestDelay", false},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			dir := flakyFixture(t, tc.fixture)
			// Seed: reproducible orders (the order fixture's verdict does
			// not depend on luck; map order and timing still vary).
			res, err := Detect(ctx, Config{Workdir: dir, Command: mustParse(t, "go test ./..."), Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			e := find(res, tc.test)
			if e == nil {
				t.Fatalf("%s not in the result: %+v", tc.test, res.Tests)
			}
			v, err := e.Verdict()
			if err != nil || v != flaky.VerdictFlaky {
				t.Fatalf("%s: verdict %s (%v) after %d runs, %d failures, want flaky; stop %s", tc.test, v, err, e.Runs, e.Failures, res.Stop)
			}
			if len(res.Runs) > DefaultMaxRuns {
				t.Errorf("%d command runs, over the default budget %d", len(res.Runs), DefaultMaxRuns)
			}
			if len(e.Messages) == 0 {
				t.Errorf("%s: no failure message kept", tc.test)
			}
			if len(e.Seeds) == 0 {
				t.Errorf("%s: no -shuffle seed recorded for a failing run", tc.test)
			}
			for _, s := range e.Seeds {
				if _, err := strconv.ParseInt(s, 10, 64); err != nil {
					t.Errorf("seed %q is not a decimal seed", s)
				}
			}
			// A race report is demanded when a -race run saw the test fail:
			// the race fixture fails only when the race happens, and -race
			// is one round's stressor of four, so a run can end without one.
			raceFailed := false
			for _, r := range res.Runs {
				raceFailed = raceFailed || (strings.Contains(r.Flags, "-race") && slices.Contains(r.Failed, tc.test))
			}
			if tc.race && raceFailed && len(e.Races) == 0 {
				t.Errorf("%s: failed under -race, no race report", tc.test)
			}
			if tc.race && !raceFailed {
				t.Logf("%s: no -race run saw it fail, so no race report was due", tc.test)
			}
			t.Logf("%s/%s: %d failures in %d runs, %d command runs in %v, stopped by %s; seeds %v",
				tc.fixture, tc.test, e.Failures, e.Runs, len(res.Runs), res.Duration.Round(time.Millisecond), res.Stop, e.Seeds)
		})
	}
}

// TestDetectPassingAndFailing: a module whose tests always pass reports
// passing; an always-failing test is failing, its passing sibling passing.
func TestDetectPassingAndFailing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Detect(ctx, Config{Workdir: flakytest.CopyModule(t, "testdata/passing"), Command: mustParse(t, "go test ./..."), MinRuns: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"TestMax", "TestMaxNegative"} {
		e := find(res, id)
		if e == nil {
			t.Fatalf("%s missing: %+v", id, res.Tests)
		}
		if v, _ := e.Verdict(); v != flaky.VerdictPassing || e.Runs < 8 {
			t.Errorf("%s: %s after %d runs, want passing after at least 8", id, v, e.Runs)
		}
	}
	if res.Stop != StopEvidence {
		t.Errorf("stopped by %s, want evidence", res.Stop)
	}

	res, err = Detect(ctx, Config{Workdir: flakytest.CopyModule(t, "testdata/failing"), Command: mustParse(t, "go test ./..."), MinRuns: 8})
	if err != nil {
		t.Fatal(err)
	}
	e := find(res, "TestSum")
	if v, _ := e.Verdict(); e == nil || v != flaky.VerdictFailing {
		t.Fatalf("TestSum: %+v, want failing", e)
	}
	if e.Failures < flaky.FailingStopFailures || !strings.Contains(e.Messages[0], "Sum(1, 2, 3) = 5, want 6") {
		t.Errorf("TestSum: %d failures, messages %q", e.Failures, e.Messages)
	}
	if v, _ := find(res, "TestSumEmpty").Verdict(); v != flaky.VerdictPassing {
		t.Errorf("TestSumEmpty: %s, want passing", v)
	}
	if len(res.Tests) != 2 {
		t.Errorf("tests %v, want exactly TestSum and TestSumEmpty", res.Tests)
	}
}

// TestDetectSelectedTests narrows to --tests and refuses a name that never runs.
func TestDetectSelectedTests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := flakytest.CopyModule(t, "testdata/failing")
	res, err := Detect(ctx, Config{Workdir: dir, Command: mustParse(t, "go test ./..."), Tests: []string{"TestSumEmpty"}, MinRuns: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tests) != 1 || res.Tests[0].ID != "TestSumEmpty" {
		t.Fatalf("tests %v, want TestSumEmpty only", res.Tests)
	}
	_, err = Detect(ctx, Config{Workdir: dir, Command: mustParse(t, "go test ./..."), Tests: []string{"TestNope"}, MaxRuns: 2})
	if err == nil || !strings.Contains(err.Error(), "TestNope") {
		t.Errorf("a test that never runs: err = %v, want one naming it", err)
	}
	_, err = Detect(ctx, Config{Workdir: dir, Command: mustParse(t, "go test ./..."), Tests: []string{"TestSum; rm -rf /"}})
	if !errors.Is(err, testcmd.ErrNarrowing) {
		t.Errorf("a hostile name: err = %v, want ErrNarrowing", err)
	}
}

// TestDetectBudget: --max-runs 3 stops after three command runs and says so.
func TestDetectBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Detect(ctx, Config{Workdir: flakytest.CopyModule(t, "testdata/passing"), Command: mustParse(t, "go test ./..."), MaxRuns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 || res.Stop != StopMaxRuns {
		t.Errorf("%d runs, stopped by %s; want 3, max-runs", len(res.Runs), res.Stop)
	}
	rep, err := NewReport("go test ./...", res)
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Summary(); !strings.Contains(s, "--max-runs") {
		t.Errorf("summary does not say the run budget ended it:\n%s", s)
	}
	// Every round shuffles; the rotation starts with -race.
	if !strings.Contains(res.Runs[0].Flags, "-race") || !strings.Contains(res.Runs[1].Flags, "-shuffle=on") || strings.Contains(res.Runs[1].Flags, "-race") {
		t.Errorf("flags %q, %q", res.Runs[0].Flags, res.Runs[1].Flags)
	}
	if len(res.Runs[0].Seeds) != 1 {
		t.Errorf("run 1 seeds %v, want one", res.Runs[0].Seeds)
	}
}

// TestDetectPytestFixture: pytest -v names each test's result, so the
// flaky test and its passing sibling get their own verdicts; the flaky
// one's evidence stops at the first run where it is enough (5 failures and
// a pass, which may come after more than 5 failures: the fixture fails half
// its runs, so the first pass comes after the sixth run one time in 64).
func TestDetectPytestFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pytest")
	}
	if _, err := exec.LookPath("pytest"); err != nil {
		t.Fatalf("pytest is needed (Debian/Ubuntu: apt-get install python3-pytest): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	detect := func() (*Result, *flaky.Evidence) {
		res, err := Detect(ctx, Config{Workdir: flakyFixture(t, "pyids"), Command: mustParse(t, "pytest -v -p no:cacheprovider"),
			Env: append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")})
		if err != nil {
			t.Fatal(err)
		}
		e := find(res, "test_ids.py::test_two_ids_differ")
		if e == nil {
			t.Fatalf("flaky test missing: %+v", res.Tests)
		}
		return res, e
	}
	res, e := detect()
	if v, _ := e.Verdict(); v == flaky.VerdictFailing && e.Failures == flaky.FailingStopFailures && e.Runs == e.Failures {
		// Ten failures in a row of a 50% flake (one time in 1,024) is
		// "failing" by the rule; the rule held, so look once more.
		t.Logf("pyids: %d failures in a row, called failing by the rule; running the detection again", e.Failures)
		res, e = detect()
	}
	if v, _ := e.Verdict(); v != flaky.VerdictFlaky || !stoppedWhenEnough(e) {
		t.Errorf("test_two_ids_differ: %s with %d failures in %d runs (failed runs %v); want flaky, stopped at the first run with %d failures and a pass",
			v, e.Failures, e.Runs, e.FailedRuns, flaky.EarlyStopFailures)
	}
	if len(e.Messages) == 0 || !strings.Contains(e.Messages[0], "both requests got") {
		t.Errorf("messages %q", e.Messages)
	}
	if v, _ := find(res, "test_ids.py::test_prefix").Verdict(); v != flaky.VerdictPassing {
		t.Errorf("test_prefix: %s, want passing", v)
	}
	t.Logf("pyids: %d failures in %d runs, %d command runs in %v", e.Failures, e.Runs, len(res.Runs), res.Duration.Round(time.Millisecond))
}

// stoppedWhenEnough replays e's runs: the evidence must be enough after its
// last run and not after any earlier one.
func stoppedWhenEnough(e *flaky.Evidence) bool {
	failed := make(map[int]bool, len(e.FailedRuns))
	for _, r := range e.FailedRuns {
		failed[r] = true
	}
	var replay flaky.Evidence
	for r := 1; r <= e.Runs; r++ {
		replay.Add(flaky.Outcome{Failed: failed[r]})
		if replay.Enough() != (r == e.Runs) {
			return false
		}
	}
	return e.Runs > 0
}

// TestDetectSuiteOutcome: a runner whose output does not name each test's
// result counts each run as one outcome of (suite), and says so.
func TestDetectSuiteOutcome(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Shell syntax: no -json, no narrowing, no per-test output.
	res, err := Detect(ctx, Config{Workdir: flakytest.CopyModule(t, "testdata/failing"), Command: mustParse(t, "go test ./... >/dev/null 2>&1")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tests) != 1 || res.Tests[0].ID != SuiteID {
		t.Fatalf("tests %+v, want (suite) only", res.Tests)
	}
	if v, _ := res.Tests[0].Verdict(); v != flaky.VerdictFailing || len(res.Runs) != flaky.FailingStopFailures {
		t.Errorf("(suite): %s after %d runs, want failing after %d", v, len(res.Runs), flaky.FailingStopFailures)
	}
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "one outcome") {
		t.Errorf("notes %q do not say the runs count as one outcome", res.Notes)
	}
}

// TestRepeatsInOneProcessAreNotIndependent: under -count=3 the order
// fixture's TestStartsEmpty runs three times in one test process, after
// TestRegister filled the shared registry. The repeats share the process's
// state, so they are not three samples: declaration order makes the first
// execution pass and the two repeats fail, which is one pass and one
// failure (flaky, seen both ways in one run), not one pass and two
// failures. A test that fails every execution counts one failure per run.
func TestRepeatsInOneProcessAreNotIndependent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Detect(ctx, Config{Workdir: flakyFixture(t, "order"), Command: mustParse(t, "go test ./..."),
		Stress: []testcmd.Stress{{Count: 3}}, MaxRuns: 2})
	if err != nil {
		t.Fatal(err)
	}
	e := find(res, "TestStartsEmpty")
	if e == nil {
		t.Fatalf("TestStartsEmpty not in the result: %+v", res.Tests)
	}
	// Two runs, each one pass then failing repeats; the evidence may stop
	// after the first run's two outcomes only if enough, which 1 failure is not.
	if e.Runs != 4 || e.Failures != 2 {
		t.Errorf("TestStartsEmpty: %d outcomes, %d failures over 2 runs of -count=3; want 4 and 2 (first execution + one disagreeing repeat per run)", e.Runs, e.Failures)
	}
	if v, _ := e.Verdict(); v != flaky.VerdictFlaky {
		t.Errorf("verdict %s, want flaky", v)
	}
	reg := find(res, "TestRegister")
	if reg == nil || reg.Runs != 2 || reg.Failures != 0 {
		t.Errorf("TestRegister evidence %+v: want 2 outcomes (one per run, repeats agree), 0 failures", reg)
	}
}

// TestSeedMakesTheOrdersReproducible: with Config.Seed the shuffled runs
// use Seed, Seed+1, ... so two detections of the order fixture see the same
// seeds and the same failing runs; without it the seeds are random.
func TestSeedMakesTheOrdersReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := flakyFixture(t, "order")
	detect := func(seed int64) []Run {
		res, err := Detect(ctx, Config{Workdir: dir, Command: mustParse(t, "go test ./..."), Seed: seed,
			Stress: []testcmd.Stress{{Count: 1, Shuffle: "on"}}, MaxRuns: 5, MinRuns: 100})
		if err != nil {
			t.Fatal(err)
		}
		return res.Runs
	}
	a, b := detect(7), detect(7)
	for i := range a {
		if want := []string{strconv.Itoa(7 + i)}; strings.Join(a[i].Seeds, ",") != want[0] {
			t.Errorf("run %d seeds %v, want %v", i+1, a[i].Seeds, want)
		}
		if a[i].Flags != b[i].Flags || strings.Join(a[i].Failed, ",") != strings.Join(b[i].Failed, ",") {
			t.Errorf("run %d differs between two detections with one seed: %q %v / %q %v", i+1, a[i].Flags, a[i].Failed, b[i].Flags, b[i].Failed)
		}
	}
	random := detect(0)
	if len(random[0].Seeds) != 1 || random[0].Seeds[0] == "7" || !strings.Contains(random[0].Flags, "-shuffle=on") {
		t.Errorf("without a seed: run 1 flags %q seeds %v, want -shuffle=on with a random seed", random[0].Flags, random[0].Seeds)
	}
}

// TestStoppedWhenEnough: the replay accepts a stop at the first sufficient
// run, late or not, and refuses one that ran on past it or stopped short.
func TestStoppedWhenEnough(t *testing.T) {
	ev := func(runs int, failed ...int) *flaky.Evidence {
		return &flaky.Evidence{Runs: runs, Failures: len(failed), FailedRuns: failed}
	}
	cases := []struct {
		e    *flaky.Evidence
		want bool
	}{
		{ev(6, 1, 2, 3, 4, 5), true},              // five failures, then the pass
		{ev(10, 1, 2, 3, 4, 5, 6, 7, 8, 9), true}, // the pass came late
		{ev(6, 2, 3, 4, 5, 6), true},              // a pass first, the fifth failure last
		{ev(7, 1, 2, 3, 4, 5), false},             // ran on after it was enough
		{ev(5, 1, 2, 3, 4), false},                // stopped short
		{ev(0), false},
	}
	for i, tc := range cases {
		if got := stoppedWhenEnough(tc.e); got != tc.want {
			t.Errorf("case %d (runs %d, failed %v): %v, want %v", i, tc.e.Runs, tc.e.FailedRuns, got, tc.want)
		}
	}
}
