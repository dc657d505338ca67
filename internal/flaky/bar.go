package flaky

import (
	"errors"
	"fmt"
	"math"
)

// FixStatus is the outcome of judging a fix.
type FixStatus string

// The fix statuses. Only FixProven means fixed.
const (
	// FixProven: the bar was reached with zero failures.
	FixProven FixStatus = "proven"
	// FixFailedBar: the test failed at least once after the fix.
	FixFailedBar FixStatus = "failed-bar"
	// FixUnproven: the budget ended before the bar; never reported as fixed.
	FixUnproven FixStatus = "unproven"
	// FixRejected: the diff failed an anti-pattern check, so it was not rerun.
	FixRejected FixStatus = "rejected"
)

// MaxRuns bounds run counts so the bar's integer arithmetic cannot overflow.
const MaxRuns = 1 << 30

// ResidualChance is the most a fix that changed nothing may pass the bar
// by luck: the bar's streak of clean runs has probability below this.
const ResidualChance = 0.01

// Bar is the rerun bar a fix must clear: Need clean runs in a row, of which
// the budget allows Limit.
type Bar struct {
	// PreRuns, PreFailures and PreRate are the pre-fix measurement.
	PreRuns, PreFailures int
	PreRate              float64
	// Need is max(2 × PreRuns, ⌈4.6 / PreRate⌉, the smallest n with
	// (1 − PreRate)ⁿ < ResidualChance).
	Need int
	// Budget is the most runs the caller can afford (> 0).
	Budget int
}

// NewBar computes the bar from the pre-fix runs and failures. The pre-fix
// test must have failed at least once and passed at least once: a bar for
// a test never seen failing, or never seen passing, means nothing.
func NewBar(preRuns, preFailures, budget int) (Bar, error) {
	rate, err := Rate(preFailures, preRuns)
	if err != nil {
		return Bar{}, err
	}
	if preFailures == 0 {
		return Bar{}, errors.New("flaky: no bar for a test that never failed before the fix")
	}
	if preFailures == preRuns {
		return Bar{}, errors.New("flaky: no bar for a test that failed every run before the fix (it is failing, not flaky)")
	}
	if preRuns > MaxRuns || budget > MaxRuns {
		return Bar{}, fmt.Errorf("flaky: more than %d runs (%d before, budget %d)", MaxRuns, preRuns, budget)
	}
	if budget <= 0 {
		return Bar{}, fmt.Errorf("flaky: run budget must be positive, got %d", budget)
	}
	// ⌈4.6 / (f/n)⌉ = ⌈46n / 10f⌉ in integers: float 4.6 is not exact.
	byRate := (46*preRuns + 10*preFailures - 1) / (10 * preFailures)
	need := max(2*preRuns, byRate, exactRuns(rate))
	return Bar{PreRuns: preRuns, PreFailures: preFailures, PreRate: rate, Need: need, Budget: budget}, nil
}

// exactRuns is the smallest n with (1 − p)ⁿ < ResidualChance, for 0 < p < 1.
func exactRuns(p float64) int {
	n := int(math.Ceil(math.Log(ResidualChance) / math.Log1p(-p)))
	for n > 1 && math.Pow(1-p, float64(n-1)) < ResidualChance {
		n--
	}
	for math.Pow(1-p, float64(n)) >= ResidualChance {
		n++
	}
	return n
}

// Limit is how many runs after the fix are worth doing: the bar, or the
// budget when the budget is smaller (then the fix can be at best unproven).
func (b Bar) Limit() int { return min(b.Need, b.Budget) }

// Reachable reports whether the budget allows the bar at all.
func (b Bar) Reachable() bool { return b.Budget >= b.Need }

// Continue reports whether another post-fix run is useful: none has failed
// and fewer than Limit have run.
func (b Bar) Continue(after *Evidence) bool {
	return after.Failures == 0 && after.Runs < b.Limit()
}

// Result is the judgement of a fix against the bar.
type Result struct {
	Status FixStatus
	// Runs and Failures are the post-fix counts.
	Runs, Failures int
	// FailedRuns are the 1-based numbers of the post-fix runs that failed.
	FailedRuns []int
	// Need is the bar's run count.
	Need int
	// Reason says why, in one sentence.
	Reason string
}

// Judge compares the post-fix evidence with the bar. Any failure fails the
// bar; zero failures proves the fix only when Need runs were made.
func (b Bar) Judge(after *Evidence) Result {
	r := Result{Runs: after.Runs, Failures: after.Failures, FailedRuns: append([]int(nil), after.FailedRuns...), Need: b.Need}
	switch {
	case after.Failures > 0:
		r.Status = FixFailedBar
		r.Reason = fmt.Sprintf("the test failed %d of %d runs after the fix (first failing run: %d)", after.Failures, after.Runs, after.FailedRuns[0])
	case after.Runs >= b.Need:
		r.Status = FixProven
		r.Reason = fmt.Sprintf("%d clean runs after the fix; a fix that changed nothing would pass that many with probability %.2g", after.Runs, math.Pow(1-b.PreRate, float64(after.Runs)))
	default:
		r.Status = FixUnproven
		r.Reason = fmt.Sprintf("only %d of the %d clean runs needed were made (budget %d); the fix is not proven", after.Runs, b.Need, b.Budget)
	}
	return r
}
