package flakyrun

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/testcmd"
)

// A detection's state: the stressors' rotation, each test's evidence, the stop
// rule and the progress lines.

// tracked is one test's evidence; hidden ones (a package's outcome
// outside its tests) are reported only once they failed.
type tracked struct {
	ev     *flaky.Evidence
	hidden bool
}

type detection struct {
	cfg      Config
	tests    map[string]*tracked
	rotation []testcmd.Stress
	round    int
	dropRace bool
	notes    []string
	seeds    int64 // Config.Seed's seeds used so far
}

// nextStress is the next stressor of the rotation, skipping -race once it
// proved unusable here.
func (d *detection) nextStress() testcmd.Stress {
	for {
		s := d.rotation[d.round%len(d.rotation)]
		d.round++
		if s.Race && d.dropRace {
			if len(d.rotation) == 1 {
				s.Race = false
				return s
			}
			continue
		}
		return s
	}
}

// seeded gives a -shuffle=on run the next of Config.Seed's seeds.
func (d *detection) seeded(s testcmd.Stress) testcmd.Stress {
	if d.cfg.Seed == 0 || s.Shuffle != "on" {
		return s
	}
	s.Shuffle = strconv.FormatInt(d.cfg.Seed+d.seeds, 10)
	d.seeds++
	return s
}

// finished applies Config.Done, or the default rule.
func (d *detection) finished(minRuns int) bool {
	if d.cfg.Done != nil {
		return len(d.tests) > 0 && d.missing() == nil && d.cfg.Done(d.evidence())
	}
	return d.done(minRuns)
}

// needRaceProbe reports whether a flaky test has no race report yet while
// -race is usable and part of the rotation.
func (d *detection) needRaceProbe() bool {
	if d.dropRace || !slices.ContainsFunc(d.rotation, func(s testcmd.Stress) bool { return s.Race }) {
		return false
	}
	for _, t := range d.tests {
		if t.hidden || len(t.ev.Races) > 0 || !t.ev.Enough() {
			continue
		}
		if v, err := t.ev.Verdict(); err == nil && v == flaky.VerdictFlaky {
			return true
		}
	}
	return false
}

// done reports that every test has enough evidence: a verdict-ending
// number of failures, or minRuns clean executions.
func (d *detection) done(minRuns int) bool {
	if len(d.tests) == 0 {
		return false
	}
	if missing := d.missing(); len(missing) > 0 {
		return false
	}
	for _, t := range d.tests {
		if t.hidden && t.ev.Failures == 0 {
			continue
		}
		if !t.ev.Enough() && !(t.ev.Failures == 0 && t.ev.Runs >= minRuns) {
			return false
		}
	}
	return true
}

// missing are the selected tests no run reported (none when the output
// is read as one outcome of SuiteID).
func (d *detection) missing() []string {
	if d.tests[SuiteID] != nil && !d.tests[SuiteID].hidden {
		return nil
	}
	var out []string
	for _, id := range d.cfg.Tests {
		if d.tests[strings.TrimSpace(id)] == nil {
			out = append(out, id)
		}
	}
	return out
}

func (d *detection) add(id string, hidden bool, o flaky.Outcome) {
	t := d.tests[id]
	if t == nil {
		t = &tracked{ev: &flaky.Evidence{ID: id}, hidden: hidden}
		d.tests[id] = t
	}
	if t.ev.Enough() {
		// This test's examination is over: later runs do not count. A
		// race report is still kept: it names the cause, whenever seen.
		if o.Race != "" && len(t.ev.Races) < flaky.MaxRaces && !slices.ContainsFunc(t.ev.Races, func(r string) bool {
			return flaky.NormalizeMessage(r) == flaky.NormalizeMessage(o.Race)
		}) {
			t.ev.Races = append(t.ev.Races, o.Race)
		}
		return
	}
	t.ev.Add(o)
}

func (d *detection) note(s string) {
	if !slices.Contains(d.notes, s) {
		d.notes = append(d.notes, s)
	}
}

// evidence is what is reported, sorted by ID.
func (d *detection) evidence() []*flaky.Evidence {
	var out []*flaky.Evidence
	for _, t := range d.tests {
		if t.hidden && t.ev.Failures == 0 {
			continue
		}
		out = append(out, t.ev)
	}
	slices.SortFunc(out, func(a, b *flaky.Evidence) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (d *detection) progress(n, max int, r Run) {
	if d.cfg.Progress == nil {
		return
	}
	status := "passed"
	if len(r.Failed) > 0 {
		status = fmt.Sprintf("%d failed (%s)", len(r.Failed), strings.Join(r.Failed[:min(3, len(r.Failed))], ", "))
		if len(r.Failed) > 3 {
			status += ", ..."
		}
	} else if r.ExitCode != 0 {
		status = fmt.Sprintf("exit %d", r.ExitCode)
	}
	flags := r.Flags
	if flags == "" {
		flags = "as configured"
	}
	fmt.Fprintf(d.cfg.Progress, "flaky: run %d/%d [%s] %s in %v\n", n, max, flags, status, r.Duration.Round(time.Millisecond))
}
