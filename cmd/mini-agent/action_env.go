package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/gitexec"
	"github.com/sethvargo/go-githubactions"
)

// Exit codes of `mini-agent action` and `mini-agent publish` beyond the
// pipeline's (0 ok, 1 not fixed, 2 configuration, 3 validation failed, 130
// cancelled).
const (
	// ExitFailed: a GitHub API error, or publishing refused the bundle.
	ExitFailed = 4
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

// actionEnv is everything the action reads from outside: the environment
// (inputs and the runner's GITHUB_* variables) and where workflow commands
// go. Tests inject all of it; nothing reads the process environment.
type actionEnv struct {
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
}

func processEnv(stdout, stderr io.Writer) actionEnv {
	return actionEnv{Getenv: os.Getenv, Environ: os.Environ(), Stdout: stdout, Stderr: stderr}
}

// inputNames are the action's inputs (action.yml). Each is read from
// INPUT_<NAME> with "-" as "_" (what a composite action's `env:` sets),
// then with "-" kept (what the runner sets for JavaScript and Docker actions).
var inputNames = []string{"github-token", "provider", "model", "base-url", "api-key", "test-command", "mode",
	"failure-log", "max-steps", "max-minutes", "max-cost-usd", "price-in", "price-out", "config", "script"}

// secretInputEnv are the environment names that may hold the token or the
// API key: scrubbed from the test command's environment and redacted.
var secretInputEnv = []string{"INPUT_GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "INPUT_API_KEY", "INPUT_API-KEY"}

type inputs struct {
	Token, Provider, Model, BaseURL, APIKey, TestCommand, Mode, FailureLog, Config, Script string
	MaxSteps, MaxMinutes                                                                   int
	MaxCostUSD                                                                             float64
	// PriceIn and PriceOut: USD per million tokens; nil when not given.
	PriceIn, PriceOut *float64
}

func readInputs(gha *githubactions.Action) (inputs, error) {
	values := make(map[string]string, len(inputNames))
	for _, name := range inputNames {
		v := gha.GetInput(strings.ReplaceAll(name, "-", "_"))
		if v == "" {
			v = gha.GetInput(name)
		}
		values[name] = v
	}
	get := func(name string) string { return values[name] }
	in := inputs{Token: get("github-token"), Provider: get("provider"), Model: get("model"), BaseURL: get("base-url"),
		APIKey: get("api-key"), TestCommand: get("test-command"), Mode: get("mode"), FailureLog: get("failure-log"),
		Config: get("config"), Script: get("script")}
	if in.Token == "" {
		in.Token = strings.TrimSpace(gha.Getenv("GITHUB_TOKEN"))
	}
	if in.Script == "" {
		in.Script = gha.Getenv("MINI_AGENT_SCRIPT")
	}
	// Mask before anything else is printed.
	for _, s := range []string{in.Token, in.APIKey} {
		if s != "" {
			gha.AddMask(s)
		}
	}
	var bad []string
	num := func(name string, dst *int) {
		if v := get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				bad = append(bad, fmt.Sprintf("%s=%q is not a positive whole number", name, v))
			}
			*dst = n
		}
	}
	num("max-steps", &in.MaxSteps)
	num("max-minutes", &in.MaxMinutes)
	if in.MaxMinutes > config.MaxMinutes {
		bad = append(bad, fmt.Sprintf("max-minutes=%d is more than %d", in.MaxMinutes, config.MaxMinutes))
	}
	if v := get("max-cost-usd"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 1e6) { // NaN fails both
			bad = append(bad, fmt.Sprintf("max-cost-usd=%q is not a positive amount", v))
		}
		in.MaxCostUSD = f
	}
	price := func(name string, dst **float64) {
		if v := get(name); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= 0 && f <= config.MaxPrice) {
				bad = append(bad, fmt.Sprintf("%s=%q is not a price in USD per million tokens", name, v))
			}
			*dst = &f
		}
	}
	price("price-in", &in.PriceIn)
	price("price-out", &in.PriceOut)
	if (in.PriceIn == nil) != (in.PriceOut == nil) {
		bad = append(bad, "price-in and price-out go together (USD per million input and output tokens)")
	}
	switch strings.ToLower(in.Mode) {
	case "", "auto", "fix", "explain":
	default:
		bad = append(bad, fmt.Sprintf("mode=%q is not auto, fix or explain", in.Mode))
	}
	switch strings.ToLower(in.Provider) {
	case "", "openai", "anthropic", "script":
	default:
		bad = append(bad, fmt.Sprintf("provider=%q is not openai, anthropic or script", in.Provider))
	}
	if len(bad) > 0 {
		return in, fmt.Errorf("bad inputs: %s", strings.Join(bad, "; "))
	}
	return in, nil
}

// detectTestCommand guesses the test command from the files at the
// workspace root: go.mod, package.json, Cargo.toml, Python project files.
func detectTestCommand(dir string) string {
	for _, c := range []struct{ file, cmd string }{
		{"go.mod", "go test ./..."},
		{"package.json", "npm test"},
		{"Cargo.toml", "cargo test"},
		{"pyproject.toml", "pytest"},
		{"pytest.ini", "pytest"},
		{"setup.cfg", "pytest"},
	} {
		if _, err := os.Stat(filepath.Join(dir, c.file)); err == nil {
			return c.cmd
		}
	}
	return ""
}

// groupSink opens a log group per tool call (::group:: ... ::endgroup::),
// so the Actions log shows one collapsible entry per agent step.
type groupSink struct {
	mu   sync.Mutex
	gha  *githubactions.Action
	open bool
}

// Emit implements agent.EventSink.
func (g *groupSink) Emit(e agent.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch e.Type {
	case agent.EventToolStart:
		if g.open {
			g.gha.EndGroup()
		}
		g.gha.Group(oneLine(fmt.Sprintf("step %v: %v %v", e.Data["step"], e.Data["tool"], e.Data["args"])))
		g.open = true
	case agent.EventToolEnd:
		if g.open {
			g.gha.EndGroup()
			g.open = false
		}
	}
}

func (g *groupSink) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		g.gha.EndGroup()
		g.open = false
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// commandSafeWriter neutralises workflow commands at line starts ("::" and
// the legacy "##[") in text the action does not control (progress lines
// that quote model arguments), so nothing it prints can set outputs, masks
// or environment.
type commandSafeWriter struct {
	mu   sync.Mutex
	w    io.Writer
	bol  bool
	lock *sync.Mutex // shared with the groups' writer, so lines never interleave
}

func newCommandSafeWriter(w io.Writer, lock *sync.Mutex) *commandSafeWriter {
	return &commandSafeWriter{w: w, bol: true, lock: lock}
}

func (c *commandSafeWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if c.bol {
			t := bytes.TrimLeft(line, " \t")
			if bytes.HasPrefix(t, []byte("::")) || bytes.HasPrefix(t, []byte("##[")) {
				out.WriteString("  ")
			}
		}
		out.Write(line)
		c.bol = line[len(line)-1] == '\n'
	}
	if c.lock != nil {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	if _, err := c.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// lockedWriter serialises writes to the shared stdout.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// apiKeyGetenv answers the providers' key variables with the api-key input
// when it is set, and the environment otherwise.
func apiKeyGetenv(getenv func(string) string, apiKey string) func(string) string {
	return func(name string) string {
		if apiKey != "" && (name == "OPENAI_API_KEY" || name == "ANTHROPIC_API_KEY") {
			return apiKey
		}
		return getenv(name)
	}
}

// httpClient is the GitHub client's HTTP client: the injected one (tests),
// with a whole-call timeout unless it has its own.
func (e actionEnv) httpClient() *http.Client {
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

// tokenBasicEnv carries the token's basic-auth form among the environment
// the pipeline reads secrets from: its name marks it a secret, so the value
// is redacted from everything the model and the PR see, and the test
// command never gets it.
const tokenBasicEnv = "MINI_AGENT_GITHUB_TOKEN_BASIC_AUTH"

// warnPersistedCredentials warns when the checkout kept a credential in the
// git config (actions/checkout's default): test code the model writes runs
// in the workspace and could read it. Only names are read, never values.
func (a *actionRun) warnPersistedCredentials(ctx context.Context) {
	out, err := gitexec.Output(ctx, gitexec.Options{Dir: a.ws}, "config", "--includes", "--name-only", "--get-regexp", `^http\..*\.extraheader$`)
	if err != nil || strings.TrimSpace(out) == "" {
		return
	}
	a.gha.Warningf("the checkout left a credential in the git config (%s): code the model writes runs as tests in this "+
		"workspace and could read it; use actions/checkout with `persist-credentials: false` (mini-agent publishes "+
		"through the API and needs no git credential)", oneLine(out))
}

// environOr is environ, or the process environment when nil.
func environOr(environ []string) []string {
	if environ == nil {
		return os.Environ()
	}
	return environ
}
