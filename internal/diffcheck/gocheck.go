package diffcheck

import (
	"fmt"
	"slices"
)

// countRule is a pattern whose count in a Go file may not grow from before
// to after.
type countRule struct {
	check    string
	severity Severity
	pick     func(*goFacts) []int
	reason   string
}

var growRules = []countRule{
	{NewSleep, Reject, func(f *goFacts) []int { return f.sleeps },
		"a new time.Sleep/time.After/time.Tick wait outside a testing/synctest bubble hides the race instead of synchronising; wait on a channel, sync.WaitGroup or the event itself"},
	{NewRecover, Reject, func(f *goFacts) []int { return f.recovers },
		"a new recover() swallows the panic that shows the bug; fix what panics instead"},
	{DiscardedError, Reject, func(f *goFacts) []int { return f.discards },
		"a newly discarded error (_ = err) hides the failure; handle or assert on the error"},
	{NewSkip, Reject, func(f *goFacts) []int { return f.skips },
		"a new t.Skip or testing.Short() guard stops the test from running instead of fixing it"},
	{RetryLoop, Reject, func(f *goFacts) []int { return f.retries },
		"a new loop re-runs the test body or an assertion until it passes; a retry hides the flake, fix its cause"},
	{NewBuildTag, Reject, func(f *goFacts) []int { return f.buildTags },
		"a new build constraint can exclude the test from the normal run; remove it"},
}

func goFindings(fc *fileChange, before, after []byte) ([]Finding, error) {
	b, err := analyze(fc.oldPath, before)
	if err != nil {
		return nil, err
	}
	a, err := analyze(fc.newPath, after)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, r := range growRules {
		bl, al := r.pick(b), r.pick(a)
		if len(al) > len(bl) {
			out = append(out, Finding{Check: r.check, Severity: r.severity, File: fc.path(), Line: firstIn(al, fc.added), Reason: r.reason})
		}
	}
	if len(a.parallels) < len(b.parallels) {
		out = append(out, Finding{Check: RemovedParallel, Severity: Flag, File: fc.path(), Line: firstIn(b.parallels, fc.deleted),
			Reason: "t.Parallel() was removed (line in the old file); allowed when the test shares state it cannot stop sharing, and named in the PR"})
	}
	out = append(out, testFindings(fc, b, a)...)
	return out, nil
}

// firstIn is the first line of lines that the diff changed, else the first.
func firstIn(lines []int, changed map[int]string) int {
	for _, l := range lines {
		if _, ok := changed[l]; ok {
			return l
		}
	}
	if len(lines) > 0 {
		return lines[0]
	}
	return 0
}

// testFindings compares test functions: a test gone with a new one in its
// place was renamed, a test gone without one was deleted, a test kept with
// fewer assertion calls was weakened.
func testFindings(fc *fileChange, b, a *goFacts) []Finding {
	var gone, added []string
	for name := range b.tests {
		if _, ok := a.tests[name]; !ok {
			gone = append(gone, name)
		}
	}
	for name := range a.tests {
		if _, ok := b.tests[name]; !ok {
			added = append(added, name)
		}
	}
	byLine := func(m map[string]testFacts) func(x, y string) int {
		return func(x, y string) int { return m[x].line - m[y].line }
	}
	slices.SortFunc(gone, byLine(b.tests))
	slices.SortFunc(added, byLine(a.tests))

	var out []Finding
	for i, name := range gone {
		if i < len(added) {
			out = append(out, Finding{Check: RenamedTest, Severity: Reject, File: fc.path(), Line: a.tests[added[i]].line,
				Reason: fmt.Sprintf("%s was renamed to %s; a renamed test loses its history and quarantine entries, keep the name", name, added[i])})
			continue
		}
		out = append(out, Finding{Check: DeletedTest, Severity: Reject, File: fc.oldPath, Line: b.tests[name].line,
			Reason: fmt.Sprintf("%s was deleted (line in the old file); deleting a flaky test is not a fix, keep it and fix its cause", name)})
	}
	names := make([]string, 0, len(a.tests))
	for name := range a.tests {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		bt, ok := b.tests[name]
		at := a.tests[name]
		if ok && at.assertions < bt.assertions {
			out = append(out, Finding{Check: FewerAssertions, Severity: Reject, File: fc.path(), Line: at.line,
				Reason: fmt.Sprintf("%s has %d assertion calls, down from %d; a weaker test is not a fixed one, keep every check", name, at.assertions, bt.assertions)})
		}
	}
	return out
}
