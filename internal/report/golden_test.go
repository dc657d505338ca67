package report

import (
	"path/filepath"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/golden"
)

// goldenCases are bundles that cover each branch of the renderers: every
// status, a rename, failed and timed-out checks, warnings, a stop detail,
// a scripted provider and an unknown price.
func goldenCases() []struct {
	name string
	b    *bundle.Bundle
	o    Options
} {
	fixed := sample()
	fixed.MiniAgentVersion = "v1.2.3"
	fixed.FailingTests = []string{"TestTotal"}
	fixed.Diff = "--- a/cart.go\n+++ b/cart.go\n@@ -14 +14 @@\n-\tfor i := 1; i < len(items); i++ {\n+\tfor i := 0; i < len(items); i++ {\n"
	fixed.Extra.Policy, fixed.Extra.Reason = "propose", "A same-repository push failed; the fix goes to a new branch."

	notFixed := sample()
	notFixed.Status = bundle.StatusNotFixed
	notFixed.Report = agent.ParseReport("I changed some things.")
	notFixed.Files, notFixed.Validation = nil, nil
	notFixed.Run = bundle.RunInfo{StopReason: agent.StopMaxSteps, Steps: 30, Duration: 61.25,
		Detail: "stopped: the step limit (30 model turns) was reached. Done: 30 model turns, 29 tool calls. Remains: the failing test."}
	notFixed.Steps = []bundle.Step{
		{Step: 1, Tool: "read_file", Args: "path=cart.go", Outcome: "ok", Duration: "1ms"},
		{Step: 2, Tool: "apply_patch", Args: "*** Begin Patch\n*** Update File: `x`", Outcome: "error", Code: "patch_conflict", Duration: "3ms"},
	}
	notFixed.CostKnown = false

	failed := sample()
	failed.Status = bundle.StatusValidationFailed
	failed.Files = []bundle.File{
		{Path: "z.go", Status: "added"},
		{Path: "new/cart.go", OldPath: "cart.go", Status: "renamed"},
	}
	failed.Validation = []bundle.Check{
		{Name: "failing tests", Command: "go test -run '^TestTotal$' ./...", ExitCode: 1, Duration: 2.04},
		{Name: "full test command", Command: "go test ./... | tee x", ExitCode: -1, Duration: 600, TimedOut: true},
	}
	failed.Isolation = "landlock"
	failed.Warnings = []string{"the test command changed go.sum; the change was reverted"}

	explained := sample()
	explained.Mode, explained.Status = "explain", bundle.StatusExplained
	explained.Files, explained.Validation, explained.Steps = nil, nil, nil
	explained.Report = agent.ParseReport("## Summary\nThe loop starts at 1.\n## Root cause\ncart.go:14\n## Assumptions\n")
	explained.Provider, explained.Model = "script", "replay"

	nothing := sample()
	nothing.Status = bundle.StatusNothingToFix
	nothing.Report, nothing.Files, nothing.Steps, nothing.Extra = agent.Report{}, nil, nil, bundle.ExtraContext{}
	nothing.Signature = ""
	nothing.Run = bundle.RunInfo{}

	proven := sample()
	proven.FailingTests = []string{"TestTotal"}
	proven.Baseline = &bundle.Baseline{Verdict: bundle.VerdictReproduced, Commit: "0123456789abcdef0123456789abcdef01234567",
		Phase: bundle.Phase{Targets: []bundle.TestRecord{{ID: "TestTotal", Runs: 3, Failures: 3, Message: "cart_test.go:8: want 1500"}},
			Failed: []string{"TestNeedsDocker", "TestTotal"}, FullRan: true, Runs: 3},
		PreExisting: []string{"TestNeedsDocker"}}
	proven.Proof = &bundle.Proof{Holds: true, Phase: bundle.Phase{Tree: "89abcdef0123456789abcdef0123456789abcdef",
		Targets: []bundle.TestRecord{{ID: "TestTotal", Runs: 3}}, Failed: []string{"TestNeedsDocker"}, FullRan: true, Runs: 3}}
	proven.TreeSHA = proven.Proof.Tree

	notReproduced := sample()
	notReproduced.Status = bundle.StatusNotReproduced
	notReproduced.FailingTests = []string{"TestTotal"}
	notReproduced.Report, notReproduced.Files, notReproduced.Steps, notReproduced.Validation = agent.Report{}, nil, nil, nil
	notReproduced.Diff, notReproduced.Run = "", bundle.RunInfo{}
	notReproduced.Baseline = &bundle.Baseline{Verdict: bundle.VerdictNotReproduced, Commit: "0123456789abcdef0123456789abcdef01234567",
		Phase:         bundle.Phase{Targets: []bundle.TestRecord{{ID: "TestTotal", Runs: 3}}, FullRan: true, FullPassed: true, Runs: 3},
		Environment:   []string{"os/arch: linux/amd64", "cpus: 2", "go: go version go1.26.8 linux/amd64", "RUNNER_OS=Linux"},
		CIEnvironment: []string{"runner: 2.330.0", "os: Ubuntu 24.04.3 LTS", "image: ubuntu-24.04 20261124.1.0", "go: go1.25.4 linux/amd64", "env set by its steps: GOFLAGS"}}

	return []struct {
		name string
		b    *bundle.Bundle
		o    Options
	}{
		{"proven", proven, Options{}},
		{"not-reproduced", notReproduced, Options{}},
		{"fixed", fixed, Options{CINote: "CI will not run on this PR: it was opened with the workflow token."}},
		{"not-fixed", notFixed, Options{}},
		{"validation-failed", failed, Options{Headline: "no validated fix", Version: "v9.9.9"}},
		{"explained", explained, Options{}},
		{"nothing-to-fix", nothing, Options{}},
	}
}

// The rendered PR body and terminal report, byte for byte. After an
// intended change: go test ./internal/report -run Golden -update, then
// review git diff testdata/golden.
func TestGoldenRenderings(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			golden.AssertString(t, filepath.Join("testdata", "golden", c.name+".body.md"), Body(c.b, c.o))
			golden.AssertString(t, filepath.Join("testdata", "golden", c.name+".text.txt"), Text(c.b))
		})
	}
}
