package flaky

import (
	"regexp"
	"strings"
)

// EarlyStopFailures is how many failures of one test are enough once it
// has also passed: after the fifth, more runs add little to the evidence
// and cost CI minutes.
const EarlyStopFailures = 5

// FailingStopFailures is how many failures in a row, with no pass, it takes
// to stop and call a test failing. Five would call a 50% flake "failing"
// one time in 32; ten does so one time in 1,024.
const FailingStopFailures = 10

// Limits on what one test's evidence keeps: outcomes come from test output,
// which is untrusted and can be huge or endlessly varied.
const (
	MaxMessages   = 10   // distinct failure messages kept
	MaxRaces      = 5    // distinct race reports kept
	MaxSeeds      = 20   // distinct seeds kept
	MaxMessageLen = 2000 // bytes of one message or race report kept
)

// Verdict is what the observed runs say about one test.
type Verdict string

// The verdicts. A failing test is a regression for the normal fix path and
// is never quarantined; a passing one is "CI-only" and gets no fix attempt.
const (
	VerdictFlaky   Verdict = "flaky"   // both outcomes seen
	VerdictFailing Verdict = "failing" // failed every run
	VerdictPassing Verdict = "passing" // never failed
)

// Outcome is one run of one test.
type Outcome struct {
	Failed bool
	// Message is the failure output (ignored when the run passed).
	Message string
	// Race is a data race report seen in this run, if any.
	Race string
	// Seed is the run's random seed (e.g. go test -shuffle's), if any.
	Seed string
	// Flags are the stressor flags of this run, e.g. "-race -cpu 4".
	Flags string
}

// Evidence accumulates one test's outcomes. The zero value plus an ID is
// ready to use.
type Evidence struct {
	ID       string
	Runs     int
	Failures int
	// FailedRuns are the 1-based numbers of the runs that failed.
	FailedRuns []int
	// Messages are the distinct failure messages, each the first raw form
	// seen of its normalised class (see NormalizeMessage).
	Messages []string
	// Races are the distinct race reports, deduplicated the same way.
	Races []string
	// Seeds are the seeds of failing runs, in order of first failure.
	Seeds []string
	// Flags are the distinct stressor flags of failing runs.
	Flags []string

	msgKeys, raceKeys map[string]bool
}

// Add records one run.
func (e *Evidence) Add(o Outcome) {
	e.Runs++
	if o.Race != "" {
		e.Races = addDistinct(e.Races, &e.raceKeys, o.Race, MaxRaces)
	}
	if !o.Failed {
		return
	}
	e.Failures++
	e.FailedRuns = append(e.FailedRuns, e.Runs)
	e.Messages = addDistinct(e.Messages, &e.msgKeys, o.Message, MaxMessages)
	if o.Seed != "" && len(e.Seeds) < MaxSeeds && !contains(e.Seeds, o.Seed) {
		e.Seeds = append(e.Seeds, o.Seed)
	}
	if o.Flags != "" && len(e.Flags) < MaxSeeds && !contains(e.Flags, o.Flags) {
		e.Flags = append(e.Flags, o.Flags)
	}
}

// Enough reports whether the runner can stop running the test: it has
// failed EarlyStopFailures times and passed at least once, or it has failed
// FailingStopFailures times and never passed.
func (e *Evidence) Enough() bool {
	if e.Failures < e.Runs {
		return e.Failures >= EarlyStopFailures
	}
	return e.Failures >= FailingStopFailures
}

// Verdict returns the verdict so far; zero runs is refused with ErrNoRuns.
func (e *Evidence) Verdict() (Verdict, error) {
	if err := checkCounts(e.Failures, e.Runs); err != nil {
		return "", err
	}
	switch e.Failures {
	case 0:
		return VerdictPassing, nil
	case e.Runs:
		return VerdictFailing, nil
	}
	return VerdictFlaky, nil
}

func addDistinct(list []string, keys *map[string]bool, raw string, max int) []string {
	raw = truncate(strings.TrimSpace(raw), MaxMessageLen)
	if raw == "" {
		return list
	}
	k := NormalizeMessage(raw)
	if *keys == nil {
		*keys = map[string]bool{}
	}
	if (*keys)[k] || len(list) >= max {
		return list
	}
	(*keys)[k] = true
	return append(list, raw)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

var (
	reAddr     = regexp.MustCompile(`0x[0-9a-fA-F]+`)
	reDuration = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)(?:\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m))*\b`)
	reNumber   = regexp.MustCompile(`\d+(?:\.\d+)?`)
	reSpace    = regexp.MustCompile(`\s+`)
)

// NormalizeMessage is the key two failure messages are "the same" by. The
// rule, applied in this order: hexadecimal addresses (0x…) become "<addr>";
// Go-style durations ("1.2s", "350ms", "1m2.5s", "40µs") become "<dur>";
// every other run of digits, with an optional decimal part, becomes "N";
// runs of white space become one space, and the ends are trimmed. So
// "took 1.2s" and "took 1.3s" are one message, and so are "got 3, want 4"
// and "got 5, want 4" — the values differ, the failing assertion does not.
// Words and punctuation are kept, so different assertions stay apart.
func NormalizeMessage(s string) string {
	s = reAddr.ReplaceAllString(s, "<addr>")
	s = reDuration.ReplaceAllString(s, "<dur>")
	s = reNumber.ReplaceAllString(s, "N")
	return strings.TrimSpace(reSpace.ReplaceAllString(s, " "))
}
