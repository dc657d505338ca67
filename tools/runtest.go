package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/safefile"
	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/testcmd"
)

// DefaultRunTestTimeout bounds one run_test call when the config leaves it zero.
const DefaultRunTestTimeout = 10 * time.Minute

// Bounds on what the model reads from one run. The header (command, notes,
// failing tests) and the output view together stay under maxAnswerBytes.
const (
	maxAnswerBytes    = 32 << 10
	answerHeadBytes   = 8 << 10
	answerTailBytes   = 17 << 10
	maxFailingLines   = 40
	maxFailingBytes   = 4 << 10
	maxLineBytes      = 300
	maxCommandDisplay = 1000
	maxLogReservation = 100000
)

// RunTestConfig configures the run_test tool.
type RunTestConfig struct {
	// Command is the maintainer's test command, parsed once by
	// testcmd.Parse (e.g. "go test ./..."). It is trusted; only the model's
	// narrowing is validated. Nil means none is configured: each call then
	// answers that run_test is not configured.
	Command *testcmd.Command
	// Timeout bounds each run; zero means DefaultRunTestTimeout.
	Timeout time.Duration
	// SecretNames are extra environment variables to scrub (see proc.IsSecretName).
	SecretNames []string
	// EnvAllow are extra environment variables the command keeps, beyond
	// proc.IsAllowedName's list ("NAME", or "PREFIX*"); secret-looking
	// names are dropped all the same.
	EnvAllow []string
	// Env is the base environment before filtering; nil means os.Environ().
	Env []string
	// WritableDirs are extra directories the command may write to in the
	// sandbox, beyond the workspace, the temp dir and the tool caches.
	WritableDirs []string
	// NoSandbox runs the command without the kernel sandbox.
	NoSandbox bool
	// Uncached makes every run of Run and RunStressed (the harness's runs:
	// baseline, validation, stress) have the runner's result caches off:
	// testcmd.Invocation.Uncached (go test -count=1, pytest -p
	// no:cacheprovider), so a pass is a run, not a replay. The model's
	// run_test calls (Execute) keep the runner's defaults.
	Uncached bool
	// ReadOnlyModules leaves the Go module cache (GOMODCACHE, and each
	// GOPATH entry's pkg directory that holds the default one) out of the
	// sandbox's writable places: the harness downloaded the dependencies
	// before, and test code must not rewrite them. A module cache inside
	// another writable place (the temp dir) stays writable; `go mod
	// verify` is the check there.
	ReadOnlyModules bool
	// Access is what the sandboxed command may reach beyond the defaults
	// (--test-network open, --test-socket) and what it must not see (the
	// masks of credentials persisted in another checkout's config, for a
	// clean checkout's runs); the masks of the workspace's own persisted
	// credentials are added at the first run (CredentialMasks).
	Access sandbox.Access
	// PrefetchModules: before the first run without network, download the
	// Go module's dependencies as the harness (the caller knows no test
	// code ran in the workspace yet). See prefetchModules.
	PrefetchModules bool
	// Summarize, if set, extracts the failing tests from the (bounded)
	// combined output, one line each.
	Summarize func(output []byte) []string
}

// RunTest is the run_test tool. It runs only the configured command, with
// the model's narrowing mapped onto it as separate argv entries.
type RunTest struct {
	ws  *Workspace
	cfg RunTestConfig

	iso isolation

	mu          sync.Mutex
	next        int    // last log number handed out
	hidden      bool   // the latest run had persisted credentials hidden
	protections string // what confined the latest run
	leftovers   int    // processes the latest run left, killed
	runs        int    // runs finished (started or not)
}

// NewRunTest returns the run_test tool for ws. A missing command is not an
// error here: each call then answers that run_test is not configured.
func NewRunTest(ws *Workspace, cfg RunTestConfig) *RunTest {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultRunTestTimeout
	}
	return &RunTest{ws: ws, cfg: cfg}
}

// RunOutcome is what one run of the test command produced.
type RunOutcome struct {
	// RunID is N in the log's name, @runs/N.log.
	RunID    int
	ExitCode int
	// Signal names the signal that killed the command, if any.
	Signal   string
	Duration time.Duration
	TimedOut bool
	// Argv is the command as run (["sh", "-c", line] for shell syntax; a
	// suite's commands joined by "&&" words, run one after another without
	// a shell: Invocation.Steps).
	Argv []string
	// LogPath is the full combined output, outside the workspace; LogRef is
	// the pseudo-path read_file pages it with.
	LogPath string
	LogRef  string
	// Output is a bounded head and tail of the combined output, with a
	// marker saying what was omitted and how to read it.
	Output       string
	OutputBytes  int64
	OutputLines  int64
	OutputCutOff bool
	// Failing lists the failing tests Summarize found.
	Failing []string
	// Notes say how the narrowing was interpreted.
	Notes []string
	// Invocation is what testcmd built the argv from; it reads the run's
	// output (Invocation.NotPassed: did the selected tests really pass).
	Invocation *testcmd.Invocation
	// Protections names what contained the run (the mechanism that killed
	// its leftovers, the kernel sandbox or why there was none); Leftovers
	// counts the processes killed after the command ended.
	Protections string
	Leftovers   int
}

// Passed reports a zero exit within the time limit.
func (o RunOutcome) Passed() bool { return o.ExitCode == 0 && !o.TimedOut }

var errNotConfigured = errors.New("run_test is not configured")

// Run runs the configured command once, narrowed to sel (empty: the whole
// suite) in the given output form, the way Execute does, for the harness
// to see what fails and to validate a fix without the model. An invalid
// narrowing wraps testcmd.ErrNarrowing; a missing command, or one that
// cannot start, wraps proc.ErrNotStarted or says run_test is not
// configured; on cancellation the outcome is filled and the context's
// error is returned. With RunTestConfig.Uncached the runner's result
// caches are off.
func (r *RunTest) Run(ctx context.Context, sel testcmd.Selection, form testcmd.Form) (RunOutcome, error) {
	return r.runSelected(ctx, sel, form, r.cfg.Uncached)
}

// runSelected is Run, with the runner's result caches off when uncached.
func (r *RunTest) runSelected(ctx context.Context, sel testcmd.Selection, form testcmd.Form, uncached bool) (RunOutcome, error) {
	if r.cfg.Command == nil {
		return RunOutcome{}, fmt.Errorf("%w: no test command is configured", errNotConfigured)
	}
	inv, err := r.cfg.Command.Argv(narrowFS{r.ws}, sel, form)
	if err != nil {
		return RunOutcome{}, err
	}
	if uncached {
		inv = inv.Uncached()
	}
	return r.run(ctx, inv)
}

// RunStressed is Run with the stressors s applied to the invocation (go
// test -count, -race, -shuffle, -cpu), through the same contained path.
// Runners without such flags return an error wrapping
// testcmd.ErrUnsupported: the caller repeats plain runs instead. With
// RunTestConfig.Uncached the runner's result caches are off (applied after
// the stressors, so a stress count stays the run's -count).
func (r *RunTest) RunStressed(ctx context.Context, sel testcmd.Selection, form testcmd.Form, s testcmd.Stress) (RunOutcome, error) {
	if r.cfg.Command == nil {
		return RunOutcome{}, fmt.Errorf("%w: no test command is configured", errNotConfigured)
	}
	inv, err := r.cfg.Command.Argv(narrowFS{r.ws}, sel, form)
	if err != nil {
		return RunOutcome{}, err
	}
	if inv, err = inv.Stress(s); err != nil {
		return RunOutcome{}, err
	}
	if r.cfg.Uncached {
		inv = inv.Uncached()
	}
	return r.run(ctx, inv)
}

// narrowFS is the workspace as testcmd checks narrowing paths in it.
type narrowFS struct{ ws *Workspace }

func (n narrowFS) Resolve(p string) (string, error)   { return n.ws.Resolve(p) }
func (n narrowFS) Stat(p string) (fs.FileInfo, error) { return n.ws.Root().Stat(p) }

func (r *RunTest) run(ctx context.Context, inv *testcmd.Invocation) (RunOutcome, error) {
	argv := inv.Argv // (a suite's shows its commands joined by "&&" words)
	steps := inv.Steps()
	defer r.ws.InvalidateFileList() // the command may create or delete files: search lists the tree again
	id, logPath, err := r.reserveLog()
	if err != nil {
		return RunOutcome{}, err
	}
	env := r.cfg.Env
	if env == nil {
		env = os.Environ()
	}
	harnessEnv := env
	env = proc.AllowEnv(env, r.cfg.EnvAllow, r.cfg.SecretNames)
	first := r.firstRun(ctx, env)
	spec := proc.Spec{
		Dir:         r.ws.Dir(),
		Argv:        steps[0],
		Then:        steps[1:],
		Env:         env,
		Timeout:     r.cfg.Timeout,
		MergeStderr: true,
		LogPath:     logPath,
	}
	if !r.cfg.NoSandbox {
		spec.Sandbox = &sandbox.Policy{Launcher: sandbox.Launcher(), Dir: r.ws.Dir(), Writable: r.writable(env), Access: r.access(harnessEnv)}
	}
	res, runErr := proc.Run(ctx, spec)
	if errors.Is(runErr, proc.ErrNotStarted) {
		os.Remove(logPath)
		return RunOutcome{}, fmt.Errorf("test command %q: %w", r.cfg.Command.Line(), runErr)
	}
	out := RunOutcome{
		RunID: id, ExitCode: res.ExitCode, Signal: res.Signal, Duration: res.Duration, TimedOut: res.TimedOut,
		Argv: argv, LogPath: logPath, LogRef: fmt.Sprintf("%s%d.log", RunsPrefix, id),
		Notes: slices.Clone(inv.Notes), Invocation: inv,
		OutputBytes: res.Stdout.TotalBytes, OutputLines: res.Stdout.TotalLines,
		Protections: protections(res, r.cfg.NoSandbox), Leftovers: res.Leftovers,
	}
	r.mu.Lock()
	r.protections, r.leftovers = out.Protections, out.Leftovers
	r.hidden = res.Sandbox.Masked > 0
	r.runs++
	r.mu.Unlock()
	out.Notes = append(out.Notes, first...)
	if note := checkLog(logPath, res.LogErr, res.Stdout); note != "" {
		out.Notes = append(out.Notes, note)
		res.LogErr, res.LogDropped = nil, 0 // rewritten whole, from memory
	}
	view := res.Stdout.Trim(answerHeadBytes, answerTailBytes)
	out.OutputCutOff = view.Truncated()
	out.Output = renderOutput(view, out.LogRef)
	if r.cfg.Summarize != nil {
		out.Failing = r.cfg.Summarize(res.Stdout.Bytes())
	}
	out.Notes = append(out.Notes, inv.Diagnose(out.ExitCode, res.Stdout.Bytes())...)
	if res.Leftovers > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d processes the command left running were killed", res.Leftovers))
	}
	if res.LogDropped > 0 {
		kept := appendTail(logPath, res.Stdout, res.LogDropped)
		out.Notes = append(out.Notes, fmt.Sprintf("the saved log %s was capped at %d bytes; of the %d bytes after the cap, the last %d are appended to it after the cap marker", out.LogRef, res.LogBytes, res.LogDropped, kept))
	}
	if res.LogErr != nil {
		out.Notes = append(out.Notes, "the full log could not be saved completely: "+res.LogErr.Error())
	}
	if runErr != nil {
		return out, fmt.Errorf("run_test: %w", runErr)
	}
	return out, nil
}

// appendTail adds to a capped log the part of the output's in-memory tail
// that the cap dropped, so that what failed at the very end (the usual
// place) is in the file failure extraction and read_file read. It returns
// the bytes added.
func appendTail(path string, c proc.Capture, dropped int64) int64 {
	tail := c.Tail
	if int64(len(tail)) > dropped {
		tail = tail[int64(len(tail))-dropped:]
	}
	if int64(len(tail)) < dropped {
		// Bytes between the cap and the tail are lost: start at a line.
		if i := bytes.IndexByte(tail, '\n'); i >= 0 && i+1 < len(tail) {
			tail = tail[i+1:]
		}
	}
	if len(tail) == 0 {
		return 0
	}
	// Never through a link: test code can reach the runs dir (it is in
	// the temp dir) and may have swapped the log for one during the run.
	f, err := safefile.Append(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	header := fmt.Sprintf("[mini-agent: the last %d bytes of output, kept in memory, follow]\n", len(tail))
	if _, err := f.WriteString(header); err != nil {
		return 0
	}
	n, _ := f.Write(tail)
	return int64(n)
}

// reserveLog claims the next free N.log in the runs dir. O_EXCL keeps two
// RunTest values sharing a workspace from overwriting each other's logs.
func (r *RunTest) reserveLog() (int, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for range maxLogReservation {
		r.next++
		p := filepath.Join(r.ws.RunsDir(), fmt.Sprintf("%d.log", r.next))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return 0, "", fmt.Errorf("run_test: log file: %w", err)
		}
		f.Close()
		return r.next, p, nil
	}
	return 0, "", errors.New("run_test: no free log file name")
}
