package flakyrun

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flaky/flakytest"
	"github.com/org/mini-agent/internal/testcmd"
)

// TestMatchesTest: a detection's id is the named test when it is the same
// name or that name qualified by its package; never a package's outcome.
func TestMatchesTest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		id, name string
		want     bool
	}{
		{"TestFormatDefault", "TestFormatDefault", true},
		{"TestFormatDefault", " TestFormatDefault ", true},
		{"example.com/m/a.TestFormatDefault", "TestFormatDefault", true},
		{"example.com/m/a.TestFormatDefault/case", "TestFormatDefault/case", true},
		{"tests/test_ids.py::test_two_ids_differ", "tests/test_ids.py::test_two_ids_differ", true},
		{"TestFormatDefaultSlow", "TestFormatDefault", false},
		{"TestFormatDefault/case", "TestFormatDefault", false},
		{"example.com/m/a.XTestFormatDefault", "TestFormatDefault", false},
		{".TestFormatDefault", "TestFormatDefault", false},
		{"example.com/m/a" + PackageSuffix, "example.com/m/a" + PackageSuffix, false},
		{"TestFormatDefault", "", false},
	} {
		if got := MatchesTest(c.id, c.name); got != c.want {
			t.Errorf("MatchesTest(%q, %q) = %v, want %v", c.id, c.name, got, c.want)
		}
	}
}

// TestExaminedRequested: with tests asked for, only they are requested,
// SuiteID only while the result is the narrowed runs'; with none, all are.
func TestExaminedRequested(t *testing.T) {
	t.Parallel()
	names := []string{"TestFormatDefault"}
	narrowed := &Examined{Config: Config{Tests: names}, tests: names}
	widened := &Examined{Config: Config{}, tests: names}
	whole := &Examined{}
	if narrowed.Widened() || !widened.Widened() || whole.Widened() {
		t.Errorf("Widened: narrowed %v, widened %v, whole %v; want false, true, false", narrowed.Widened(), widened.Widened(), whole.Widened())
	}
	for _, c := range []struct {
		x    *Examined
		id   string
		want bool
	}{
		{narrowed, "TestFormatDefault", true},
		{narrowed, "example.com/m/a.TestFormatDefault", true},
		{narrowed, SuiteID, true},
		{narrowed, "TestSetDefault", false},
		{widened, "TestFormatDefault", true},
		{widened, SuiteID, false},
		{widened, "TestSetDefault", false},
		{widened, "example.com/m/a" + PackageSuffix, false},
		{whole, "TestSetDefault", true},
		{whole, SuiteID, true},
	} {
		if got := c.x.Requested(c.id); got != c.want {
			t.Errorf("%+v: Requested(%q) = %v, want %v", c.x.Config, c.id, got, c.want)
		}
	}
}

// TestExamineNarrowingError: an invalid name is Detect's narrowing error
// from the probe, not a run of the whole suite.
func TestExamineNarrowingError(t *testing.T) {
	t.Parallel()
	var progress strings.Builder
	_, err := Examine(context.Background(), Config{Workdir: t.TempDir(), Command: mustParse(t, "go test ./..."),
		Tests: []string{"TestA;rm"}, Progress: &progress}, 0)
	var whole *WholeSuiteError
	if !errors.Is(err, testcmd.ErrNarrowing) || errors.As(err, &whole) {
		t.Fatalf("err %v, want the probe's ErrNarrowing", err)
	}
	if strings.Contains(progress.String(), "whole suite") {
		t.Errorf("the whole suite was run after an invalid narrowing:\n%s", progress.String())
	}
}

// TestExamine runs the examine module (TestSetDefault leaves a package
// default changed, so TestFormatDefault fails only after it; TestSecondTime
// fails alone from its second execution in a process; TestPlain always
// passes) with reproducible orders:
//   - a test flaky alone stays narrowed: the probe's result and config;
//   - the order-dependent test never fails alone, so the whole suite is
//     examined, where it is flaky: WholeSuite, and the whole suite's config;
//   - a passing test is examined with the whole suite too, and stays
//     passing there: not WholeSuite, though other tests failed there;
//   - no tests is Detect on the whole suite.
func TestExamine(t *testing.T) {
	if testing.Short() {
		t.Skip("stress-runs a real module with go test")
	}
	t.Parallel()
	const minRuns, probe = 6, 4
	for _, c := range []struct {
		name       string
		tests      []string
		target     string
		verdict    flaky.Verdict
		widened    bool
		wholeSuite bool
	}{
		{"alone", []string{"TestSecondTime"}, "TestSecondTime", flaky.VerdictFlaky, false, false},
		{"order", []string{"TestFormatDefault"}, "TestFormatDefault", flaky.VerdictFlaky, true, true},
		{"passing", []string{"TestPlain"}, "TestPlain", flaky.VerdictPassing, true, false},
		{"whole", nil, "TestFormatDefault", flaky.VerdictFlaky, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var progress strings.Builder
			cfg := Config{Workdir: flakytest.CopyModule(t, "testdata/examine"), Command: mustParse(t, "go test ./..."),
				Tests: c.tests, MaxRuns: 16, MinRuns: minRuns, Seed: 1, KeepFailureLog: true, Progress: &progress}
			x, err := Examine(ctx, cfg, probe)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Result.RemoveLogs()
			e := x.Result.Test(c.target)
			if e == nil {
				t.Fatalf("%s not in the result: %+v", c.target, x.Result.Tests)
			}
			if v, err := e.Verdict(); err != nil || v != c.verdict {
				t.Fatalf("%s: %s (%v) after %d runs, %d failures; want %s\nprogress:\n%s", c.target, v, err, e.Runs, e.Failures, c.verdict, progress.String())
			}
			if x.Widened() != c.widened || x.WholeSuite != c.wholeSuite {
				t.Errorf("widened %v, whole suite %v; want %v, %v", x.Widened(), x.WholeSuite, c.widened, c.wholeSuite)
			}
			announced := strings.Contains(progress.String(), "flaky: "+c.target+" never failed alone; running the whole suite\n")
			if announced != c.widened {
				t.Errorf("progress announces the whole suite: %v, want %v:\n%s", announced, c.widened, progress.String())
			}
			switch {
			case c.tests == nil:
				if x.Config.MinRuns != minRuns || x.Config.Tests != nil || x.ProbeRuns != 0 {
					t.Errorf("config %+v, probe runs %d: want the config as given", x.Config, x.ProbeRuns)
				}
			case c.widened:
				// The whole suite's config, with the MinRuns asked for;
				// the result has the other tests too.
				if x.Config.Tests != nil || x.Config.MinRuns != minRuns || x.ProbeRuns == 0 || x.Result.Test("TestSetDefault") == nil {
					t.Errorf("config tests %q, MinRuns %d, probe runs %d, tests %d: want the whole suite's after a probe",
						x.Config.Tests, x.Config.MinRuns, x.ProbeRuns, len(x.Result.Tests))
				}
			default:
				// The probe's: narrowed, MinRuns capped.
				if !slices.Equal(x.Config.Tests, c.tests) || x.Config.MinRuns != probe || x.ProbeRuns != 0 || len(x.Result.Tests) != 1 {
					t.Errorf("config tests %q, MinRuns %d, probe runs %d, tests %+v: want the narrowed probe's",
						x.Config.Tests, x.Config.MinRuns, x.ProbeRuns, x.Result.Tests)
				}
			}
			if c.verdict == flaky.VerdictFlaky {
				if p := x.Result.FailureLogs[c.target]; p == "" {
					t.Errorf("no failure log kept for %s", c.target)
				} else if _, err := os.Stat(p); err != nil {
					t.Errorf("failure log: %v", err)
				}
			}
			t.Logf("%s: %d failures in %d runs, %d command runs (%d alone before), stopped by %s",
				c.target, e.Failures, e.Runs, len(x.Result.Runs), x.ProbeRuns, x.Result.Stop)
		})
	}
}
