package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/org/mini-agent/internal/proc"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
	"github.com/sethvargo/go-githubactions"
)

// runAction is `mini-agent action`: the GitHub Action's entry point. It
// takes no arguments; everything comes from the environment the runner
// sets (see README "GitHub Action" for the contract).
func runAction(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &command{
		name:  "action",
		usage: "action",
		about: "The GitHub Action's entry point (action.yml runs it): reads the event that started the workflow " +
			"(GITHUB_EVENT_NAME, GITHUB_EVENT_PATH), the action's inputs (INPUT_<NAME> variables) and the " +
			"repository's policy file, decides whether and how to act, runs the same pipeline as fix, and " +
			"publishes a pull request, a commit on the PR's branch or a comment. It takes no flags or arguments; " +
			"locally, use fix or explain.",
		examples: []string{
			"uses: org/mini-agent@v1   # in a workflow step (see the README)",
			"INPUT_API_KEY=... GITHUB_EVENT_NAME=workflow_run GITHUB_EVENT_PATH=event.json mini-agent action",
		},
		footer: "Exit codes: 0 fixed, explained or skipped, 1 not fixed, 2 configuration or input error, 3 " +
			"validation failed, 4 a GitHub API error, 130 cancelled.",
	}
	fs := c.flagSet()
	if code, done := c.parse(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		return c.usageError(stderr, fmt.Sprintf("takes no arguments (inputs come from INPUT_* variables), got %q", fs.Args()))
	}
	return actionMain(ctx, processEnv(stdout, stderr))
}

// actionRun is one execution of the action.
type actionRun struct {
	ctx  context.Context
	env  actionEnv
	gha  *githubactions.Action
	in   inputs
	gh   *ghapi.Client
	cfg  *config.Loaded
	job  *route.Job
	ws   string
	tmp  string
	lock sync.Mutex
	// out collects the outputs; set once at the end.
	out map[string]string
}

func actionMain(ctx context.Context, env actionEnv) int {
	a := &actionRun{ctx: ctx, env: env, out: map[string]string{}}
	a.gha = githubactions.New(githubactions.WithGetenv(env.Getenv), githubactions.WithWriter(lockedWriter{&a.lock, env.Stdout}))
	status, code, summary := a.run(ctx)
	a.out["status"] = status
	a.finish(summary)
	return code
}

// run decides, runs and publishes; it returns the status output, the exit
// code and the job summary.
func (a *actionRun) run(ctx context.Context) (string, int, string) {
	in, err := readInputs(a.gha)
	a.in = in
	if err != nil {
		return a.fail(pipeline.ExitUsage, err)
	}
	ev, err := a.event()
	if err != nil {
		return a.fail(pipeline.ExitUsage, err)
	}
	if in.Token != "" {
		if err := a.connect(ctx, in.Token); err != nil {
			return a.fail(pipeline.ExitUsage, err)
		}
	}
	if end := a.route(ctx, ev); end != nil {
		return end.status, end.code, end.summary
	}
	fmt.Fprintf(a.log(), "mini-agent: %s\nwrite policy: %s (%s)\npolicy file: %s\n", a.job.Trigger, a.job.Write, a.job.Reason, a.cfg.Origin)
	if a.job.Help {
		return a.help(ctx)
	}
	if a.job.RunURL == "" && a.job.Source != route.SourceRun {
		a.job.RunURL = a.currentRunURL()
	}
	return a.work(ctx)
}

// work runs the agent on the job and publishes the result.
func (a *actionRun) work(ctx context.Context) (string, int, string) {
	job := a.job
	tracker := &publish.Tracker{GH: a.gh, Owner: job.Owner, Repo: job.Repo, PR: job.PR}
	if job.CommentID != 0 {
		if err := a.gh.ReactToComment(ctx, job.Owner, job.Repo, job.CommentID, "eyes"); err != nil {
			a.gha.Warningf("could not react to the command: %v", err)
		}
		if _, err := tracker.Post(ctx, fmt.Sprintf("**mini-agent** · %s\n\nWrite policy: **%s**. %s\n\n⏳ Working on it: %s\n",
			job.Trigger, job.Write, job.Reason, a.currentRunURL())); err != nil {
			return a.fail(ExitFailed, err)
		}
	}
	ws := a.env.Getenv("GITHUB_WORKSPACE")
	if ws == "" {
		ws = "."
	}
	a.ws = ws
	if err := a.checkWorkspace(ctx); err != nil {
		return a.fail(pipeline.ExitUsage, err)
	}
	a.warnPersistedCredentials(ctx)
	tmp, err := a.tempDir()
	if err != nil {
		return a.fail(ExitFailed, err)
	}
	a.tmp = tmp
	opts, err := a.options()
	if err != nil {
		return a.fail(pipeline.ExitUsage, err)
	}
	if job.Source == route.SourceRun {
		if opts.FailureLogs, err = a.fetchLogs(ctx); err != nil {
			return a.fail(ExitFailed, err)
		}
	}
	if opts.FailureLog != "" || len(opts.FailureLogs) > 0 {
		if res, err := a.precheck(ctx, opts); err != nil || res != nil {
			if err != nil {
				return a.fail(ExitFailed, err)
			}
			if job.CommentID != 0 {
				if _, err := tracker.Post(ctx, fmt.Sprintf("**mini-agent** · %s\n\n**Skipped:** %s.\n", job.Trigger, res.Reason)); err != nil {
					a.gha.Warningf("%v", err)
				}
			}
			return a.published(&bundle.Bundle{}, res, nil)
		}
	}

	groups := &groupSink{gha: a.gha}
	opts.Events = groups
	out, err := pipeline.Run(ctx, opts)
	groups.close()
	switch {
	case err != nil && errors.Is(err, pipeline.ErrUsage):
		return a.fail(pipeline.ExitUsage, err)
	case err != nil && out == nil:
		if ctx.Err() != nil {
			return a.fail(pipeline.ExitCancelled, err)
		}
		return a.fail(ExitFailed, err)
	case err != nil:
		a.gha.Warningf("writing the bundle or summary: %v", err)
	}
	b := out.Bundle
	publish.Annotate(b, job)
	if err := b.Write(opts.BundlePath); err != nil {
		a.gha.Warningf("%v", err)
	}
	a.out["bundle"], a.out["trace"] = opts.BundlePath, opts.TracePath
	if b.Status == bundle.StatusCancelled {
		return a.fail(pipeline.ExitCancelled, errors.New("the run was cancelled; nothing was published"))
	}
	res, perr := publish.Publish(ctx, a.gh, publish.Request{Bundle: b, Job: job, Config: a.cfg.Config, Log: a.log()})
	return a.published(b, res, perr)
}

// published turns the publish result into outputs, annotations, the
// summary and the exit code.
func (a *actionRun) published(b *bundle.Bundle, res *publish.Result, perr error) (string, int, string) {
	if perr != nil && res == nil {
		return a.fail(ExitFailed, perr)
	}
	a.out["pr-url"], a.out["branch"] = res.PRURL, res.Branch
	if b.Run.Steps > 0 || b.Usage.InputTokens > 0 {
		a.out["steps"] = fmt.Sprint(b.Run.Steps)
		a.out["tokens"] = fmt.Sprint(b.Usage.InputTokens + b.Usage.OutputTokens)
		if b.CostKnown {
			a.out["cost-usd"] = fmt.Sprintf("%.4f", b.CostUSD)
		}
	}
	for _, w := range b.Warnings {
		a.gha.Warningf("%s", w)
	}
	summary := a.summary(b, res)
	switch res.Status {
	case publish.StatusFixed, publish.StatusExplained, publish.StatusSkipped:
		a.gha.Noticef("mini-agent %s: %s", res.Status, res.Reason)
		return string(res.Status), pipeline.ExitOK, summary
	case publish.StatusNotFixed:
		a.annotateFailure(b, res.Reason)
		if b.Status == bundle.StatusValidationFailed {
			return string(res.Status), pipeline.ExitValidationFailed, summary
		}
		return string(res.Status), pipeline.ExitNotFixed, summary
	}
	a.gha.Errorf("mini-agent failed: %s", res.Reason)
	a.trackFailure(res.Reason)
	return string(publish.StatusFailed), ExitFailed, summary
}

// help answers `/mini-agent help` on the tracking comment.
func (a *actionRun) help(ctx context.Context) (string, int, string) {
	job := a.job
	text := helpText(a.cfg.Config)
	if job.UnknownVerb != "" {
		text = fmt.Sprintf("Unknown command `%s`.\n\n%s", job.UnknownVerb, text)
	}
	if err := a.gh.ReactToComment(ctx, job.Owner, job.Repo, job.CommentID, "eyes"); err != nil {
		a.gha.Warningf("could not react to the command: %v", err)
	}
	tracker := &publish.Tracker{GH: a.gh, Owner: job.Owner, Repo: job.Repo, PR: job.PR}
	if _, err := tracker.Post(ctx, text); err != nil {
		return a.fail(ExitFailed, err)
	}
	return string(publish.StatusSkipped), pipeline.ExitOK, "## mini-agent: help\n\n" + text
}

func helpText(c *config.Config) string {
	return fmt.Sprintf("**mini-agent commands** (for %s%s):\n\n"+
		"- `/mini-agent fix [instructions]`: reproduce the failure on this PR's head, fix it, validate it by running the tests, and publish it as the labels allow.\n"+
		"- `/mini-agent explain`: diagnose the failure without changing anything.\n"+
		"- `/mini-agent help`: this message.\n\n"+
		"Labels: `%s` turns mini-agent off for the PR; `%s` allows explanations only; `%s` lets it commit to the PR's branch "+
		"(same repository only). Without a label, fixes are proposed in a separate PR.\n",
		strings.Join(c.Associations, ", "), botList(c.Bots), c.Labels.Off, c.Labels.ReadOnly, c.Labels.Push)
}

func botList(bots []string) string {
	if len(bots) == 0 {
		return ""
	}
	return " and " + strings.Join(bots, ", ")
}

func (a *actionRun) loadConfig(ctx context.Context, defaultBranch string) (*config.Loaded, error) {
	if a.gh == nil {
		return nil, errNoToken
	}
	owner, repo, _ := strings.Cut(a.env.Getenv("GITHUB_REPOSITORY"), "/")
	return config.Load(ctx, a.gh, owner, repo, defaultBranch, a.in.Config)
}

// errNoToken: the event needs the API and no token was given.
var errNoToken = errors.New("github-token is empty (and GITHUB_TOKEN is not set): mini-agent needs it to read the policy file and publish")

// isConfigError reports errors the maintainer fixes in the workflow or the
// policy file (exit 2), as opposed to GitHub failing (exit 4).
func isConfigError(err error) bool {
	var ce *config.Error
	return errors.As(err, &ce) || errors.Is(err, errNoToken)
}

// event reads the triggering event from GITHUB_EVENT_NAME / _PATH.
func (a *actionRun) event() (route.Event, error) {
	g := a.env.Getenv
	ev := route.Event{Name: g("GITHUB_EVENT_NAME"), Repo: g("GITHUB_REPOSITORY"), SHA: g("GITHUB_SHA"), Ref: g("GITHUB_REF"),
		Mode: a.in.Mode, FailureLog: a.in.FailureLog}
	path := g("GITHUB_EVENT_PATH")
	if path == "" {
		return ev, errors.New("GITHUB_EVENT_PATH is not set: `mini-agent action` runs inside GitHub Actions (use `mini-agent fix` locally)")
	}
	f, err := os.Open(path)
	if err != nil {
		return ev, fmt.Errorf("event payload: %w", err)
	}
	defer f.Close()
	ev.Payload, err = io.ReadAll(io.LimitReader(f, maxEventBytes+1))
	if err != nil {
		return ev, fmt.Errorf("event payload: %w", err)
	}
	if ev.FailureLog != "" && !filepath.IsAbs(ev.FailureLog) && g("GITHUB_WORKSPACE") != "" {
		ev.FailureLog = filepath.Join(g("GITHUB_WORKSPACE"), ev.FailureLog)
	}
	return ev, nil
}

// checkWorkspace makes sure a fix is made on the failing commit: the
// published commit's parent is the workspace's HEAD.
func (a *actionRun) checkWorkspace(ctx context.Context) error {
	if a.job.Mode != agent.ModeFix || a.job.HeadSHA == "" {
		return nil
	}
	out, err := gitexec.Output(ctx, gitexec.Options{Dir: a.ws}, "rev-parse", "HEAD")
	if err != nil {
		return fmt.Errorf("the workspace %s is not a git checkout (run actions/checkout first): %v", a.ws, err)
	}
	if head := strings.TrimSpace(out); head != a.job.HeadSHA {
		return fmt.Errorf("the workspace is at %s but the failure is at %s: check out the failing commit "+
			"(actions/checkout with `ref: %s`) so the fix applies to it", short(head), short(a.job.HeadSHA), refHint(a.env.Getenv("GITHUB_EVENT_NAME")))
	}
	return nil
}

func refHint(event string) string {
	switch event {
	case "workflow_run":
		return "${{ github.event.workflow_run.head_sha }}"
	case "pull_request":
		return "${{ github.event.pull_request.head.sha }}"
	case "issue_comment":
		return "refs/pull/${{ github.event.issue.number }}/head"
	}
	return "the failing commit"
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func (a *actionRun) tempDir() (string, error) {
	base := a.env.Getenv("RUNNER_TEMP")
	if base == "" {
		return os.MkdirTemp("", "mini-agent-")
	}
	dir := filepath.Join(base, "mini-agent")
	return dir, os.MkdirAll(dir, 0o755)
}

func (a *actionRun) currentRunURL() string {
	g := a.env.Getenv
	server := g("GITHUB_SERVER_URL")
	if server == "" {
		server = "https://github.com"
	}
	if g("GITHUB_RUN_ID") == "" || g("GITHUB_REPOSITORY") == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%s", server, g("GITHUB_REPOSITORY"), g("GITHUB_RUN_ID"))
}

// options turns inputs (then the policy's defaults, then built-in
// defaults) into pipeline options.
func (a *actionRun) options() (pipeline.Options, error) {
	in, d := a.in, a.cfg.Defaults
	o := pipeline.Options{Mode: a.job.Mode, Workdir: a.ws, FailureLog: a.job.FailureLog, Instructions: a.job.Instructions,
		Provider: first(strings.ToLower(in.Provider), d.Provider, "openai"), Model: first(in.Model, d.Model),
		BaseURL: first(in.BaseURL, d.BaseURL), TestCommand: first(in.TestCommand, d.TestCommand),
		Protected: a.cfg.ProtectedPaths(), SecretNames: secretInputEnv, TestEnv: a.cfg.TestEnv, TestWritable: a.cfg.TestWritable,
		TracePath: filepath.Join(a.tmp, "trace.jsonl"), BundlePath: filepath.Join(a.tmp, "bundle.json"),
		Progress: newCommandSafeWriter(a.env.Stdout, &a.lock), Getenv: apiKeyGetenv(a.env.Getenv, in.APIKey), Environ: proc.WithoutCommandFiles(environOr(a.env.Environ)),
		TestTimeout: 10 * time.Minute}
	if in.Token != "" {
		// actions/checkout persists the token in .git/config in this form.
		o.Environ = append(o.Environ, tokenBasicEnv+"="+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+in.Token)))
	}
	if o.TestCommand == "" {
		if o.TestCommand = detectTestCommand(a.ws); o.TestCommand == "" {
			return o, errors.New("no test-command input and none detected (no go.mod, package.json, Cargo.toml, pyproject.toml, pytest.ini or setup.cfg at the workspace root)")
		}
		fmt.Fprintf(a.log(), "test command (detected): %s\n", o.TestCommand)
	}
	if o.Provider == "script" {
		if in.Script == "" {
			return o, errors.New("provider script needs the script input (a JSONL trajectory)")
		}
		o.ScriptPath = in.Script
	}
	steps := firstInt(in.MaxSteps, d.MaxSteps, agent.DefaultMaxSteps)
	minutes := firstInt(in.MaxMinutes, d.MaxMinutes, int(agent.DefaultTimeout/time.Minute))
	cost := in.MaxCostUSD
	if cost == 0 {
		cost = d.MaxCostUSD
	}
	o.Limits = agent.Limits{MaxSteps: steps, Timeout: time.Duration(minutes) * time.Minute, MaxCostUSD: cost}
	switch {
	case in.PriceIn != nil:
		o.Price = &[2]float64{*in.PriceIn, *in.PriceOut}
	case d.PriceIn != nil:
		o.Price = &[2]float64{*d.PriceIn, *d.PriceOut}
	}
	o.Version = versionString()
	return o, nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstInt(vals ...int) int {
	for _, v := range vals {
		if v > 0 {
			return v
		}
	}
	return 0
}

// precheck skips before any model call when a proposal would be refused
// anyway (closed PR for this failure at this commit, max attempts).
func (a *actionRun) precheck(ctx context.Context, o pipeline.Options) (*publish.Result, error) {
	logs := o.FailureLogs
	if o.FailureLog != "" {
		logs = append([]string{o.FailureLog}, logs...)
	}
	fc, err := pipeline.ExtractFailures(logs, a.ws)
	if err != nil {
		return nil, nil // the pipeline will report it
	}
	stub := &bundle.Bundle{Signature: fc.Signature(), BaseSHA: a.job.HeadSHA, Command: o.TestCommand}
	publish.Annotate(stub, a.job)
	return publish.Precheck(ctx, a.gh, a.job, a.cfg.Config, stub)
}

func (a *actionRun) log() io.Writer { return newCommandSafeWriter(a.env.Stdout, &a.lock) }

// fail ends the run with an error annotation; a command's tracking comment
// says so too, so a requested run never ends in silence.
// ending is how a run ends early: its status, exit code and summary.
type ending struct {
	status  string
	code    int
	summary string
}

// connect builds the GitHub API client from the token.
func (a *actionRun) connect(ctx context.Context, token string) (err error) {
	a.gh, err = ghapi.New(ctx, ghapi.Options{Token: token, BaseURL: a.env.Getenv("GITHUB_API_URL"),
		HTTPClient: a.env.httpClient(), WriteInterval: a.env.WriteInterval})
	return err
}

// route decides what the event asks for (the action and publish share it)
// and sets a.job and a.cfg; a non-nil ending means the run stops here:
// skipped, refused or failed.
func (a *actionRun) route(ctx context.Context, ev route.Event) *ending {
	router := &route.Router{LoadConfig: a.loadConfig}
	if a.gh != nil {
		router.GitHub = a.gh
	}
	d, cfg, err := router.Route(ctx, ev)
	a.cfg = cfg
	end := func(status string, code int, summary string) *ending { return &ending{status, code, summary} }
	switch {
	case errors.Is(err, route.ErrEvent), isConfigError(err):
		return end(a.fail(pipeline.ExitUsage, err))
	case err != nil:
		return end(a.fail(ExitFailed, err))
	case d.Skipped():
		a.gha.Noticef("mini-agent skipped: %s", d.Reason)
		a.replySkipped(ctx, d)
		return end(string(publish.StatusSkipped), pipeline.ExitOK, "## mini-agent: skipped\n\n"+d.Reason+"\n")
	}
	a.job = d.Job
	return nil
}

func (a *actionRun) fail(code int, err error) (string, int, string) {
	a.gha.Errorf("mini-agent: %v", err)
	a.trackFailure(err.Error())
	return string(publish.StatusFailed), code, "## mini-agent: failed\n\n" + err.Error() + "\n"
}

// replySkipped answers a person's comment command that an authorized
// route stopped (off label, PR head moved): they asked, so they are told.
func (a *actionRun) replySkipped(ctx context.Context, d route.Decision) {
	j := d.About
	if j == nil || j.CommentID == 0 || a.gh == nil {
		return
	}
	t := &publish.Tracker{GH: a.gh, Owner: j.Owner, Repo: j.Repo, PR: j.PR}
	if _, err := t.Post(ctx, fmt.Sprintf("**mini-agent** · %s\n\n**Skipped:** %s.\n", j.Trigger, d.Reason)); err != nil {
		a.gha.Warningf("could not answer the command: %v", err)
	}
}

// trackFailure puts a failure on a command's tracking comment.
func (a *actionRun) trackFailure(why string) {
	if j := a.job; j != nil && j.CommentID != 0 && a.gh != nil {
		t := &publish.Tracker{GH: a.gh, Owner: j.Owner, Repo: j.Repo, PR: j.PR}
		msg := fmt.Sprintf("**mini-agent** · %s\n\n**Failed:** %s\n\nSee %s\n", j.Trigger, why, a.currentRunURL())
		if _, terr := t.Post(context.WithoutCancel(a.ctx), msg); terr != nil {
			fmt.Fprintf(a.env.Stderr, "mini-agent: updating the tracking comment: %v\n", terr)
		}
	}
}
