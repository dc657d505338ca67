package action

import (
	"cmp"
	"io"
	"net/http"
	"os"
	"time"
)

// Limits of the action.
const (
	// maxEventBytes bounds GITHUB_EVENT_PATH.
	maxEventBytes = 25 << 20
	// maxJobLogBytes bounds one job's log; maxLogBytes all of them.
	maxJobLogBytes = 32 << 20
	maxLogBytes    = 96 << 20
	// apiCallTimeout bounds one GitHub call, its retry waits and a job log's
	// download included: a hung connection must not hold the job until
	// GitHub's 6-hour limit (the transport bounds only the response headers).
	apiCallTimeout = 10 * time.Minute
)

// Env is everything the action reads from outside: the environment (inputs
// and the runner's GITHUB_* variables) and where workflow commands go.
// Tests inject all of it; nothing here reads the process environment.
type Env struct {
	Getenv  func(string) string
	Environ []string
	// Stdout receives workflow commands and the log.
	Stdout io.Writer
	Stderr io.Writer
	// HTTPClient and WriteInterval configure the GitHub client (tests).
	HTTPClient    *http.Client
	WriteInterval time.Duration
	// CallTimeout bounds one GitHub call (retries and a log download's body
	// included) when HTTPClient has no Timeout; 0 means apiCallTimeout.
	CallTimeout time.Duration
	// Version is mini-agent's version: in the bundle and the footers.
	Version string
	// CIPoll is the interval between looks at a dispatched CI run; 0 means
	// publish's default (tests shorten it).
	CIPoll time.Duration
}

// ProcessEnv is the environment of this process.
func ProcessEnv(stdout, stderr io.Writer, version string) Env {
	return Env{Getenv: os.Getenv, Environ: os.Environ(), Stdout: stdout, Stderr: stderr, Version: version}
}

// httpClient is the GitHub client's HTTP client: the injected one (tests),
// with a whole-call timeout unless it has its own.
func (e Env) httpClient() *http.Client {
	c := &http.Client{}
	if e.HTTPClient != nil {
		c = new(http.Client)
		*c = *e.HTTPClient
	}
	if c.Timeout == 0 {
		c.Timeout = cmp.Or(e.CallTimeout, apiCallTimeout)
	}
	return c
}

// environ is the injected environment, or the process's when nil.
func (e Env) environ() []string {
	if e.Environ == nil {
		return os.Environ()
	}
	return e.Environ
}

// workspace is GITHUB_WORKSPACE, or the current directory.
func (e Env) workspace() string {
	return cmp.Or(e.Getenv("GITHUB_WORKSPACE"), ".")
}

// currentRunURL links this workflow run (where mini-agent's log is).
func (e Env) currentRunURL() string {
	g := e.Getenv
	if g("GITHUB_RUN_ID") == "" || g("GITHUB_REPOSITORY") == "" {
		return ""
	}
	return cmp.Or(g("GITHUB_SERVER_URL"), "https://github.com") + "/" + g("GITHUB_REPOSITORY") + "/actions/runs/" + g("GITHUB_RUN_ID")
}

// tempDir is mini-agent's directory under RUNNER_TEMP (or a new temp dir).
func (e Env) tempDir() (string, error) {
	base := e.Getenv("RUNNER_TEMP")
	if base == "" {
		return os.MkdirTemp("", "mini-agent-")
	}
	dir := base + string(os.PathSeparator) + "mini-agent"
	return dir, os.MkdirAll(dir, 0o755)
}
