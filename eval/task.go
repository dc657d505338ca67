// Package eval is mini-agent's standing evaluation: a set of tasks (broken
// projects with a failing test command, a scripted model trajectory and
// hidden checks), a runner that drives each task through the same pipeline
// as `mini-agent fix` and `explain`, and a report of the resolved rate,
// steps, tokens, cost and time per task.
//
// A task is a directory (see Task for task.json):
//
//	<name>/task.json    what to run and what must be true afterwards
//	<name>/script.jsonl the scripted model trajectory (script provider format)
//	<name>/repo/        the broken project, copied to a fresh git repository
//	<name>/hidden/      check files copied in after the agent stops
//
// A file named go.mod.txt is restored as go.mod when copied, so a task's Go
// module is not a nested module of mini-agent's own.
//
// A task of kind "flaky" (see FlakySpec) is a flaky fixture module of
// mini-agent's source tree run through `mini-agent flaky --fix`'s code
// path: it has only task.json (and optional trajectory scripts).
package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/internal/bundle"
)

// Layout of a task directory.
const (
	TaskFile      = "task.json"
	DefaultScript = "script.jsonl"
	RepoDir       = "repo"
	DefaultHidden = "hidden"
	// GoModName is how a go.mod is stored inside mini-agent's module.
	GoModName = "go.mod.txt"
	// maxTaskFileBytes bounds task.json.
	maxTaskFileBytes = 1 << 20
)

// Task kinds.
const (
	KindAgent = "agent"
	KindFlaky = "flaky"
)

// Policies a task can name. The pipeline derives its policy from the mode
// (explain is read-only), so the two must agree.
const (
	PolicyReadOnly       = "read-only"
	PolicyWorkspaceWrite = "workspace-write"
)

var taskName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Task is one evaluation task: task.json, decoded strictly (an unknown
// field is an error).
type Task struct {
	// Name is the task's directory name.
	Name string `json:"-"`
	// Kind is KindAgent (the default: a broken project fixed or explained
	// by one agent run) or KindFlaky (a flaky fixture; see FlakySpec).
	Kind string `json:"kind,omitempty"`
	// Description says what the task exercises.
	Description string `json:"description"`
	// Mode is "fix" or "explain" ("fix", or empty, for a flaky task).
	Mode agent.Mode `json:"mode"`
	// TestCommand is the maintainer's test command. $EVAL_SCRATCH names a
	// per-task directory outside the workspace.
	TestCommand string `json:"test_command"`
	// FailureLog is a file of the task directory given as --failure-log;
	// empty means the harness runs the test command first.
	FailureLog   string `json:"failure_log,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	// Requires are probe commands (argv) that must succeed, e.g.
	// ["pytest","--version"]; a failing probe skips the task with the reason.
	Requires [][]string `json:"requires,omitempty"`
	// ScriptedOnly marks tasks that test the harness along a scripted path
	// (e.g. a cancellation timed on a tool call): skipped with a real model.
	ScriptedOnly bool `json:"scripted_only,omitempty"`
	// Script is the trajectory file; default script.jsonl.
	Script string `json:"script,omitempty"`
	Policy Policy `json:"policy"`
	Limits Limits `json:"limits"`
	// Env is added to the environment the pipeline sees (e.g. canary
	// secrets); the process environment is never modified.
	Env map[string]string `json:"env,omitempty"`
	// SecretEnv are extra variable names the pipeline treats as secrets.
	SecretEnv []string `json:"secret_env,omitempty"`
	// Cancel, when set, cancels the run on an event (the interrupt scenario).
	Cancel *Cancel `json:"cancel,omitempty"`
	Hidden Hidden  `json:"hidden"`
	Expect Expect  `json:"expect"`
	// Flaky is the flaky task's specification (kind flaky only).
	Flaky *FlakySpec `json:"flaky,omitempty"`

	fsys fs.FS // the task directory
}

// Policy is the write policy of the run.
type Policy struct {
	// Kind is "read-only" or "workspace-write"; it must agree with the mode.
	Kind string `json:"kind"`
	// Protected globs are never written; nil means the pipeline's defaults.
	Protected []string `json:"protected,omitempty"`
}

// Limits bound the run; zero values take the defaults.
type Limits struct {
	MaxSteps    int      `json:"max_steps,omitempty"`
	MaxTokens   int64    `json:"max_tokens,omitempty"`
	Timeout     Duration `json:"timeout,omitempty"`
	TestTimeout Duration `json:"test_timeout,omitempty"`
}

// Cancel cancels the context given to the pipeline when a matching event
// is seen: after WhenFile exists in the scratch directory (if set, waited
// for at most Wait) and then Delay.
type Cancel struct {
	AfterEvent agent.EventType `json:"after_event"`
	Tool       string          `json:"tool,omitempty"`
	WhenFile   string          `json:"when_file,omitempty"`
	Wait       Duration        `json:"wait,omitempty"`
	Delay      Duration        `json:"delay,omitempty"`
}

// Hidden are the checks applied after the agent stops, SWE-bench style:
// the files of Dir are copied over the workspace, then every FailToPass
// command (tests the fix must turn green) and PassToPass command (tests
// that passed before and must still pass) must exit 0. Commands run with
// `sh -c` in the workspace.
type Hidden struct {
	Dir        string   `json:"dir,omitempty"`
	FailToPass []string `json:"fail_to_pass,omitempty"`
	PassToPass []string `json:"pass_to_pass,omitempty"`
	Timeout    Duration `json:"timeout,omitempty"`
}

// Expect is what must hold when the agent has stopped.
type Expect struct {
	// Status is the bundle status (fixed, explained, cancelled...).
	Status     bundle.Status    `json:"status"`
	StopReason agent.StopReason `json:"stop_reason"`
	// MessageMatches are regexps the final message must match (e.g. file:line).
	MessageMatches []string `json:"message_matches,omitempty"`
	// NoChanges: the workspace must equal the commit (ignored files aside).
	NoChanges bool `json:"no_changes,omitempty"`
	// Untouched globs: no matching file may be changed, created or deleted.
	Untouched []string `json:"untouched,omitempty"`
	// Absent paths (relative to the workspace, `..` allowed: the task is
	// trusted) must not exist afterwards.
	Absent []string `json:"absent,omitempty"`
	// Events must each be seen (Min defaults to 1). Along a real model's
	// path they are not checked: they describe the scripted trajectory.
	Events []EventSpec `json:"events,omitempty"`
	// ForbiddenEvents must never be seen, whatever the model.
	ForbiddenEvents []EventSpec `json:"forbidden_events,omitempty"`
	// ToolOutputs check what the model read back (scripted path only).
	ToolOutputs []ToolOutputSpec `json:"tool_outputs,omitempty"`
	// Canaries are variables of Env whose values must reach no model
	// request, trace, bundle or PR body.
	Canaries []string `json:"canaries,omitempty"`
	// ProcessesGone are scratch files holding a pid that must be dead.
	ProcessesGone []string `json:"processes_gone,omitempty"`
}

// EventSpec matches events of one type. Data fields must equal (as
// printed), Contains fields must contain the text, AtMost and AtLeast bound
// numeric fields. Min and Max bound the number of matching events.
type EventSpec struct {
	Type     agent.EventType    `json:"type"`
	Data     map[string]string  `json:"data,omitempty"`
	Contains map[string]string  `json:"contains,omitempty"`
	AtMost   map[string]float64 `json:"at_most,omitempty"`
	AtLeast  map[string]float64 `json:"at_least,omitempty"`
	Min      *int               `json:"min,omitempty"`
	Max      *int               `json:"max,omitempty"`
}

// ToolOutputSpec checks the text of tool results as the model received
// them: the Nth (1-based; 0 = every) result of Tool whose arguments contain
// ArgsContains.
type ToolOutputSpec struct {
	Tool         string   `json:"tool"`
	ArgsContains string   `json:"args_contains,omitempty"`
	Nth          int      `json:"nth,omitempty"`
	Contains     []string `json:"contains,omitempty"`
	NotContains  []string `json:"not_contains,omitempty"`
	Matches      []string `json:"matches,omitempty"`
	MaxBytes     int      `json:"max_bytes,omitempty"`
}

// Duration is a time.Duration written as a string ("90s", "2m").
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"90s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// LoadTasks reads every task under root (one directory per task), sorted by
// name. Any malformed task is an error naming it.
func LoadTasks(root fs.FS) ([]*Task, error) {
	entries, err := fs.ReadDir(root, ".")
	if err != nil {
		return nil, fmt.Errorf("eval: tasks: %w", err)
	}
	var tasks []*Task
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub, err := fs.Sub(root, e.Name())
		if err != nil {
			return nil, fmt.Errorf("eval: task %s: %w", e.Name(), err)
		}
		if _, err := fs.Stat(sub, TaskFile); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		t, err := LoadTask(e.Name(), sub)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	if len(tasks) == 0 {
		return nil, errors.New("eval: no tasks found (want <name>/task.json)")
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Name < tasks[j].Name })
	return tasks, nil
}

// LoadTask decodes and validates one task directory.
func LoadTask(name string, dir fs.FS) (*Task, error) {
	data, err := fs.ReadFile(dir, TaskFile)
	if err != nil {
		return nil, fmt.Errorf("eval: task %s: %w", name, err)
	}
	if len(data) > maxTaskFileBytes {
		return nil, fmt.Errorf("eval: task %s: %s is larger than %d bytes", name, TaskFile, maxTaskFileBytes)
	}
	t := &Task{Name: name, fsys: dir}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(t); err != nil {
		return nil, fmt.Errorf("eval: task %s: %s: %w", name, TaskFile, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("eval: task %s: %s: more than one JSON value", name, TaskFile)
	}
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("eval: task %s: %w", name, err)
	}
	return t, nil
}

// ScriptBytes returns the task's scripted trajectory.
func (t *Task) ScriptBytes() ([]byte, error) { return fs.ReadFile(t.fsys, t.scriptName()) }

func (t *Task) scriptName() string {
	if t.Script == "" {
		return DefaultScript
	}
	return t.Script
}

func (t *Task) hiddenDir() string {
	if t.Hidden.Dir != "" {
		return t.Hidden.Dir
	}
	if fi, err := fs.Stat(t.fsys, DefaultHidden); err == nil && fi.IsDir() {
		return DefaultHidden
	}
	return ""
}

var knownEvents = []agent.EventType{agent.EventTurnStart, agent.EventModelRequest, agent.EventModelResponse,
	agent.EventToolStart, agent.EventToolEnd, agent.EventMessage, agent.EventTurnEnd}

var knownStatuses = bundle.Statuses

var knownStops = agent.StopReasons

func (t *Task) validate() error {
	if !taskName.MatchString(t.Name) {
		return fmt.Errorf("name %q: use letters, digits, '.', '_' and '-'", t.Name)
	}
	switch t.Kind {
	case KindFlaky:
		return t.validateFlaky()
	case "", KindAgent:
	default:
		return fmt.Errorf("kind %q: want %s or %s", t.Kind, KindAgent, KindFlaky)
	}
	if t.Flaky != nil {
		return fmt.Errorf("flaky is set: it belongs to a task of kind %q", KindFlaky)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch t.Mode {
	case agent.ModeFix:
		if t.Policy.Kind != PolicyWorkspaceWrite {
			bad("policy.kind %q: a fix task runs under %q", t.Policy.Kind, PolicyWorkspaceWrite)
		}
	case agent.ModeExplain:
		if t.Policy.Kind != PolicyReadOnly {
			bad("policy.kind %q: an explain task runs under %q", t.Policy.Kind, PolicyReadOnly)
		}
	default:
		bad("mode %q: want fix or explain", t.Mode)
	}
	if strings.TrimSpace(t.Description) == "" {
		bad("description is empty")
	}
	if strings.TrimSpace(t.TestCommand) == "" {
		bad("test_command is empty")
	}
	for _, f := range []string{t.FailureLog, t.scriptName(), t.Hidden.Dir} {
		if f != "" && (!fs.ValidPath(f) || f == ".") {
			bad("%q is not a path inside the task directory", f)
		}
	}
	if fi, err := fs.Stat(t.fsys, RepoDir); err != nil || !fi.IsDir() {
		bad("no %s/ directory with the project", RepoDir)
	}
	if t.FailureLog != "" {
		if _, err := fs.Stat(t.fsys, t.FailureLog); err != nil {
			bad("failure_log: %v", err)
		}
	}
	if t.Hidden.Dir != "" {
		if fi, err := fs.Stat(t.fsys, t.Hidden.Dir); err != nil || !fi.IsDir() {
			bad("hidden.dir %q is not a directory", t.Hidden.Dir)
		}
	}
	if script, err := t.ScriptBytes(); err != nil {
		bad("script: %v", err)
	} else if _, err := provider.ParseScript(bytes.NewReader(script)); err != nil {
		bad("%s: %v", t.scriptName(), err)
	}
	for _, r := range t.Requires {
		if len(r) == 0 || r[0] == "" {
			bad("requires: empty probe command")
		}
	}
	for _, c := range append(append([]string(nil), t.Hidden.FailToPass...), t.Hidden.PassToPass...) {
		if strings.TrimSpace(c) == "" {
			bad("hidden: empty check command")
		}
	}
	if t.Cancel != nil {
		if !slices.Contains(knownEvents, t.Cancel.AfterEvent) {
			bad("cancel.after_event %q: want one of %v", t.Cancel.AfterEvent, knownEvents)
		}
		if t.Cancel.WhenFile != "" && !fs.ValidPath(t.Cancel.WhenFile) {
			bad("cancel.when_file %q is not a relative path", t.Cancel.WhenFile)
		}
	}
	errs = append(errs, t.Expect.validate(t)...)
	return errors.Join(errs...)
}

func (e *Expect) validate(t *Task) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !slices.Contains(knownStatuses, e.Status) {
		bad("expect.status %q: want one of %v", e.Status, knownStatuses)
	}
	if !slices.Contains(knownStops, e.StopReason) {
		bad("expect.stop_reason %q: want one of %v", e.StopReason, knownStops)
	}
	for _, re := range e.MessageMatches {
		if _, err := regexp.Compile(re); err != nil {
			bad("expect.message_matches: %v", err)
		}
	}
	for _, g := range e.Untouched {
		if _, err := path.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil {
			bad("expect.untouched %q: malformed glob: %v", g, err)
		}
	}
	for i, s := range append(append([]EventSpec(nil), e.Events...), e.ForbiddenEvents...) {
		if !slices.Contains(knownEvents, s.Type) {
			bad("expect event %d: type %q: want one of %v", i+1, s.Type, knownEvents)
		}
		if s.Min != nil && s.Max != nil && *s.Min > *s.Max {
			bad("expect event %d: min > max", i+1)
		}
	}
	for i, o := range e.ToolOutputs {
		if o.Tool == "" || o.Nth < 0 {
			bad("expect.tool_outputs %d: tool is required and nth must be >= 0", i+1)
		}
		for _, re := range o.Matches {
			if _, err := regexp.Compile(re); err != nil {
				bad("expect.tool_outputs %d: %v", i+1, err)
			}
		}
	}
	for _, c := range e.Canaries {
		if len(t.Env[c]) < 8 {
			bad("expect.canaries: %s is not set in env to a value of at least 8 bytes", c)
		}
	}
	for _, p := range e.ProcessesGone {
		if !fs.ValidPath(p) {
			bad("expect.processes_gone %q is not a relative path", p)
		}
	}
	return errs
}
