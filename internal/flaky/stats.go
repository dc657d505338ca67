package flaky

import (
	"errors"
	"fmt"
	"math"
)

// Z95 is the standard normal quantile for a two-sided 95% interval.
const Z95 = 1.959964

// ErrNoRuns is returned when a rate or verdict is asked of zero runs:
// nothing was observed, so nothing can be said.
var ErrNoRuns = errors.New("flaky: no runs observed")

// Interval is a closed range of failure rates in [0, 1].
type Interval struct {
	Lo, Hi float64
}

// Wilson returns the 95% Wilson score interval for failures out of runs.
// Unlike the normal approximation it stays inside [0, 1] and is not
// degenerate at 0/N or N/N: 0 failures in 10 runs gives [0, 0.278], not
// [0, 0]. Zero runs is refused with ErrNoRuns.
func Wilson(failures, runs int) (Interval, error) {
	if err := checkCounts(failures, runs); err != nil {
		return Interval{}, err
	}
	n := float64(runs)
	p := float64(failures) / n
	z2 := Z95 * Z95
	denom := 1 + z2/n
	centre := (p + z2/(2*n)) / denom
	half := Z95 * math.Sqrt(p*(1-p)/n+z2/(4*n*n)) / denom
	lo, hi := centre-half, centre+half
	// At 0/N and N/N the exact bound is 0 or 1; rounding can leave 1e-17.
	if failures == 0 {
		lo = 0
	}
	if failures == runs {
		hi = 1
	}
	return Interval{Lo: math.Max(0, lo), Hi: math.Min(1, hi)}, nil
}

// Rate returns failures ÷ runs; zero runs is refused with ErrNoRuns.
func Rate(failures, runs int) (float64, error) {
	if err := checkCounts(failures, runs); err != nil {
		return 0, err
	}
	return float64(failures) / float64(runs), nil
}

func checkCounts(failures, runs int) error {
	switch {
	case runs == 0 && failures == 0:
		return ErrNoRuns
	case runs < 0 || failures < 0:
		return fmt.Errorf("flaky: negative counts (%d failures, %d runs)", failures, runs)
	case failures > runs:
		return fmt.Errorf("flaky: %d failures in only %d runs", failures, runs)
	}
	return nil
}
