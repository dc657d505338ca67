package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/internal/diffcheck"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/testcmd"
)

// FlakySpec is a flaky task: a flaky fixture module, the test that is
// flaky in it, and two scripted fix trajectories. The task is resolved when
// (1) the detection finds Test flaky on a fresh copy of the fixture, (2)
// the Proper trajectory's fix is proven (the rerun bar met, the suite
// clean under -race -shuffle=on) and (3) the Forbidden trajectory's fix,
// on another fresh copy, is rejected with RejectedBy among the rejecting
// findings. Both fixes go through flakyfix.Fix, the code path of
// `mini-agent flaky --fix`, with the detection's evidence.
type FlakySpec struct {
	// Fixture is the fixture module's directory, a slash path relative to
	// mini-agent's source tree (Options.Source). Its *.diff files are the
	// patches and are not copied into the workspace.
	Fixture string `json:"fixture"`
	// Test is the flaky test's ID as the detection names it (a Go test's
	// name, a pytest node ID).
	Test string `json:"test"`
	// Tests narrows the detection, as `mini-agent flaky --tests` does;
	// empty examines the whole suite.
	Tests []string `json:"tests,omitempty"`
	// Proper is the root-cause fix's trajectory; a real model replaces it.
	Proper Trajectory `json:"proper"`
	// Forbidden is a forbidden "fix"'s trajectory, scripted whatever the
	// model (it proves the harness refuses it). A rejected first diff goes
	// back to the model once, so it usually has two attempts.
	Forbidden Trajectory `json:"forbidden"`
	// RejectedBy is the anti-pattern check (internal/diffcheck's name) that
	// must reject the forbidden fix.
	RejectedBy string `json:"rejected_by"`
	// MaxRuns and MaxTime bound the detection and, separately, the rerun
	// bar (`mini-agent flaky --max-runs/--max-minutes`); zero takes
	// DefaultFlakyMaxRuns and DefaultFlakyMaxTime.
	MaxRuns int      `json:"max_runs,omitempty"`
	MaxTime Duration `json:"max_time,omitempty"`
}

// Trajectory is a scripted fix: either Patches, files of the fixture
// directory each sent as one apply_patch call followed by a final message
// (one fix attempt per patch), or Script, a file of the task directory in
// the script provider's format.
type Trajectory struct {
	Patches []string `json:"patches,omitempty"`
	Script  string   `json:"script,omitempty"`
}

// Defaults of a flaky task.
const (
	// DefaultFlakyMaxRuns bounds the command runs of the detection, and of
	// the rerun bar. The bar needs about twice the detection's runs (5
	// failures at rate p take about 5/p runs; the bar is at least 2 ×
	// that), so flakyrun's default of 40 would leave a fixture failing one
	// run in four unproven about 4 times in 10; 120 covers a one-in-six
	// flake's 99th percentile.
	DefaultFlakyMaxRuns = 120
	// DefaultFlakyMaxTime bounds the detection, and the rerun bar.
	DefaultFlakyMaxTime = 6 * time.Minute
	// DefaultFlakyTaskTimeout bounds a whole flaky task: the detection,
	// two fix trajectories, the rerun bar and the -race suite run.
	DefaultFlakyTaskTimeout = 15 * time.Minute
	// maxPatchBytes bounds one patch file of a fixture.
	maxPatchBytes = 1 << 20
)

// rejectingChecks are diffcheck's checks that reject a diff (the two
// others only flag it).
var rejectingChecks = []string{diffcheck.NewSleep, diffcheck.TimeoutOnly, diffcheck.RetryLoop, diffcheck.NewSkip,
	diffcheck.NewBuildTag, diffcheck.DeletedTest, diffcheck.RenamedTest, diffcheck.FewerAssertions, diffcheck.NewRecover,
	diffcheck.DiscardedError, diffcheck.PytestFlakyMarker, diffcheck.JestRetry, diffcheck.ProtectedFile}

// validateFlaky checks a task of kind flaky: the fields of an agent task's
// run and checks have no meaning here and are refused, not ignored.
func (t *Task) validateFlaky() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if t.Mode != "" && t.Mode != agent.ModeFix {
		bad("mode %q: a flaky task fixes", t.Mode)
	}
	t.Mode = agent.ModeFix
	if t.Policy.Kind != "" && t.Policy.Kind != PolicyWorkspaceWrite {
		bad("policy.kind %q: a flaky task runs under %q", t.Policy.Kind, PolicyWorkspaceWrite)
	}
	if strings.TrimSpace(t.Description) == "" {
		bad("description is empty")
	}
	if _, err := testcmd.Parse(t.TestCommand); err != nil {
		bad("test_command: %v", err)
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"failure_log", t.FailureLog != ""}, {"script", t.Script != ""}, {"scripted_only", t.ScriptedOnly},
		{"cancel", t.Cancel != nil}, {"hidden", !reflect.ValueOf(t.Hidden).IsZero()}, {"expect", !reflect.ValueOf(t.Expect).IsZero()},
	} {
		if f.set {
			bad("%s: a flaky task has none (its checks are the detection, the rerun bar and the diff checks)", f.name)
		}
	}
	if _, err := fs.Stat(t.fsys, RepoDir); err == nil {
		bad("a flaky task has no %s/ directory: its project is flaky.fixture", RepoDir)
	}
	for _, r := range t.Requires {
		if len(r) == 0 || r[0] == "" {
			bad("requires: empty probe command")
		}
	}
	f := t.Flaky
	if f == nil {
		bad("flaky: missing (fixture, test, proper, forbidden, rejected_by)")
		return errors.Join(errs...)
	}
	if !fs.ValidPath(f.Fixture) || f.Fixture == "." {
		bad("flaky.fixture %q: want a slash path inside mini-agent's source tree", f.Fixture)
	}
	if strings.TrimSpace(f.Test) == "" {
		bad("flaky.test is empty")
	}
	for _, id := range f.Tests {
		if strings.TrimSpace(id) == "" {
			bad("flaky.tests: empty test ID")
		}
	}
	if !slices.Contains(rejectingChecks, f.RejectedBy) {
		bad("flaky.rejected_by %q: want one of the rejecting checks %v", f.RejectedBy, rejectingChecks)
	}
	if f.MaxRuns < 0 || f.MaxRuns > flaky.MaxRuns {
		bad("flaky.max_runs %d: want a positive number of runs (0: the default)", f.MaxRuns)
	}
	if err := f.Proper.validate(t.fsys); err != nil {
		bad("flaky.proper: %v", err)
	}
	if err := f.Forbidden.validate(t.fsys); err != nil {
		bad("flaky.forbidden: %v", err)
	}
	return errors.Join(errs...)
}

func (tj Trajectory) validate(task fs.FS) error {
	switch {
	case len(tj.Patches) == 0 && tj.Script == "":
		return errors.New("give patches (files of the fixture) or script (a file of the task)")
	case len(tj.Patches) > 0 && tj.Script != "":
		return errors.New("give patches or script, not both")
	case tj.Script != "":
		if !fs.ValidPath(tj.Script) || tj.Script == "." {
			return fmt.Errorf("script %q is not a path inside the task directory", tj.Script)
		}
		data, err := fs.ReadFile(task, tj.Script)
		if err != nil {
			return fmt.Errorf("script: %w", err)
		}
		if _, err := provider.ParseScript(bytes.NewReader(data)); err != nil {
			return fmt.Errorf("%s: %w", tj.Script, err)
		}
	}
	for _, p := range tj.Patches {
		if !fs.ValidPath(p) || p == "." {
			return fmt.Errorf("patch %q is not a path inside the fixture", p)
		}
	}
	return nil
}

// scriptBytes is the trajectory in the script provider's format. Patches
// are read from the fixture directory on disk (untrusted size: bounded).
func (tj Trajectory) scriptBytes(task fs.FS, fixtureDir, test string) ([]byte, error) {
	if tj.Script != "" {
		return fs.ReadFile(task, tj.Script)
	}
	var b bytes.Buffer
	for _, p := range tj.Patches {
		name := filepath.Join(fixtureDir, filepath.FromSlash(p))
		fi, err := os.Stat(name)
		if err != nil {
			return nil, fmt.Errorf("patch %s: %w", p, err)
		}
		if !fi.Mode().IsRegular() || fi.Size() > maxPatchBytes {
			return nil, fmt.Errorf("patch %s: not a regular file of at most %d bytes", p, maxPatchBytes)
		}
		patch, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("patch %s: %w", p, err)
		}
		call := map[string]any{"tool_calls": []any{map[string]any{"name": "apply_patch", "arguments": map[string]string{"patch": string(patch)}}}}
		msg := map[string]string{"message": fmt.Sprintf("## Summary\nApplied %s to fix the flaky test %s.\n\n## Root cause\nSee %s.\n\n## Assumptions\n- none",
			path.Base(p), test, path.Base(p))}
		for _, v := range []any{call, msg} {
			line, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			b.Write(append(line, '\n'))
		}
	}
	if _, err := provider.ParseScript(bytes.NewReader(b.Bytes())); err != nil {
		return nil, fmt.Errorf("the trajectory built from %v: %w", tj.Patches, err)
	}
	return b.Bytes(), nil
}
