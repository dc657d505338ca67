package bundle

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/org/mini-agent/agent"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fullBundle sets every field, so that a change to any field's JSON name,
// type or omission rule shows in the golden file.
func fullBundle() *Bundle {
	return &Bundle{
		Version: Version, Mode: "fix", Status: StatusValidationFailed,
		Provider: "openai", Model: "gpt-x", BaseSHA: "0123456789abcdef0123456789abcdef01234567",
		Branch: "mini-agent/fix-1", Command: "go test ./...", Signature: "sig-1",
		FailingTests: []string{"TestA", "TestB/sub"},
		Failure:      "--- FAIL: TestA\n    a_test.go:3: boom\n",
		Diff:         diff,
		Files:        []File{{Path: "a.go", Status: "modified", Mode: "100644", Content: []byte("package b\n")}},
		Message:      "## Summary\nfixed\n",
		Report:       agent.Report{Summary: "fixed", RootCause: "typo", Assumptions: []string{"none"}, Structured: true},
		Validation: []Check{
			{Name: "failing tests", Command: "go test -run '^TestA$' ./...", ExitCode: 0, Duration: 1.5, Passed: true, Tail: "ok"},
			{Name: "full", Command: "go test ./...", ExitCode: 1, Duration: 2.25, TimedOut: true, Tail: "FAIL"},
		},
		Run: RunInfo{StopReason: "max_steps", Detail: "the step limit was reached", Steps: 30, ToolCalls: 41,
			ToolErrors: 2, Denials: 1, Refusals: 3, Duration: 12.5},
		Steps:     []Step{{Step: 1, Tool: "read_file", Args: "path=a.go", Outcome: "ok", Code: "", Duration: "1ms"}, {Step: 2, Tool: "apply_patch", Args: "patch=<3 lines>", Outcome: "error", Code: "no_match", Duration: "2ms"}},
		Usage:     agent.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 50, CacheWriteTokens: 7},
		CostUSD:   0.0123,
		CostKnown: true,
		Warnings:  []string{"a warning"},
		Reverted: []Reverted{{Path: ".git/hooks/pre-commit", Change: "added", Where: ".git", After: "run_test call 2", Restored: true},
			{Path: "x", Change: "modified", Where: "workspace", After: "validation", Error: "busy"}},
		Extra: ExtraContext{RunURL: "https://github.com/o/r/actions/runs/1", Workflow: "CI", Job: "test",
			Policy: "propose", Reason: "no label"},
		WhyStopped:       "not fixed: the harness's validation failed",
		MiniAgentVersion: "v1.2.3",
		Isolation:        "cgroup; landlock",
	}
}

// TestJSONGolden pins the bundle's JSON: the file written is byte for byte
// the golden file (made before Status and Mode were typed), and reading it
// back and writing again gives the same bytes.
func TestJSONGolden(t *testing.T) {
	t.Parallel()
	golden := filepath.Join("testdata", "bundle.golden.json")
	out := filepath.Join(t.TempDir(), "b.json")
	if err := fullBundle().Write(out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("bundle JSON changed:\n got: %s\nwant: %s", got, want)
	}
	b, err := Read(golden)
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "again.json")
	if err := b.Write(again); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(again); !bytes.Equal(data, want) {
		t.Fatalf("golden bundle read and written again differs:\n%s", data)
	}
}
