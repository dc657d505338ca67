// Package gitexec runs the harness's own git commands. The code under test
// may write the repository's .git/config, .gitattributes, $HOME and any
// user-writable PATH directory, so every call here uses one git binary
// resolved once at start-up, an allow-listed environment (no token, no API
// key), no configuration but the repository's own with everything that
// runs code from it switched off (hooks, fsmonitor; no global or system
// config, so no filter or diff driver defined there), its own process
// group killed when its deadline passes or its context ends.
//
// Leaf engine: imports nothing above it.
package gitexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/org/mini-agent/internal/proc"
)

// DefaultTimeout bounds one git call unless the caller asks for another.
const DefaultTimeout = 30 * time.Second

// waitDelay bounds how long Wait waits for pipes after the group was killed.
const waitDelay = 2 * time.Second

// maxStderr is how much of git's error output an error carries.
const maxStderr = 2 << 10

var (
	once    sync.Once
	gitPath string
	gitErr  error
)

// Init resolves git on PATH to an absolute path, once: later changes to
// PATH or to the directories on it (a `git` planted by test code in
// ~/.local/bin) are never seen. Call it at start-up, before any code under
// test runs; every other function calls it too, so a package used on its
// own resolves git at its first call.
func Init() error {
	once.Do(func() {
		p, err := exec.LookPath("git")
		if err == nil {
			p, err = filepath.Abs(p)
		}
		if err == nil {
			p, err = filepath.EvalSymlinks(p)
		}
		if err != nil {
			gitErr = fmt.Errorf("git: %w", err)
			return
		}
		gitPath = p
	})
	return gitErr
}

// Path is the absolute path of the git binary every call runs.
func Path() (string, error) {
	if err := Init(); err != nil {
		return "", err
	}
	return gitPath, nil
}

// SafeConfig are the -c options every call starts with: nothing the
// repository configures that runs a program is honoured, and files git
// would otherwise read from config-chosen paths are not read.
var SafeConfig = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "core.excludesFile=" + os.DevNull,
	"-c", "core.attributesFile=" + os.DevNull,
	"-c", "core.quotepath=off",
	"-c", "core.autocrlf=false",
	"-c", "core.pager=cat",
	"-c", "core.askPass=",
	"-c", "credential.helper=",
	"-c", "protocol.allow=never",
	"-c", "diff.external=",
	"-c", "safe.directory=*",
}

// Options configure one call.
type Options struct {
	// Dir is the working directory.
	Dir string
	// Env are extra variables; only GIT_* names are accepted (GIT_DIR,
	// GIT_INDEX_FILE, GIT_AUTHOR_NAME...).
	Env []string
	// Stdin feeds git's standard input; nil means none.
	Stdin io.Reader
	// Timeout bounds the call; zero means DefaultTimeout.
	Timeout time.Duration
}

// Run runs git with args and returns its standard output. A failure's
// error carries the first part of git's standard error.
func Run(ctx context.Context, opt Options, args ...string) ([]byte, error) {
	inner, cancel := context.WithTimeout(ctx, timeoutOf(opt))
	defer cancel()
	cmd, err := command(inner, opt, args...)
	if err != nil {
		return nil, err
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &limitedBuffer{buf: &errb, left: maxStderr}
	if err := cmd.Run(); err != nil {
		name := "git"
		if len(args) > 0 {
			name += " " + args[0]
		}
		if ctx.Err() == nil && errors.Is(inner.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (killed: its %s deadline passed)", err, timeoutOf(opt))
		}
		return nil, fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// Output is Run with the output as a string, trailing newlines removed.
func Output(ctx context.Context, opt Options, args ...string) (string, error) {
	out, err := Run(ctx, opt, args...)
	return strings.TrimRight(string(out), "\n"), err
}

// Command builds the exec.Cmd of one call, for callers that stream its
// output. Call the returned cancel function when done with it.
func Command(ctx context.Context, opt Options, args ...string) (*exec.Cmd, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, timeoutOf(opt))
	cmd, err := command(ctx, opt, args...)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return cmd, cancel, nil
}

func command(ctx context.Context, opt Options, args ...string) (*exec.Cmd, error) {
	path, err := Path()
	if err != nil {
		return nil, err
	}
	for _, kv := range opt.Env {
		if !strings.HasPrefix(kv, "GIT_") || !strings.Contains(kv, "=") {
			return nil, fmt.Errorf("gitexec: extra environment %q is not a GIT_* variable", kv)
		}
	}
	cmd := exec.CommandContext(ctx, path, append(append([]string(nil), SafeConfig...), args...)...)
	cmd.Dir = opt.Dir
	cmd.Env = Env(opt.Env)
	cmd.Stdin = opt.Stdin
	proc.Contain(cmd, waitDelay)
	return cmd, nil
}

func timeoutOf(opt Options) time.Duration {
	if opt.Timeout > 0 {
		return opt.Timeout
	}
	return DefaultTimeout
}

// allowedNames are the only variables of the process environment a git
// child gets, whatever else is set (GITHUB_TOKEN, model API keys, names the
// maintainer configured as secrets that this package cannot know).
var allowedNames = map[string]bool{"HOME": true, "LANG": true, "TZ": true, "TMPDIR": true}

// windowsNames are needed for git to start on Windows.
var windowsNames = map[string]bool{"SYSTEMROOT": true, "WINDIR": true, "USERPROFILE": true, "PROGRAMDATA": true,
	"LOCALAPPDATA": true, "APPDATA": true, "COMSPEC": true, "PATHEXT": true, "TEMP": true, "TMP": true}

// fixedEnv are set on every call: no prompt, no pager, no config but the
// repository's, no replace refs, no optional lock (so a listing never
// rewrites the index), C locale for parseable messages.
var fixedEnv = []string{
	"GIT_TERMINAL_PROMPT=0",
	"GIT_PAGER=cat",
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=" + os.DevNull,
	"GIT_ATTR_NOSYSTEM=1",
	"GIT_NO_REPLACE_OBJECTS=1",
	"GIT_OPTIONAL_LOCKS=0",
	"GIT_ADVICE=0",
	"LC_ALL=C",
}

// Env returns the environment a git child gets: the allow-listed variables
// of this process (never a GIT_* one it inherited, which could point git at
// another repository), a PATH of the git binary's directory and the system
// directories only, the fixed settings, then extra.
func Env(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || proc.IsSecretName(name, nil) {
			continue
		}
		u := strings.ToUpper(name)
		keep := allowedNames[u] || strings.HasPrefix(u, "LC_") && u != "LC_ALL"
		if runtime.GOOS == "windows" && windowsNames[u] {
			keep = true
		}
		if keep {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+safePATH())
	env = append(env, fixedEnv...)
	return append(env, extra...)
}

// safePATH is the PATH git runs with: nothing git itself does for the
// harness looks a program up on PATH, and should it ever do so, it finds
// only its own directory and the system's, never a user-writable one the
// process PATH listed first.
func safePATH() string {
	dirs := []string{}
	if gitPath != "" {
		dirs = append(dirs, filepath.Dir(gitPath))
	}
	if runtime.GOOS == "windows" {
		if root := os.Getenv("SYSTEMROOT"); root != "" {
			dirs = append(dirs, filepath.Join(root, "System32"), root)
		}
	} else {
		dirs = append(dirs, "/usr/bin", "/bin")
	}
	return strings.Join(dirs, string(os.PathListSeparator))
}

// limitedBuffer keeps the first left bytes written to it.
type limitedBuffer struct {
	buf  *bytes.Buffer
	left int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if l.left > 0 {
		k := min(l.left, len(p))
		l.buf.Write(p[:k])
		l.left -= k
	}
	return n, nil
}
