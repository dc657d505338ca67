// Package proc runs one untrusted-output command the way mini-agent needs:
// in its own session and process group, with a deadline, killing the whole
// group on timeout or cancellation and, at the end of every run, every
// process the run left behind whatever session it moved to (on Linux: a
// cgroup where one can be made, else the child-subreaper re-parenting and
// /proc), with a scrubbed environment, optionally in a kernel sandbox,
// bounded in-memory head/tail capture and an optional capped log file
// receiving the full output.
//
// Leaf engine: imports nothing above it.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/org/mini-agent/internal/safefile"
	"github.com/org/mini-agent/internal/sandbox"
)

// Limits and delays used when a Spec leaves them zero.
const (
	// DefaultCaptureLimit is the memory kept per stream: half head, half tail.
	DefaultCaptureLimit = 1 << 20
	// DefaultLogLimit caps the log file; later output is counted, not written.
	DefaultLogLimit = 64 << 20
	// DefaultKillGrace is how long the group has between SIGTERM and SIGKILL.
	DefaultKillGrace = 3 * time.Second
	// drainDelay bounds the wait for the output pipes to reach EOF after the
	// group is gone: a process that left the group may still hold them.
	drainDelay  = 2 * time.Second
	copyBufSize = 32 << 10
)

// ErrNotStarted is wrapped by Run when the command could not be started
// (for example, the program does not exist).
var ErrNotStarted = errors.New("command did not start")

// Spec describes one command run.
type Spec struct {
	// Dir is the working directory.
	Dir string
	// Argv is the program and its arguments; never passed through a shell.
	Argv []string
	// Then are commands run after Argv, one after another, each while the
	// one before exited 0 within the time limit (a shell's "A && B", with
	// no shell): same directory, environment, sandbox and log, output
	// captured as one, Timeout for them all.
	Then [][]string
	// Env is the child's complete environment. Nil means an empty
	// environment, never the parent's: secrets are not inherited by accident.
	Env []string
	// Timeout bounds the run; zero means only ctx bounds it.
	Timeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL; zero means DefaultKillGrace.
	KillGrace time.Duration
	// CaptureLimit is the memory kept per stream; zero means DefaultCaptureLimit.
	CaptureLimit int
	// MergeStderr sends stderr into the same pipe as stdout (like a terminal
	// shows them); Result.Stdout then holds both and Result.Stderr is empty.
	MergeStderr bool
	// LogPath, when set, receives the full output (both streams, in arrival
	// order), created or truncated with mode 0600.
	LogPath string
	// LogLimit caps the log file; zero means DefaultLogLimit.
	LogLimit int64
	// Sandbox, when set, runs the command confined by it (see package
	// sandbox); where no protection is available it runs unconfined and
	// Result.Sandbox says why.
	Sandbox *sandbox.Policy

	noCgroup bool // tests: use the fallback containment
}

// Result is what a finished run produced.
type Result struct {
	// ExitCode is the process exit status (of the last command run), -1
	// when it was killed by a signal.
	ExitCode int
	// Signal names the signal that killed the process, if any.
	Signal string
	// Duration runs from start until the process exited (summed over the
	// commands run).
	Duration time.Duration
	// TimedOut is set when Spec.Timeout expired and the group was killed.
	TimedOut bool
	// Cancelled is set when ctx ended the run; Run then also returns an error.
	Cancelled bool
	// Stdout is the head and tail of stdout (of both streams with MergeStderr).
	Stdout Capture
	// Stderr is the head and tail of stderr; empty with MergeStderr.
	Stderr Capture
	// LogBytes were written to the log file; LogDropped were over LogLimit.
	LogBytes   int64
	LogDropped int64
	// LogErr is the first error writing the log file. The run itself is
	// still valid: the output kept in memory is complete in its own way.
	LogErr error
	// Containment names the mechanism that found and killed what the run
	// left behind; Leftovers counts the processes it killed after the
	// leader was gone (or killed), over every command run.
	Containment string
	Leftovers   int
	// Sandbox is what confined the command (zero without Spec.Sandbox).
	Sandbox sandbox.Status
	// Steps is how many of Argv and Spec.Then ran (ExitCode is the last
	// one's): fewer than all when one failed, timed out or was cancelled.
	Steps int
}

// Run starts s.Argv and waits for it, then each of s.Then in turn while
// the one before exited 0 within the time limit. A non-zero exit or a
// timeout is a normal Result; an error is returned when a command could
// not start (wrapping ErrNotStarted), when ctx ended the run (wrapping
// ctx's error; the Result is still filled) or for an I/O failure setting
// the run up.
func Run(ctx context.Context, s Spec) (Result, error) {
	steps := append([][]string{s.Argv}, s.Then...)
	for _, argv := range steps {
		if len(argv) == 0 || argv[0] == "" {
			return Result{}, fmt.Errorf("run: %w: empty command", ErrNotStarted)
		}
	}
	if err := ctx.Err(); err != nil {
		return Result{Cancelled: true}, fmt.Errorf("run %s: %w", s.Argv[0], err)
	}
	captureLimit := s.CaptureLimit
	if captureLimit <= 0 {
		captureLimit = DefaultCaptureLimit
	}

	var log *logWriter
	if s.LogPath != "" {
		// Never through a link: the log's directory may be one test code
		// can write to (the runs dir sits in the temp dir).
		f, err := safefile.Create(s.LogPath, 0o600)
		if err != nil {
			return Result{}, fmt.Errorf("run %s: log: %w", s.Argv[0], err)
		}
		limit := s.LogLimit
		if limit <= 0 {
			limit = DefaultLogLimit
		}
		log = &logWriter{f: f, limit: limit}
		defer log.close()
	}
	// One capture per stream for all the steps: their output follows one
	// another as a shell's would.
	captures := []*HeadTail{NewHeadTail(captureLimit/2, captureLimit-captureLimit/2)}
	if !s.MergeStderr {
		captures = append(captures, NewHeadTail(captureLimit/2, captureLimit-captureLimit/2))
	}

	// The time limit is the whole run's, whatever the steps.
	runCtx, cancel := context.WithCancel(ctx)
	if s.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, s.Timeout)
	}
	defer cancel()

	var res Result
	var ended bool
	for _, argv := range steps {
		st, err := runStep(runCtx, s, argv, captures, log)
		res.Steps++
		res.Duration += st.Duration
		res.Leftovers += st.Leftovers
		res.Containment, res.Sandbox = st.Containment, st.Sandbox
		res.ExitCode, res.Signal = st.ExitCode, st.Signal
		if err != nil {
			if errors.Is(err, ErrNotStarted) {
				res.Steps--
			}
			return res, err
		}
		ended = st.ended
		if ended || st.ExitCode != 0 {
			break
		}
	}
	res.Stdout = captures[0].Capture()
	if len(captures) > 1 {
		res.Stderr = captures[1].Capture()
	}
	if log != nil {
		res.LogBytes, res.LogDropped, res.LogErr = log.finish()
	}
	if ended {
		if err := ctx.Err(); err != nil {
			res.Cancelled = true
			return res, fmt.Errorf("run %s: %w", s.Argv[0], err)
		}
		res.TimedOut = true
	}
	return res, nil
}

// step is what one command of a run gave.
type step struct {
	Result
	ended bool // the run's context ended it (timeout or cancellation)
}

// runStep runs one command of s: its own pipes into the run's captures and
// log, its own process group, containment and sandbox, bounded by runCtx.
func runStep(runCtx context.Context, s Spec, argv []string, captures []*HeadTail, log *logWriter) (step, error) {
	name := argv[0]
	grace := s.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	streams := make([]*stream, len(captures))
	for i, c := range captures {
		r, w, err := os.Pipe()
		if err != nil {
			closeStreams(streams)
			return step{}, fmt.Errorf("run %s: pipe: %w", name, err)
		}
		streams[i] = &stream{r: r, w: w, capture: c, log: log}
	}

	launch := sandbox.Launch{Argv: argv, Env: s.Env}
	if s.Sandbox != nil {
		// The command is resolved here, as exec.Command would, so a missing
		// program is still ErrNotStarted and not a wrapper's exit status.
		path, err := resolve(s.Dir, argv[0])
		if err != nil {
			closeStreams(streams)
			return step{}, fmt.Errorf("run %s: %w: %w", name, ErrNotStarted, err)
		}
		p := *s.Sandbox
		if p.Dir == "" {
			p.Dir = s.Dir
		}
		launch = sandbox.Prepare(p, append([]string{path}, argv[1:]...), s.Env)
		if !launch.Status.Active() {
			launch.Argv, launch.Env = argv, s.Env
		}
	}
	argv = launch.Argv
	newCmd := func() *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = s.Dir
		cmd.Env = launch.Env
		if cmd.Env == nil {
			cmd.Env = []string{}
		}
		cmd.Stdout = streams[0].w
		cmd.Stderr = streams[len(streams)-1].w
		return cmd
	}
	cmd := newCmd()
	rec := setRunAttrs(cmd, s.noCgroup)
	launch.SetAttrs(cmd.SysProcAttr)

	start := time.Now()
	beginStart()
	err := cmd.Start()
	if err != nil && rec.startFailed(cmd) {
		// A cgroup the kernel would not clone into: run without it.
		attr := cmd.SysProcAttr
		cmd = newCmd()
		cmd.SysProcAttr = attr
		start = time.Now()
		err = cmd.Start()
	}
	if err != nil {
		endStart()
		closeStreams(streams)
		return step{}, fmt.Errorf("run %s: %w: %w", name, ErrNotStarted, err)
	}
	rec.started(cmd.Process.Pid)
	endStart()
	var copies sync.WaitGroup
	for _, st := range streams {
		st.w.Close() // the child holds its own copy
		st.w = nil
		copies.Go(st.copy)
	}

	waitCh := make(chan error, 1)
	go func() { waitCh <- cmd.Wait() }()
	var waitErr error
	var ended bool
	select {
	case waitErr = <-waitCh:
	case <-runCtx.Done():
		ended = true
		waitErr = terminate(cmd.Process, waitCh, grace)
	}
	res := step{Result: Result{Duration: time.Since(start), Containment: rec.mechanism()}, ended: ended}
	if s.Sandbox != nil {
		res.Sandbox = launch.Status
	}
	// Background members of the group (a server a test forgot, a sleeping
	// grandchild) and processes that left it (a daemon that called setsid)
	// would keep the pipes open and outlive the run.
	killGroup(cmd.Process)
	res.Leftovers = rec.endRun()
	drain(&copies, streams)
	closeStreams(streams)

	res.ExitCode = cmd.ProcessState.ExitCode()
	res.Signal = exitSignal(cmd.ProcessState)
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, fmt.Errorf("run %s: wait: %w", name, waitErr)
	}
	return res, nil
}

// resolve finds the program the way exec.Command does: a bare name on PATH,
// a path relative to dir.
func resolve(dir, name string) (string, error) {
	if !strings.Contains(name, string(filepath.Separator)) {
		return exec.LookPath(name)
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
		if !filepath.IsAbs(p) {
			abs, err := filepath.Abs(p)
			if err != nil {
				return "", err
			}
			p = abs
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s: not an executable file", name)
	}
	return p, nil
}

// terminate asks the group to stop, then kills it after grace, and returns
// the leader's wait error.
func terminate(p *os.Process, waitCh <-chan error, grace time.Duration) error {
	termGroup(p)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-waitCh:
		return err
	case <-t.C:
	}
	killGroup(p)
	return <-waitCh
}

// drain waits for the copy goroutines to reach EOF, and past drainDelay
// unblocks them: a process outside the group may hold a pipe forever.
func drain(copies *sync.WaitGroup, streams []*stream) {
	done := make(chan struct{})
	go func() { copies.Wait(); close(done) }()
	t := time.NewTimer(drainDelay)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	for _, st := range streams {
		if err := st.r.SetReadDeadline(time.Now()); err != nil {
			st.r.Close()
		}
	}
	// Where pipes cannot be interrupted, give up on the goroutines rather
	// than hang: captures are safe to read concurrently.
	t.Reset(drainDelay)
	select {
	case <-done:
	case <-t.C:
	}
}

// stream is one output pipe and where its bytes go.
type stream struct {
	r, w    *os.File
	capture *HeadTail
	log     *logWriter
}

func (st *stream) copy() {
	buf := make([]byte, copyBufSize)
	for {
		n, err := st.r.Read(buf)
		if n > 0 {
			st.capture.Write(buf[:n])
			if st.log != nil {
				st.log.Write(buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

func closeStreams(streams []*stream) {
	for _, st := range streams {
		if st.r != nil {
			st.r.Close()
		}
		if st.w != nil {
			st.w.Close()
		}
	}
}

// logWriter writes the full output to a file up to a limit, never failing
// the copy (a failing sink would stop draining the pipe and block the child).
type logWriter struct {
	mu      sync.Mutex
	f       io.WriteCloser
	limit   int64
	n       int64
	dropped int64
	err     error
	closed  bool
}

var _ io.Writer = (*logWriter)(nil)

func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keep := int64(len(p))
	if room := l.limit - l.n; keep > room {
		keep = max(room, 0)
	}
	l.dropped += int64(len(p)) - keep
	if keep > 0 && l.err == nil {
		w, err := l.f.Write(p[:keep])
		l.n += int64(w)
		if err != nil {
			l.err = err
		}
	}
	return len(p), nil
}

// finish notes a truncation at the end of the file and closes it.
func (l *logWriter) finish() (written, dropped int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped > 0 && l.err == nil {
		if _, err := fmt.Fprintf(l.f, "\n[mini-agent: log capped at %d bytes; %d more bytes were not saved]\n", l.limit, l.dropped); err != nil {
			l.err = err
		}
	}
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	l.closed = true
	return l.n, l.dropped, l.err
}

func (l *logWriter) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.f.Close()
		l.closed = true
	}
}
