package flakyrun

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/org/mini-agent/internal/failure"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/testcmd"
	"github.com/org/mini-agent/tools"
)

// SuiteID is the one test of a run whose output cannot tell per-test
// outcomes: the selection (or the whole suite) passed or failed as one.
const SuiteID = "(suite)"

// PackageSuffix marks a Go package's outcome outside its tests (a build
// failure, a panic in TestMain, a race after the tests).
const PackageSuffix = " (package)"

// record reads one run's log into the evidence.
func (d *detection) record(out tools.RunOutcome, s testcmd.Stress) (Run, error) {
	run := Run{Argv: out.Argv, ExitCode: out.ExitCode, Duration: out.Duration, Flags: stressFlags(s)}
	if out.TimedOut {
		d.note(fmt.Sprintf("a run reached the per-run time limit and was killed: %s", strings.Join(out.Argv, " ")))
	}
	f, err := os.Open(out.LogPath)
	if err != nil {
		return run, fmt.Errorf("flakyrun: read the run's output: %w", err)
	}
	defer f.Close()
	if out.Invocation != nil && out.Invocation.Form == testcmd.GoJSON {
		return d.recordGo(run, f, s, out)
	}
	return d.recordOther(run, f, out)
}

func (d *detection) recordGo(run Run, f io.Reader, s testcmd.Stress, out tools.RunOutcome) (Run, error) {
	gr, err := parseGoJSON(f)
	if err != nil {
		return run, fmt.Errorf("flakyrun: read go test -json output: %w", err)
	}
	tests := 0
	for _, o := range gr.Outcomes {
		if o.Test != "" {
			tests++
		}
	}
	if tests == 0 && s.Race && out.ExitCode != 0 && !out.TimedOut {
		// -race cannot build here (no cgo, an unsupported platform): the
		// run tells nothing about the tests. Rotate without it.
		d.dropRace = true
		d.note("-race was dropped: a run with it reported no test (the race detector may be unavailable here)")
		return run, nil
	}
	ids := goIDs(gr.Outcomes, d.tests)
	for _, seed := range gr.Seeds {
		if !slices.Contains(run.Seeds, seed) {
			run.Seeds = append(run.Seeds, seed)
		}
	}
	slices.Sort(run.Seeds)
	for _, execs := range perProcess(gr.Outcomes) {
		o := execs[0]
		id, hidden := ids[[2]string{o.Package, o.Test}], o.Test == ""
		for _, oc := range independent(execs) {
			oc.Flags = run.Flags
			oc.Seed = gr.Seeds[o.Package]
			if oc.Failed && !slices.Contains(run.Failed, id) {
				run.Failed = append(run.Failed, id)
			}
			d.add(id, hidden, oc)
		}
	}
	return run, nil
}

// perProcess groups one run's outcomes by (package, test), in order of
// first execution: under -count=N or -cpu=1,2,4 a test executes several
// times in one test process.
func perProcess(outs []goOutcome) [][]goOutcome {
	idx := map[[2]string]int{}
	var groups [][]goOutcome
	for _, o := range outs {
		k := [2]string{o.Package, o.Test}
		i, ok := idx[k]
		if !ok {
			i = len(groups)
			idx[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], o)
	}
	return groups
}

// independent turns the executions of one test in one process into the
// outcomes the evidence counts. Executions after the first share the
// process's state (globals, caches, files a test left behind), so they are
// not independent samples: a test that leaks state into its next execution
// fails every repeat, and counting each repeat would call an
// order-dependent test "failing". So the first execution counts; and when
// a later one disagrees with it, that one outcome counts too (the test was
// seen both ways, which is evidence of flakiness). A race report from any
// execution is kept.
func independent(execs []goOutcome) []flaky.Outcome {
	first := execs[0]
	out := []flaky.Outcome{{Failed: first.Failed, Message: first.Message, Race: first.Race}}
	for _, e := range execs[1:] {
		if out[0].Race == "" && e.Race != "" {
			out[0].Race = e.Race
		}
		if len(out) == 1 && e.Failed != first.Failed {
			out = append(out, flaky.Outcome{Failed: e.Failed, Message: e.Message, Race: e.Race})
		}
	}
	return out
}

// goIDs names each (package, test): the test name alone, or
// "package.Test" when the name is in several packages. known keeps a name
// chosen in an earlier run.
func goIDs(outs []goOutcome, known map[string]*tracked) map[[2]string]string {
	pkgsOf := map[string]map[string]bool{}
	for _, o := range outs {
		if pkgsOf[o.Test] == nil {
			pkgsOf[o.Test] = map[string]bool{}
		}
		pkgsOf[o.Test][o.Package] = true
	}
	ids := map[[2]string]string{}
	for _, o := range outs {
		k := [2]string{o.Package, o.Test}
		switch {
		case o.Test == "":
			ids[k] = o.Package + PackageSuffix
		case len(pkgsOf[o.Test]) > 1 || known[o.Package+"."+o.Test] != nil:
			ids[k] = o.Package + "." + o.Test
		default:
			ids[k] = o.Test
		}
	}
	return ids
}

// rePytestVerbose is a pytest -v result line: "path::test PASSED [ 50%]".
var rePytestVerbose = regexp.MustCompile(`^(\S+::\S+) (PASSED|FAILED|ERROR|XPASS|XFAIL|SKIPPED)\b`)

// recordOther reads a run of another runner (or of go test whose output
// is plain). Per-test outcomes only when the output names every test's
// result (pytest -v); otherwise the run is one outcome for SuiteID.
func (d *detection) recordOther(run Run, f *os.File, out tools.RunOutcome) (Run, error) {
	results := map[string]bool{} // id -> failed
	var order []string
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := readLine(br)
		if m := rePytestVerbose.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			failed := m[2] == "FAILED" || m[2] == "ERROR" || m[2] == "XPASS"
			if m[2] == "SKIPPED" || m[2] == "XFAIL" {
				goto next
			}
			if _, seen := results[m[1]]; !seen {
				order = append(order, m[1])
			}
			results[m[1]] = results[m[1]] || failed
		}
	next:
		if err != nil {
			break
		}
	}
	msgs := map[string]string{}
	var failing []string
	if _, err := f.Seek(0, io.SeekStart); err == nil {
		if fc, err := failure.Extract(f, failure.Options{Workspace: d.cfg.Workdir}); err == nil {
			for _, fl := range fc.Failures {
				msg := strings.TrimSpace(fl.Message + "\n" + fl.Excerpt)
				msgs[fl.ID] = msg
				failing = append(failing, fl.ID)
			}
		}
	}
	failedRun := out.ExitCode != 0 || out.TimedOut
	if len(order) > 0 {
		anyFailed := false
		for _, id := range order {
			failed := results[id]
			anyFailed = anyFailed || failed
			o := flaky.Outcome{Failed: failed}
			if failed {
				o.Message = msgs[id]
				if o.Message == "" {
					o.Message = "failed (no message in the output)"
				}
				run.Failed = append(run.Failed, id)
			}
			d.add(id, false, o)
		}
		if failedRun && !anyFailed {
			// The command failed but no test did: outside the tests.
			d.add(SuiteID, true, flaky.Outcome{Failed: true, Message: outsideMessage(out)})
			run.Failed = append(run.Failed, SuiteID)
		}
		return run, nil
	}
	d.note("the output does not name each test's result, so each run counts as one outcome of " + SuiteID +
		" (for pytest, -v in the test command gives per-test outcomes)")
	o := flaky.Outcome{Failed: failedRun}
	if failedRun {
		if len(failing) > 0 {
			var b strings.Builder
			for _, id := range failing {
				fmt.Fprintf(&b, "%s: %s\n", id, firstLine(msgs[id]))
			}
			o.Message = strings.TrimSpace(b.String())
		} else {
			o.Message = outsideMessage(out)
		}
		run.Failed = append(run.Failed, SuiteID)
	}
	d.add(SuiteID, false, o)
	return run, nil
}

func outsideMessage(out tools.RunOutcome) string {
	if out.TimedOut {
		return "the run reached its time limit"
	}
	return fmt.Sprintf("the command exited %d", out.ExitCode)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// stressFlags is a stressor as go test flags ("" for none).
func stressFlags(s testcmd.Stress) string {
	var f []string
	if s.Count > 0 {
		f = append(f, fmt.Sprintf("-count=%d", s.Count))
	}
	if s.Race {
		f = append(f, "-race")
	}
	if s.Shuffle != "" {
		f = append(f, "-shuffle="+s.Shuffle)
	}
	if len(s.CPU) > 0 {
		cpus := make([]string, len(s.CPU))
		for i, n := range s.CPU {
			cpus[i] = fmt.Sprint(n)
		}
		f = append(f, "-cpu="+strings.Join(cpus, ","))
	}
	return strings.Join(f, " ")
}
