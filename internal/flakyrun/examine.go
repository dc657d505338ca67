package flakyrun

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/org/mini-agent/internal/flaky"
)

// DefaultProbeRuns caps the clean executions of Examine's narrowed probe:
// enough to see a test that fails alone, few enough that an order
// dependence gets to the whole suite soon.
const DefaultProbeRuns = 10

// Examined is the examination of some tests (Examine).
type Examined struct {
	// Result is the evidence: of the tests alone, or of the whole suite
	// when they never failed alone. The caller removes its failure logs
	// (Result.RemoveLogs).
	Result *Result
	// Config is the configuration that produced Result: the narrowed
	// probe's (MinRuns capped), or the whole suite's (Tests nil, the
	// MinRuns asked for). A fix's rerun bar reruns that selection
	// (flakyfix.FixConfig.Detect): narrowed to the test alone, a bar
	// would never see an order dependence fail.
	Config Config
	// WholeSuite: the tests never failed alone and one of them failed
	// among the whole suite (an order dependence on the tests around it).
	WholeSuite bool
	// ProbeRuns counts the command runs of the narrowed probe when Result
	// is the whole suite's; 0 otherwise.
	ProbeRuns int

	tests []string // the tests asked for
}

// Widened reports that tests were asked for and Result is nevertheless
// the whole suite's: they never failed alone.
func (x *Examined) Widened() bool { return len(x.tests) > 0 && len(x.Config.Tests) == 0 }

// Requested reports whether the evidence id is one of the tests asked for
// (every id when none was): see MatchesTest. SuiteID is requested while
// Result is the narrowed runs' (it is then their outcome as one), not
// once it is the whole suite's.
func (x *Examined) Requested(id string) bool { return x.requested(id, !x.Widened()) }

func (x *Examined) requested(id string, narrowed bool) bool {
	if len(x.tests) == 0 {
		return true
	}
	if id == SuiteID {
		return narrowed
	}
	return slices.ContainsFunc(x.tests, func(name string) bool { return MatchesTest(id, name) })
}

// failed reports whether a requested test failed in res.
func (x *Examined) failed(res *Result, narrowed bool) bool {
	return slices.ContainsFunc(res.Tests, func(e *flaky.Evidence) bool { return e.Failures > 0 && x.requested(e.ID, narrowed) })
}

// MatchesTest reports whether the detection's test id is the test a caller
// named: the same id, or "package.name" (a Go test whose name is in
// several packages is qualified by its import path; see goIDs). A
// package's own outcome (PackageSuffix) is no test. The qualified form is
// matched by its suffix, so a subtest named "x.name" of another test
// would be taken for it too.
func MatchesTest(id, name string) bool {
	name = strings.TrimSpace(name)
	if name == "" || strings.HasSuffix(id, PackageSuffix) {
		return false
	}
	if id == name {
		return true
	}
	pkg, ok := strings.CutSuffix(id, "."+name)
	return ok && pkg != "" && !strings.ContainsAny(pkg, " \t")
}

// WholeSuiteError is Examine's error from the whole suite's detection
// (the tests never failed alone); Err is Detect's.
type WholeSuiteError struct{ Err error }

func (e *WholeSuiteError) Error() string { return "the whole suite: " + e.Err.Error() }
func (e *WholeSuiteError) Unwrap() error { return e.Err }

// Examine stress-runs the tests cfg.Tests names, knowing that an order
// dependence never fails alone. With no tests it is Detect on the whole
// suite. With tests, a probe runs them alone (narrowed, MinRuns capped at
// probeRuns; 0 or less means DefaultProbeRuns). When the probe made runs
// and none of the tests failed in it (see Examined.Requested), its failure
// logs are removed, a line goes to cfg.Progress, and Detect runs the whole
// suite (Tests nil, cfg's MinRuns and budgets again): Result is then the
// whole suite's and WholeSuite says whether one of the tests failed there.
//
// Errors are Detect's: the probe's as they are, the whole suite's wrapped
// in a WholeSuiteError; on cancellation the context's error.
func Examine(ctx context.Context, cfg Config, probeRuns int) (*Examined, error) {
	// The first detection runs before any test code ran in the workspace:
	// the harness may fetch the dependencies then, and only then (the
	// configurations kept for later runs do not).
	first := cfg
	first.PrefetchModules = true
	cfg.PrefetchModules = false
	if len(cfg.Tests) == 0 {
		res, err := Detect(ctx, first)
		if err != nil {
			return nil, err
		}
		return &Examined{Result: res, Config: cfg}, nil
	}
	if probeRuns <= 0 {
		probeRuns = DefaultProbeRuns
	}
	probe := cfg
	probe.Tests = slices.Clone(cfg.Tests)
	probe.MinRuns = min(cmp(cfg.MinRuns, DefaultMinRuns), probeRuns)
	first.Tests, first.MinRuns = probe.Tests, probe.MinRuns
	res, err := Detect(ctx, first)
	if err != nil {
		return nil, err
	}
	x := &Examined{Result: res, Config: probe, tests: slices.Clone(cfg.Tests)}
	if len(res.Runs) == 0 || x.failed(res, true) {
		return x, nil
	}
	// An order dependence needs the tests around it.
	res.RemoveLogs()
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "flaky: %s never failed alone; running the whole suite\n", strings.Join(cfg.Tests, ", "))
	}
	whole := cfg
	whole.Tests = nil
	wres, err := Detect(ctx, whole)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &WholeSuiteError{Err: err}
	}
	x.Result, x.Config, x.ProbeRuns = wres, whole, len(res.Runs)
	x.WholeSuite = x.failed(wres, false)
	return x, nil
}

// FixTarget is the flaky test a fix works on, among the tests requested
// accepts (nil: any): the highest failure rate, then the most runs, then
// the first by ID; nil when none is flaky. A package's outcome outside its
// tests is never one.
func FixTarget(tests []*flaky.Evidence, requested func(id string) bool) *flaky.Evidence {
	var best *flaky.Evidence
	for _, e := range tests {
		if v, err := e.Verdict(); err != nil || v != flaky.VerdictFlaky || strings.HasSuffix(e.ID, PackageSuffix) ||
			(requested != nil && !requested(e.ID)) {
			continue
		}
		if best == nil || e.Failures*best.Runs > best.Failures*e.Runs ||
			(e.Failures*best.Runs == best.Failures*e.Runs && e.Runs > best.Runs) {
			best = e
		}
	}
	return best
}
