package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/redact"
	"github.com/org/mini-agent/internal/safefile"
	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/testcmd"
)

// prefetchTimeout bounds the harness's `go mod download` before the first
// run without network.
const prefetchTimeout = 10 * time.Minute

// CredentialMasks returns the masks that hide, from test code, the
// credentials the git configuration of the repository at dir persists
// (actions/checkout's extra header, a URL's user info, in .git/config or
// a file it includes such as $RUNNER_TEMP/git-credentials-*.config): each
// file is replaced, for the sandboxed command only, by its content without
// them. keys name the credentials found (for warnings; never a value).
func CredentialMasks(ctx context.Context, dir string) (masks []sandbox.Mask, keys []string, err error) {
	creds, err := redact.FromGitConfig(ctx, dir)
	masked, merr := redact.Masked(ctx, creds)
	for _, c := range creds {
		if !slices.Contains(keys, c.Key) {
			keys = append(keys, c.Key)
		}
	}
	files := make([]string, 0, len(masked))
	for f := range masked {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		masks = append(masks, sandbox.Mask{Target: f, Content: masked[f]})
	}
	return masks, keys, errors.Join(err, merr)
}

// isolation is what the runs of one RunTest share: the workspace's own
// credential masks, found once, at the first run, when its dependencies
// are fetched too.
type isolation struct {
	once  sync.Once
	masks []sandbox.Mask
}

// firstRun finds the workspace's credential masks and fetches its
// dependencies, once; it returns notes for the first run's outcome.
func (r *RunTest) firstRun(ctx context.Context, env []string) []string {
	var notes []string
	r.iso.once.Do(func() {
		if r.cfg.NoSandbox {
			return
		}
		masks, _, err := CredentialMasks(ctx, r.ws.Dir())
		r.iso.masks = masks
		if err != nil {
			notes = append(notes, "the git config's persisted credentials could not all be masked for test code: "+oneLine(err.Error()))
		}
		if n := r.prefetchModules(ctx, env); n != "" {
			notes = append(notes, n)
		}
	})
	return notes
}

// commandFileVars name the runner's file-command files: a step appends to
// them to set the environment, PATH, outputs and state of the steps after
// it.
var commandFileVars = []string{"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"}

// commandFileDirs are the directories of the runner's file-command files
// env names, and RUNNER_TEMP's _runner_file_commands (where the runner
// keeps them; the action drops the variables but not RUNNER_TEMP).
func commandFileDirs(env []string) []string {
	var out []string
	add := func(d string) {
		if filepath.IsAbs(d) && !slices.Contains(out, filepath.Clean(d)) {
			out = append(out, filepath.Clean(d))
		}
	}
	for _, v := range commandFileVars {
		if p := lastEnv(env, v); p != "" {
			add(filepath.Dir(p))
		}
	}
	if t := lastEnv(env, "RUNNER_TEMP"); t != "" {
		add(filepath.Join(t, "_runner_file_commands"))
	}
	return out
}

// access is the sandbox access of a run: the configured one, with the
// masks of the workspace's own persisted credentials and the runner's
// file-command directories (from env, the harness's) read-only.
func (r *RunTest) access(env []string) sandbox.Access {
	a := r.cfg.Access
	a.ReadOnly = append(slices.Clone(a.ReadOnly), commandFileDirs(env)...)
	a.Masks = append(slices.Clone(a.Masks), r.iso.masks...)
	return a
}

// isolated reports whether runs are meant to have no network: the sandbox
// is on (and this program can launch it) and the network is not opened.
func (c RunTestConfig) isolated() bool {
	return !c.NoSandbox && c.Access.Network != sandbox.NetworkOpen && sandbox.Launcher() != ""
}

var (
	goOnce sync.Once
	goBin  string
)

// harnessGo is the go command the harness's own downloads run, resolved
// once, at the first need (before any test code ran in this process):
// never one test code planted on PATH later.
func harnessGo() string {
	goOnce.Do(func() {
		p, err := exec.LookPath("go")
		if err == nil {
			p, err = filepath.Abs(p)
		}
		if err == nil {
			p, err = filepath.EvalSymlinks(p)
		}
		if err == nil {
			goBin = p
		}
	})
	return goBin
}

// prefetchModules downloads, as the harness and with the network, the Go
// module's dependencies (and the toolchain its go.mod asks for) before the
// first run of a Go test command without network, so `go test` finds them
// in the module cache. Only with RunTestConfig.PrefetchModules (the caller
// knows no test code ran in the workspace yet), only for a go.mod at the
// workspace's root that is not vendored, and only when go.mod and go.sum
// are what the commit has: a module path test code wrote into go.mod would
// otherwise be fetched from the proxy with the network (an exfiltration
// channel). It returns a note when the download did not happen or failed.
func (r *RunTest) prefetchModules(ctx context.Context, env []string) string {
	if !r.cfg.PrefetchModules || !r.cfg.isolated() || r.cfg.Command == nil || r.cfg.Command.Runner() != testcmd.Go {
		return ""
	}
	dir := r.ws.Dir()
	if fi, err := os.Lstat(filepath.Join(dir, "go.mod")); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	if fi, err := os.Lstat(filepath.Join(dir, "vendor")); err == nil && fi.IsDir() {
		return ""
	}
	if changed := moduleFilesChanged(ctx, dir); changed != "" {
		return "the module's dependencies were not downloaded before the run without network: " + changed
	}
	gobin := harnessGo()
	if gobin == "" {
		return "the module's dependencies were not downloaded before the run without network: go is not on PATH"
	}
	res, err := proc.Run(ctx, proc.Spec{Dir: dir, Argv: []string{gobin, "mod", "download"}, Env: env,
		Timeout: prefetchTimeout, MergeStderr: true})
	out := strings.TrimSpace(string(res.Stdout.Bytes()))
	switch {
	case err != nil:
		return "go mod download before the run without network: " + err.Error()
	case res.TimedOut || res.ExitCode != 0:
		return fmt.Sprintf("go mod download before the run without network failed (exit %d): %s; tests that need a missing module fail (--test-network open gives them the network)",
			res.ExitCode, oneLine(truncate(out, 500)))
	}
	return ""
}

// moduleFilesChanged says how go.mod or go.sum differ from the commit
// ("" when they do not, or when the workspace is no repository).
func moduleFilesChanged(ctx context.Context, dir string) string {
	if _, err := gitexec.Output(ctx, gitexec.Options{Dir: dir}, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return ""
	}
	out, err := gitexec.Output(ctx, gitexec.Options{Dir: dir}, "status", "--porcelain", "--untracked-files=all", "--", "go.mod", "go.sum")
	if err != nil {
		return "git status: " + oneLine(err.Error())
	}
	if strings.TrimSpace(out) != "" {
		return "go.mod or go.sum differ from the commit"
	}
	return ""
}

// checkLog makes sure the log at path is the file the run wrote: test code
// that can write in the runs dir may have replaced it with a link during
// the run (to a file of the harness's it wants read back), in which case
// what the harness kept in memory replaces it. It returns a note when it
// did.
func checkLog(path string, logErr error, c proc.Capture) string {
	if !errors.Is(logErr, safefile.ErrRefused) {
		return ""
	}
	os.RemoveAll(path) // a link or a directory test code planted: itself, not its target
	if err := safefile.WriteFile(path, []byte(c.String()), 0o600); err != nil {
		return "test code replaced the saved log during the run, and it could not be rewritten: " + err.Error()
	}
	return "test code replaced the saved log during the run: it holds only the head and tail of the output kept in memory"
}
