package config

import (
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/org/mini-agent/internal/protect"
)

// Defaults and bounds of the `flaky:` section (the scheduled flaky-test
// mode, `mode: flaky`).
const (
	DefaultFlakyWindowDays = 14
	MaxFlakyWindowDays     = 90
	DefaultFlakyMaxFixes   = 3
	DefaultFlakyMaxPRs     = 3
	DefaultFlakyMaxIssues  = 5
	// DefaultFlakyLabel is internal/flakyissue's default label (kept equal
	// by a test; config does not import it).
	DefaultFlakyLabel = "flaky-test"
	// DefaultFlakyMaxRuns and DefaultFlakyMaxMinutes bound the local proof
	// of one candidate (flakyrun's defaults).
	DefaultFlakyMaxRuns    = 40
	DefaultFlakyMaxMinutes = 10
	// maxFlakyBudget bounds max-fixes, max-prs and max-issues.
	maxFlakyBudget = 50
	// maxFlakyRuns bounds max-runs.
	maxFlakyRuns = 10000
	// maxQuarantinePath bounds quarantine-file.
	maxQuarantinePath = 200
)

// Flaky is the `flaky:` section: budgets of one scheduled run of the flaky
// mode and the opt-in quarantine file. Keys left out get the defaults.
type Flaky struct {
	// WindowDays is how many days of CI history are scanned (1–90).
	WindowDays int `yaml:"window-days"`
	// MaxFixes bounds the candidates examined locally and given to the
	// model per run; MaxPRs the PRs opened (fixes and quarantine
	// proposals); MaxIssues the new issues. Each is 0–50; a key left out
	// gets its default, an explicit 0 turns that output off.
	MaxFixes  *int `yaml:"max-fixes"`
	MaxPRs    *int `yaml:"max-prs"`
	MaxIssues *int `yaml:"max-issues"`
	// Label marks the flaky-test issues (and finds them again).
	Label string `yaml:"label"`
	// QuarantineFile, when set, is a repository-relative file listing
	// quarantined test ids, one a line; "" turns quarantine off.
	QuarantineFile string `yaml:"quarantine-file"`
	// MaxRuns and MaxMinutes bound the local proof of one candidate, and
	// separately the rerun bar of its fix.
	MaxRuns    int `yaml:"max-runs"`
	MaxMinutes int `yaml:"max-minutes"`
	// Seed, when not zero, makes the local runs' shuffled orders
	// reproducible (-shuffle=Seed, Seed+1, …; the CLI's --seed); zero,
	// the default, draws a random seed for each run.
	Seed int64 `yaml:"seed"`
}

// Fixes, PRs and Issues are the budgets with defaults applied.
func (f Flaky) Fixes() int  { return orDefault(f.MaxFixes, DefaultFlakyMaxFixes) }
func (f Flaky) PRs() int    { return orDefault(f.MaxPRs, DefaultFlakyMaxPRs) }
func (f Flaky) Issues() int { return orDefault(f.MaxIssues, DefaultFlakyMaxIssues) }

func orDefault(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func (f *Flaky) fillDefaults() {
	if f.WindowDays == 0 {
		f.WindowDays = DefaultFlakyWindowDays
	}
	f.Label = or(f.Label, DefaultFlakyLabel)
	if f.MaxRuns == 0 {
		f.MaxRuns = DefaultFlakyMaxRuns
	}
	if f.MaxMinutes == 0 {
		f.MaxMinutes = DefaultFlakyMaxMinutes
	}
}

// validate checks the section; protected is the policy's protected set
// (the quarantine file must not be in it: mini-agent never writes there).
func (f Flaky) validate(protected *protect.Set) []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if f.WindowDays < 0 || f.WindowDays > MaxFlakyWindowDays {
		add("flaky.window-days: %d is not a number of days from 1 to %d", f.WindowDays, MaxFlakyWindowDays)
	}
	for _, b := range []struct {
		key string
		v   *int
	}{{"max-fixes", f.MaxFixes}, {"max-prs", f.MaxPRs}, {"max-issues", f.MaxIssues}} {
		if b.v != nil && (*b.v < 0 || *b.v > maxFlakyBudget) {
			add("flaky.%s: %d is not from 0 to %d", b.key, *b.v, maxFlakyBudget)
		}
	}
	if f.Label != "" && (strings.TrimSpace(f.Label) != f.Label || len(f.Label) > 50 || strings.ContainsAny(f.Label, ",\n")) {
		add("flaky.label: %q is not a usable label name", f.Label)
	}
	if f.MaxRuns < 0 || f.MaxRuns > maxFlakyRuns {
		add("flaky.max-runs: %d is not from 1 to %d", f.MaxRuns, maxFlakyRuns)
	}
	if f.MaxMinutes < 0 || f.MaxMinutes > MaxMinutes {
		add("flaky.max-minutes: %d is not from 1 to %d", f.MaxMinutes, MaxMinutes)
	}
	if f.Seed < 0 {
		add("flaky.seed: %d is not a seed from 1 (0: random orders)", f.Seed)
	}
	if q := f.QuarantineFile; q != "" {
		switch {
		case len(q) > maxQuarantinePath || strings.ContainsFunc(q, func(r rune) bool { return unicode.IsControl(r) || r == '\\' }):
			add("flaky.quarantine-file: %q is not a usable path", q)
		case path.IsAbs(q) || path.Clean(q) != q || q == "." || strings.HasPrefix(q, "../") || q == ".." || strings.HasSuffix(q, "/"):
			add("flaky.quarantine-file: %q must be a clean file path inside the repository (no leading /, no ..)", q)
		default:
			if g, ok := protected.Match(q); ok {
				add("flaky.quarantine-file: %q is a protected path (%s): mini-agent never writes there; pick a path outside .github/, e.g. flaky-quarantine.txt", q, g)
			}
		}
	}
	return p
}
