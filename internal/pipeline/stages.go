package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/failure"
	"github.com/org/mini-agent/internal/safefile"
	"github.com/org/mini-agent/internal/snapshot"
	"github.com/org/mini-agent/internal/testcmd"
	"github.com/org/mini-agent/tools"
)

// tailBytes is how much of a validation command's output the bundle keeps.
const tailBytes = 4 << 10

// failureContext extracts what failed: from the given log, or from the
// harness's own first run of the test command (returned as a check).
func (o *runner) failureContext(ctx context.Context, ws *tools.Workspace, rt *tools.RunTest, cont *containment) (*failure.FailureContext, *bundle.Check, error) {
	fopt := failure.Options{Workspace: ws.Dir()}
	if logs := o.failureLogs(); len(logs) > 0 {
		fc, err := ExtractFailures(logs, ws.Dir())
		if err != nil {
			return nil, nil, configErr("failure-log", ": %v", err)
		}
		return fc, nil, nil
	}
	fmt.Fprintf(o.Progress, "running the test command to see what fails: %s\n", o.TestCommand)
	// `go test -json` output is parsed exactly; testcmd adds the flag only
	// when it does not change what the maintainer's command means.
	ro, err := rt.Run(ctx, testcmd.Selection{}, testcmd.GoJSON)
	cont.after(ctx, "initial run")
	if err != nil {
		return nil, nil, err
	}
	check := checkFrom("initial run", ro)
	// The whole saved log, streamed: the error may sit anywhere in it.
	fc, err := failure.ExtractFile(ro.LogPath, fopt)
	if err != nil {
		return nil, nil, err
	}
	return fc, &check, nil
}

// ExtractFailures extracts each log on its own (one per job or matrix leg)
// and merges them: identical failures are counted, not repeated.
func ExtractFailures(paths []string, workspace string) (*failure.FailureContext, error) {
	var all []*failure.FailureContext
	for _, p := range paths {
		fc, err := failure.ExtractFile(p, failure.Options{Workspace: workspace})
		if err != nil {
			return nil, err
		}
		all = append(all, fc)
	}
	if len(all) == 1 {
		return all[0], nil
	}
	return failure.Merge(all...), nil
}

func checkFrom(name string, ro tools.RunOutcome) bundle.Check {
	tail := ro.Output
	if len(tail) > tailBytes {
		tail = tail[len(tail)-tailBytes:]
		// Start at a line: a cut inside a secret would keep a piece the
		// redactor cannot recognise.
		if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
			tail = tail[i+1:]
		}
	}
	return bundle.Check{Name: name, Command: strings.Join(ro.Argv, " "), ExitCode: ro.ExitCode,
		Duration: ro.Duration.Seconds(), TimedOut: ro.TimedOut, Passed: ro.ExitCode == 0 && !ro.TimedOut, Tail: tail}
}

// collectDiff records the run's diff and the changed files' final contents.
func collectDiff(ctx context.Context, snap *snapshot.Snapshot, ws *tools.Workspace, b *bundle.Bundle) error {
	diff, changes, err := snap.Diff(ctx)
	if err != nil {
		return err
	}
	b.Diff = diff
	b.Files = nil
	for _, c := range changes {
		f := bundle.File{Path: c.Path, OldPath: c.OldPath, Status: c.Status, Mode: c.Mode}
		if c.Status != "deleted" {
			data, err := readWorkspaceFile(ws, c.Path, c.Mode)
			if err != nil {
				return fmt.Errorf("collect diff: %w", err)
			}
			// The diff's new side must be these bytes: git stored what the
			// file holds, nothing a filter or an attribute made of it.
			if err := snap.Verify(c, data); err != nil {
				return err
			}
			f.Content = data
		}
		gone := c.OldPath // a rename's source, or a deleted file, must be gone
		if c.Status == "deleted" {
			gone = c.Path
		}
		if _, err := ws.Root().Lstat(gone); gone != "" && err == nil {
			return &snapshot.MismatchError{Path: gone, DiffBlob: "(deleted)", FileBlob: "(still there)"}
		}
		b.Files = append(b.Files, f)
	}
	return b.CheckDiff()
}

func readWorkspaceFile(ws *tools.Workspace, p, mode string) ([]byte, error) {
	if mode == "120000" {
		target, err := ws.Root().Readlink(p)
		return []byte(target), err
	}
	return safefile.ReadFile(ws.Root(), p, snapshot.MaxFileBytes)
}

// testFileWarnings flags changes to test files: a fix that edits tests is
// not necessarily wrong, but a reviewer must look at it.
func testFileWarnings(files []bundle.File) []string {
	var out []string
	for _, f := range files {
		base := path.Base(f.Path)
		isTest := strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "test_") ||
			strings.HasSuffix(base, "_test.py") || strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
			strings.HasPrefix(f.Path, "tests/") || strings.Contains(f.Path, "/tests/") || strings.Contains(f.Path, "testdata/")
		if isTest {
			out = append(out, fmt.Sprintf("the change touches a test file (%s, %s): check that no test or assertion was weakened", f.Path, f.Status))
		}
	}
	return out
}

// summarizeFailures lists the failing tests in a run_test output for the model.
func summarizeFailures(output []byte) []string {
	fc, err := failure.Extract(bytes.NewReader(output), failure.Options{})
	if err != nil || fc.Empty() {
		return nil
	}
	var out []string
	for _, f := range fc.Failures {
		line := f.ID
		if f.Location != "" {
			line += " at " + f.Location
		}
		if f.Message != "" {
			line += ": " + firstLine(f.Message)
		}
		out = append(out, line)
	}
	for _, e := range fc.BuildErrors {
		out = append(out, "build error at "+e.Location+": "+firstLine(e.Message))
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
