package action

import (
	"bytes"
	"encoding/base64"
	"github.com/sethvargo/go-githubactions"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
	"github.com/org/mini-agent/internal/sandbox"
)

func TestReadInputs(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"INPUT_GITHUB-TOKEN":    "ghs_hyphenated_form_token",
		"INPUT_API_KEY":         "sk-underscore-form",
		"INPUT_MAX_STEPS":       " 12 ",
		"INPUT_MAX-COST-USD":    "0.75",
		"INPUT_TEST_COMMAND":    "make test",
		"INPUT_MODE":            "Explain",
		"INPUT_MAX_MINUTES":     "",
		"GITHUB_TOKEN":          "ghs_ignored_when_the_input_is_set",
		"INPUT_FAILURE_LOG":     "out/test.log",
		"INPUT_CONFIG":          ".github/bot.yml",
		"INPUT_PROVIDER":        "anthropic",
		"INPUT_BASE-URL":        "https://llm.example.com/v1",
		"INPUT_MODEL":           "claude-sonnet-4-5",
		"INPUT_SCRIPT":          "",
		"MINI_AGENT_SCRIPT":     "/tmp/t.jsonl",
		"INPUT_UNKNOWN_INPUT":   "x",
		"INPUT_CI_WAIT_MINUTES": "15",
		"INPUT_TEST_NETWORK":    "Open",
		"INPUT_TEST_SOCKET":     "/var/run/docker.sock\n  /run/podman/podman.sock\n",
	}
	var out bytes.Buffer
	gha := githubactions.New(githubactions.WithGetenv(func(k string) string { return vars[k] }), githubactions.WithWriter(&out))
	in, err := readInputs(gha)
	if err != nil {
		t.Fatal(err)
	}
	want := inputs{Token: "ghs_hyphenated_form_token", APIKey: "sk-underscore-form", MaxSteps: 12, MaxCostUSD: 0.75,
		TestCommand: "make test", Mode: "Explain", FailureLog: "out/test.log", Config: ".github/bot.yml", Provider: "anthropic",
		BaseURL: "https://llm.example.com/v1", Model: "claude-sonnet-4-5", Script: "/tmp/t.jsonl", CIWaitMinutes: 15,
		TestNetwork: sandbox.NetworkOpen, TestSockets: []string{"/var/run/docker.sock", "/run/podman/podman.sock"}}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("inputs =\n%+v\nwant\n%+v", in, want)
	}
	if got := out.String(); got != "::add-mask::ghs_hyphenated_form_token\n::add-mask::sk-underscore-form\n" {
		t.Errorf("masks = %q", got)
	}

	for _, bad := range []map[string]string{
		{"INPUT_MAX_STEPS": "0"}, {"INPUT_MAX_MINUTES": "ten"}, {"INPUT_MAX_COST_USD": "-1"},
		{"INPUT_MODE": "yolo"}, {"INPUT_PROVIDER": "gpt"}, {"INPUT_MAX_COST_USD": "NaN"}, {"INPUT_MAX_COST_USD": "inf"},
		{"INPUT_MAX_MINUTES": "200000000"}, // overflows a time.Duration into a negative timeout
		{"INPUT_PRICE_IN": "1"}, {"INPUT_PRICE_OUT": "1"}, {"INPUT_PRICE_IN": "-1", "INPUT_PRICE_OUT": "1"},
		{"INPUT_PRICE_IN": "1", "INPUT_PRICE_OUT": "NaN"}, {"INPUT_PRICE_IN": "cheap", "INPUT_PRICE_OUT": "1"},
		{"INPUT_CI_WAIT_MINUTES": "-1"}, {"INPUT_CI_WAIT_MINUTES": "61"}, {"INPUT_CI_WAIT_MINUTES": "1.5"},
		{"INPUT_TEST_NETWORK": "host"}, {"INPUT_TEST_SOCKET": "docker.sock"}, {"INPUT_TEST_SOCKET": "/run/../etc/x.sock"},
	} {
		gha := githubactions.New(githubactions.WithGetenv(func(k string) string { return bad[k] }), githubactions.WithWriter(&out))
		if _, err := readInputs(gha); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	prices := map[string]string{"INPUT_PRICE_IN": "0.1", "INPUT_PRICE-OUT": "0"}
	gha = githubactions.New(githubactions.WithGetenv(func(k string) string { return prices[k] }), githubactions.WithWriter(&out))
	if in, err := readInputs(gha); err != nil || in.PriceIn == nil || in.PriceOut == nil || *in.PriceIn != 0.1 || *in.PriceOut != 0 {
		t.Errorf("price inputs: %+v, %v", in, err)
	}
	gha = githubactions.New(githubactions.WithGetenv(func(k string) string { return map[string]string{"GITHUB_TOKEN": "ghs_env"}[k] }), githubactions.WithWriter(&out))
	if in, _ := readInputs(gha); in.Token != "ghs_env" {
		t.Errorf("GITHUB_TOKEN fallback: %q", in.Token)
	}
}

func TestCommandSafeWriter(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := newCommandSafeWriter(&out, &sync.Mutex{})
	for _, s := range []string{"step 1 ok\n", "::set-output name=status::fixed\n", "  ::add-mask::x\n##[error]fake\n", "partial ", "::not-at-line-start\n", "::"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "::") || strings.HasPrefix(line, "##[") {
			t.Errorf("workflow command survived: %q", line)
		}
	}
	if !strings.Contains(out.String(), "partial ::not-at-line-start") || !strings.Contains(out.String(), "step 1 ok") {
		t.Errorf("ordinary text changed:\n%s", out.String())
	}
}

func TestActionHelp(t *testing.T) {
	t.Parallel()
	sc, pr := prScene(t, "allowed-bots: [\"renovate[bot]\"]\n")
	id := sc.s.AddComment(testRepo, pr, "hubot", "OWNER", "/mini-agent help")
	env, vars, stdout := sc.env(t, "issue_comment", commentPayload(pr, id, "hubot", "User", "OWNER", "/mini-agent help"), nil)
	if code := actionMain(t.Context(), env); code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	// Answered, not skipped: the README defines skipped as an ignored event.
	if out := outputs(t, vars["GITHUB_OUTPUT"]); out["status"] != "answered" {
		t.Errorf("outputs = %v", out)
	}
	c := sc.s.Comments(testRepo, pr)
	if len(c) != 2 || !strings.Contains(c[1].Body, "/mini-agent explain") || !strings.Contains(c[1].Body, "renovate[bot]") ||
		len(c[0].Reactions) != 1 {
		t.Errorf("comments = %+v", c)
	}
	if _, err := os.Stat(filepath.Join(env.Getenv("RUNNER_TEMP"), "mini-agent", "bundle.json")); err == nil {
		t.Error("help ran the agent")
	}
}

// TestOptionsEnvironHidesRunnerFiles: the test command runs code the model
// wrote; it must not be handed the runner's file-command paths, through
// which it could set variables (BASH_ENV, LD_PRELOAD), PATH entries or
// outputs for the job's later steps.
func TestOptionsEnvironHidesRunnerFiles(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "go.mod"), "module m\n")
	vars := map[string]string{}
	var environ []string
	for _, kv := range []string{"PATH=/usr/bin", "HOME=/home/runner", "GITHUB_REPOSITORY=o/r", "RUNNER_TEMP=/tmp/rt",
		"GITHUB_ENV=/tmp/rt/_runner_file_commands/set_env_1", "GITHUB_PATH=/tmp/rt/_runner_file_commands/add_path_1",
		"GITHUB_OUTPUT=/tmp/rt/_runner_file_commands/set_output_1", "GITHUB_STATE=/tmp/rt/_runner_file_commands/save_state_1",
		"GITHUB_STEP_SUMMARY=/tmp/rt/_runner_file_commands/step_summary_1", "ACTIONS_RUNTIME_URL=https://pipelines.example/",
		"ACTIONS_CACHE_URL=https://cache.example/", "ACTIONS_RESULTS_URL=https://results.example/"} {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
		environ = append(environ, kv)
	}
	c := newConsole(Env{Getenv: func(k string) string { return vars[k] }, Environ: environ, Stdout: &bytes.Buffer{}})
	p := &prepared{cfg: &config.Loaded{Config: config.Default()}, job: &route.Job{Mode: agent.ModeFix}}
	pl, err := c.plan(p, ws, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(pl.environ, "\n")
	for _, bad := range []string{"GITHUB_ENV=", "GITHUB_PATH=", "GITHUB_OUTPUT=", "GITHUB_STATE=", "GITHUB_STEP_SUMMARY=",
		"ACTIONS_RUNTIME_URL=", "ACTIONS_CACHE_URL=", "ACTIONS_RESULTS_URL="} {
		if strings.Contains(got, bad) {
			t.Errorf("the test command's environment holds %s...", bad)
		}
	}
	for _, keep := range []string{"PATH=/usr/bin", "HOME=/home/runner", "GITHUB_REPOSITORY=o/r"} {
		if !strings.Contains(got, keep) {
			t.Errorf("the test command's environment lost %s", keep)
		}
	}
}

// TestPersistedCheckoutTokenIsRedacted: actions/checkout leaves the token in
// .git/config as base64("x-access-token:TOKEN"), where test code the model
// writes can read it. That form must be a secret value too (redacted from
// the history, the bundle and the PR), and the action must warn about it.
func TestPersistedCheckoutTokenIsRedacted(t *testing.T) {
	t.Parallel()
	const tok = "ghs_persisted_checkout_token_0123"
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "go.mod"), "module m\n")
	git(t, ws, "init", "-q")
	vars := map[string]string{"INPUT_GITHUB_TOKEN": tok}
	environ := []string{"PATH=/usr/bin", "INPUT_GITHUB_TOKEN=" + tok}
	var stdout bytes.Buffer
	c := newConsole(Env{Getenv: func(k string) string { return vars[k] }, Environ: environ, Stdout: &stdout})
	p := &prepared{cfg: &config.Loaded{Config: config.Default()}, job: &route.Job{Mode: agent.ModeFix}, in: inputs{Token: tok}}
	pl, err := c.plan(p, ws, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if secrets := proc.SecretValues(pl.environ, pl.job.SecretNames); !slices.Contains(secrets, basic) || !slices.Contains(secrets, tok) {
		t.Errorf("secret values %q lack the token's basic-auth form", secrets)
	}
	if env := strings.Join(proc.ScrubEnv(pl.environ, pl.job.SecretNames), "\n"); strings.Contains(env, basic) {
		t.Error("the test command's environment holds the token's basic-auth form")
	}

	c.warnPersistedCredentials(t.Context(), ws)
	if strings.Contains(stdout.String(), "persist-credentials") {
		t.Errorf("warned without a persisted credential: %s", stdout.String())
	}
	git(t, ws, "config", "--local", "http.https://github.com/.extraheader", "AUTHORIZATION: basic "+basic)
	c.warnPersistedCredentials(t.Context(), ws)
	if !strings.Contains(stdout.String(), "::warning") || !strings.Contains(stdout.String(), "persist-credentials: false") {
		t.Errorf("no warning about the persisted token: %s", stdout.String())
	}
	if strings.Contains(stdout.String(), basic) {
		t.Error("the warning prints the credential")
	}
}

// TestSummaryDiffFenceHoldsAnyBackticks: the diff is model-written text; no
// run of backticks in it may close the summary's code block and turn the
// rest into markdown.
func TestSummaryDiffFenceHoldsAnyBackticks(t *testing.T) {
	t.Parallel()
	for _, run := range []int{3, 4, 10, 12} {
		ticks := strings.Repeat("`", run)
		diff := "--- a/x.md\n+++ b/x.md\n@@ -1 +1,2 @@\n x\n" + ticks + "\n## injected heading\n"
		b := &bundle.Bundle{Version: bundle.Version, Status: bundle.StatusValidationFailed, Diff: diff}
		c := newConsole(Env{Getenv: func(string) string { return "" }, Stdout: &bytes.Buffer{}})
		s := c.summary(nil, b, &publish.Result{Status: publish.StatusNotFixed, Action: publish.ActionNoFixFound, Reason: "test"})
		_, block, ok := strings.Cut(s, "<summary>Diff")
		if !ok {
			t.Fatalf("no diff block:\n%s", s)
		}
		open := block[strings.Index(block, "`"):]
		fence := open[:strings.IndexFunc(open, func(r rune) bool { return r != '`' })]
		if len(fence) <= run {
			t.Errorf("a run of %d backticks in the diff closes the %d-backtick fence", run, len(fence))
		}
	}
}
