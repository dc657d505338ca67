// Package bundle defines the seam between thinking and publishing: what a
// run produced (diff, changed files, trace digest, final message,
// assumptions, validation, usage). It serialises to one JSON file so a
// read-only job can produce it and a job holding a write token can publish it.
//
// Job level: the job runner writes it, the publisher reads it; it imports only the loop's types (and safefile, to write it).
package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/safefile"
)

// Version is the bundle format version.
const Version = 1

// MaxSize bounds a bundle file: anything larger is refused on load.
const MaxSize = 64 << 20

// Status is how a run ended, as the bundle records it ("validation-failed");
// the JSON is the plain string. What the action reports after publishing
// is publish.Status, mapped from this one by publish.StatusOf.
type Status string

// Statuses of a run.
const (
	StatusFixed            Status = "fixed"
	StatusNotFixed         Status = "not-fixed"
	StatusValidationFailed Status = "validation-failed"
	StatusExplained        Status = "explained"
	StatusNothingToFix     Status = "nothing-to-fix"
	StatusCancelled        Status = "cancelled"
	// StatusNotReproduced: the failing tests pass at the base on a clean
	// checkout here (every baseline run): no fix can be proven, none is
	// claimed.
	StatusNotReproduced Status = "not-reproduced"
	// StatusRefused: the model refused the task, or the provider's filter
	// blocked its reply (stop reason refused): no fix, no diagnosis.
	// RunInfo.Refusal holds what was said.
	StatusRefused Status = "refused"
)

// Statuses lists every status, in the order above.
var Statuses = []Status{StatusFixed, StatusNotFixed, StatusValidationFailed, StatusExplained, StatusNothingToFix, StatusCancelled,
	StatusNotReproduced, StatusRefused}

// Bundle is the result of one run.
type Bundle struct {
	Version   int        `json:"version"`
	Mode      agent.Mode `json:"mode"`
	Status    Status     `json:"status"`
	Provider  string     `json:"provider"`
	Model     string     `json:"model"`
	BaseSHA   string     `json:"base_sha,omitempty"`
	Branch    string     `json:"branch,omitempty"`
	Command   string     `json:"test_command"`
	Signature string     `json:"signature,omitempty"`
	// FailingTests are the ids the failure context named.
	FailingTests []string `json:"failing_tests,omitempty"`
	// Failure is the rendered failure context the model was given.
	Failure string `json:"failure,omitempty"`

	Diff    string `json:"diff"`
	Files   []File `json:"files,omitempty"`
	Message string `json:"final_message,omitempty"`
	// Report is Message split into Summary, Root cause and Assumptions.
	Report agent.Report `json:"report"`

	Validation []Check `json:"validation,omitempty"`
	// Baseline is what the target tests did at the base commit on a clean
	// checkout before the agent ran; Proof is the published tree's runs on
	// a clean checkout after it (nil when no change was validated).
	Baseline *Baseline `json:"baseline,omitempty"`
	Proof    *Proof    `json:"proof,omitempty"`
	// TreeSHA is the git tree id of the validated tree (the base commit's
	// tree with Files): publish commits exactly this tree or nothing.
	TreeSHA   string      `json:"tree_sha,omitempty"`
	Run       RunInfo     `json:"run"`
	Steps     []Step      `json:"steps,omitempty"`
	Usage     agent.Usage `json:"usage"`
	CostUSD   float64     `json:"cost_usd"`
	CostKnown bool        `json:"cost_known"`
	Warnings  []string    `json:"warnings,omitempty"`
	// Reverted lists what code under test changed that the harness undid:
	// .git in every mode, the workspace in explain mode.
	Reverted []Reverted   `json:"reverted,omitempty"`
	Extra    ExtraContext `json:"context,omitempty"`
	// WhyStopped says in one line why a run ended without a validated fix
	// or a diagnosis ("not fixed: the model ended without a patch after 4
	// turns"); empty when it did not (report.Why).
	WhyStopped string `json:"why_stopped,omitempty"`
	// MiniAgentVersion is the version of the mini-agent that made the run.
	MiniAgentVersion string `json:"mini_agent_version,omitempty"`

	// Isolation names what contained the test command's latest run: the
	// mechanism that killed what it left running, and the kernel sandbox
	// (or why there was none).
	Isolation string `json:"isolation,omitempty"`
}

// ExtraContext carries publishing context (GitHub run, PR) when known.
type ExtraContext struct {
	RunURL   string `json:"run_url,omitempty"`
	Workflow string `json:"workflow,omitempty"`
	Job      string `json:"job,omitempty"`
	Policy   string `json:"policy,omitempty"`
	Reason   string `json:"policy_reason,omitempty"`
}

// Reverted is one change made by code under test that the harness found
// after a run of the test command and undid (or failed to: Restored false,
// Error says why).
type Reverted struct {
	Path     string `json:"path"`
	Change   string `json:"change"` // added, modified, removed, type changed
	Where    string `json:"where"`  // ".git" or "workspace"
	After    string `json:"after"`  // "run_test call 2", "initial run", "validation"
	Restored bool   `json:"restored"`
	Error    string `json:"error,omitempty"`
}

// File is the final state of one changed file.
type File struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"`
	Status  string `json:"status"`
	Mode    string `json:"mode,omitempty"`
	Content []byte `json:"content,omitempty"` // base64 in JSON; empty for deletes
}

// Check is one validation command the harness ran itself.
type Check struct {
	Name     string  `json:"name"`
	Command  string  `json:"command"`
	ExitCode int     `json:"exit_code"`
	Duration float64 `json:"duration_s"`
	TimedOut bool    `json:"timed_out,omitempty"`
	Passed   bool    `json:"passed"`
	Tail     string  `json:"output_tail,omitempty"`
}

// RunInfo is the loop's own account of how it ended.
type RunInfo struct {
	StopReason agent.StopReason `json:"stop_reason"`
	Detail     string           `json:"detail"`
	Steps      int              `json:"steps"`
	ToolCalls  int              `json:"tool_calls"`
	ToolErrors int              `json:"tool_errors"`
	Denials    int              `json:"policy_denials"`
	Refusals   int              `json:"patch_refusals"`
	Duration   float64          `json:"duration_s"`
	// Refusal is what the model (or the provider's filter) said when it
	// refused (stop reason refused), redacted.
	Refusal string `json:"refusal,omitempty"`
}

// Step is one tool call as the PR trace shows it.
type Step struct {
	Step     int    `json:"step"`
	Tool     string `json:"tool"`
	Args     string `json:"args"`
	Outcome  string `json:"outcome"`
	Code     string `json:"code,omitempty"`
	Duration string `json:"duration"`
}

// StepsFromEvents extracts the trace digest from the event stream.
func StepsFromEvents(events []agent.Event) []Step {
	var out []Step
	for _, e := range events {
		if e.Type != agent.EventToolEnd {
			continue
		}
		s := Step{Tool: str(e.Data["tool"]), Args: str(e.Data["args"]), Outcome: str(e.Data["outcome"]),
			Code: str(e.Data["code"]), Duration: str(e.Data["duration"])}
		switch n := e.Data["step"].(type) {
		case int:
			s.Step = n
		case float64:
			s.Step = int(n)
		}
		out = append(out, s)
	}
	return out
}

func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// ReadOnly reports whether the run was made in explain mode, the read-only
// one: such a bundle may carry no change.
func (b *Bundle) ReadOnly() bool { return b.Mode == agent.ModeExplain }

// StoppedEarly reports whether the loop ended some other way than with the
// model's final message (a limit, an error, cancellation). A bundle made
// before the loop ran records no stop reason and did not stop early.
func (r RunInfo) StoppedEarly() bool {
	return r.StopReason != "" && r.StopReason != agent.StopFinalMessage
}

// Validated reports whether every validation check passed and, for a
// bundle that carries one, the proof on the published tree holds.
func (b *Bundle) Validated() bool {
	if len(b.Validation) == 0 {
		return false
	}
	if b.Proof != nil && !b.Proof.Holds {
		return false
	}
	for _, c := range b.Validation {
		if !c.Passed {
			return false
		}
	}
	return true
}

// CheckDiff parses the diff with go-gitdiff and verifies it names exactly
// the bundle's files: a bundle whose diff and files disagree is refused.
func (b *Bundle) CheckDiff() error {
	if strings.TrimSpace(b.Diff) == "" {
		if len(b.Files) > 0 {
			return errors.New("bundle: files listed but the diff is empty")
		}
		return nil
	}
	files, _, err := gitdiff.Parse(strings.NewReader(b.Diff))
	if err != nil {
		return fmt.Errorf("bundle: diff does not parse: %w", err)
	}
	inDiff := map[string]bool{}
	for _, f := range files {
		if f.IsDelete {
			inDiff[f.OldName] = true
		} else {
			inDiff[f.NewName] = true
		}
	}
	if len(inDiff) != len(b.Files) {
		return fmt.Errorf("bundle: diff names %d files, bundle lists %d", len(inDiff), len(b.Files))
	}
	for _, f := range b.Files {
		if !inDiff[f.Path] {
			return fmt.Errorf("bundle: %s is listed but not in the diff", f.Path)
		}
	}
	return nil
}

// Write saves the bundle as indented JSON, never through a link: a
// symlink or anything but a regular file at path is refused (see
// safefile.WriteFile), and the file is replaced whole.
func (b *Bundle) Write(path string) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	if err := safefile.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	return nil
}

// Read loads and checks a bundle: size, version, diff consistency.
func Read(path string) (*Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read bundle: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read bundle: %w", err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("read bundle: larger than %d bytes", MaxSize)
	}
	var b Bundle
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("read bundle: %w", err)
	}
	if b.Version != Version {
		return nil, fmt.Errorf("read bundle: version %d, this binary reads version %d", b.Version, Version)
	}
	if err := b.CheckDiff(); err != nil {
		return nil, err
	}
	return &b, nil
}
