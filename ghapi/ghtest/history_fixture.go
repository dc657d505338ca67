package ghtest

import (
	"fmt"
	"time"
)

// FixtureHistory describes CI history over a real test module's suite, so
// that what the history calls flaky can be examined in a checkout of that
// module: the test names and package are the module's.
type FixtureHistory struct {
	// Suite is the module's packages (import paths, e.g. "example.com/x")
	// and their top-level tests, by name; they pass unless named below.
	Suite []GoPackage
	// Flaky are clusters of tests failing together: cluster k fails in the
	// first attempt of the main push runs of days k+1 and k+6 and passes in
	// their re-run (flaky on the same code). Cluster k's failed jobs take
	// 9−2k minutes, so the clusters rank in the order given.
	Flaky [][]string
	// Regression, when set, fails on every main run from day 10 on, its
	// re-run included: broken by a commit, not flaky.
	Regression string
}

// SeedFixtureHistory writes 14 days of push runs on the default branch
// "main" of repository fullName (which must exist: AddRepo) ending on
// last's day, one commit a day, following h. It returns the run IDs by day.
func SeedFixtureHistory(s *Server, fullName string, last time.Time, h FixtureHistory) map[int][]int64 {
	const days = 14
	lastDay := time.Date(last.Year(), last.Month(), last.Day(), 0, 0, 0, 0, time.UTC)
	first := lastDay.AddDate(0, 0, -(days - 1))
	failingOn := map[int][]string{}
	minutes := map[int]time.Duration{}
	for k, cluster := range h.Flaky {
		for _, d := range []int{k + 1, k + 6} {
			failingOn[d] = append(failingOn[d], cluster...)
			minutes[d] = time.Duration(9-2*k) * time.Minute
		}
	}
	job := func(start time.Time, dur time.Duration, failing []string) HistoryJob {
		fail := map[string]bool{}
		for _, f := range failing {
			fail[f] = true
		}
		var pkgs []GoPackage
		for _, p := range h.Suite {
			pkg := GoPackage{Path: p.Path}
			for i, tc := range p.Tests {
				tc = GoTest{Name: tc.Name}
				if fail[tc.Name] {
					tc.Fail, tc.Line, tc.Message = true, 10+i, fmt.Sprintf("%s failed in CI (seeded)", tc.Name)
				}
				pkg.Tests = append(pkg.Tests, tc)
			}
			pkgs = append(pkgs, pkg)
		}
		j := HistoryJob{Name: "test", Duration: dur, Log: GoTestLog(start, pkgs...)}
		if len(failing) > 0 {
			j.Conclusion = "failure"
		}
		return j
	}
	ids := map[int][]int64{}
	for d := range days {
		start := first.AddDate(0, 0, d).Add(9 * time.Hour)
		failing := failingOn[d]
		regressed := h.Regression != "" && d >= 10
		if regressed {
			failing = append(failing, h.Regression)
		}
		dur := 3 * time.Minute
		if m, ok := minutes[d]; ok {
			dur = m
		}
		attempts := []Attempt{{Jobs: []HistoryJob{job(start, dur, failing)}}}
		switch {
		case regressed && d == 10:
			attempts = append(attempts, Attempt{Jobs: []HistoryJob{job(start.Add(time.Hour), 3*time.Minute, []string{h.Regression})}})
		case len(failingOn[d]) > 0 && !regressed:
			attempts = append(attempts, Attempt{Jobs: []HistoryJob{job(start.Add(time.Hour), 3*time.Minute, nil)}})
		}
		id := s.AddHistoryRun(fullName, HistoryRun{Event: "push", HeadBranch: "main", HeadSHA: sha(fmt.Sprintf("%s-main-%d", fullName, d)),
			Created: start, Attempts: attempts})
		ids[d] = append(ids[d], id)
	}
	return ids
}
