package action

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/flakyfix"
	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
	"github.com/org/mini-agent/internal/safefile"
	"github.com/org/mini-agent/internal/testcmd"
)

// errCancelled ends a run that was cancelled before anything was published.
var errCancelled = fmt.Errorf("the run was cancelled; nothing was published: %w", context.Canceled)

// work runs the agent on the job and publishes the result.
func (c *console) work(ctx context.Context, p *prepared) Result {
	job := p.job
	if job.CommentID != 0 {
		if err := p.gh.ReactToComment(ctx, job.Owner, job.Repo, job.CommentID, "eyes"); err != nil {
			c.gha.Warningf("could not react to the command: %v", err)
		}
		if _, err := p.tracker.Post(ctx, fmt.Sprintf("**mini-agent** · %s\n\nWrite policy: **%s**. %s\n\n⏳ Working on it: %s\n",
			job.Trigger, job.Write, job.Reason, c.env.currentRunURL())); err != nil {
			return c.fail(ctx, p, err)
		}
	}
	ws := c.env.workspace()
	if err := checkWorkspace(ctx, job, ws, c.env.Getenv("GITHUB_EVENT_NAME")); err != nil {
		return c.fail(ctx, p, err)
	}
	c.warnPersistedCredentials(ctx, ws)
	tmp, err := c.env.tempDir()
	if err != nil {
		return c.fail(ctx, p, err)
	}
	if job.Iterate {
		c.iterateFromCI(ctx, p)
	}
	pl, err := c.plan(p, ws, tmp)
	if err != nil {
		return c.fail(ctx, p, err)
	}
	if job.Source == route.SourceRun {
		if pl.job.FailureLogs, err = c.fetchLogs(ctx, p, tmp); err != nil {
			return c.fail(ctx, p, err)
		}
	}
	if res, err := c.precheck(ctx, p, pl.job, ws); err != nil || res != nil {
		if res == nil {
			return c.fail(ctx, p, err)
		}
		if job.CommentID != 0 && res.Status == publish.StatusSkipped {
			if _, err := p.tracker.Post(ctx, fmt.Sprintf("**mini-agent** · %s\n\n**Skipped:** %s.\n", job.Trigger, res.Reason)); err != nil {
				c.gha.Warningf("%v", err)
			}
		}
		if res.Recovered && err == nil {
			c.proveCI(ctx, p, res, c.ciWorkflow(job))
		}
		return c.published(ctx, p, &bundle.Bundle{}, res, err)
	}
	model, err := provider.Select(pl.choice)
	if err != nil {
		return c.fail(ctx, p, err)
	}

	groups := &groupSink{gha: c.gha}
	deps := pipeline.Deps{Model: model, Progress: c.log(), Events: groups, Environ: pl.environ}
	out, err := pipeline.Run(ctx, pl.job, deps)
	if err == nil && flakyfix.Intermittent(out) {
		// A flake: the flaky path proves a fix by its rerun bar.
		out, err = flakyfix.Handoff(ctx, pl.job, deps, out)
	}
	groups.close()
	switch {
	case err != nil && out == nil:
		return c.fail(ctx, p, err)
	case err != nil:
		c.gha.Warningf("an output could not be written: %v", err)
	}
	b := out.Bundle
	publish.Annotate(b, job)
	if err := b.Write(pl.job.BundlePath); err != nil {
		c.gha.Warningf("%v", err)
	}
	files := map[string]string{"bundle": pl.job.BundlePath, "trace": pl.job.TracePath}
	for k, p := range files {
		// Not the file the output promises (a link planted in its place):
		// a later step must not upload or read what it points at.
		if err := safefile.CheckTarget(p); err != nil {
			c.gha.Warningf("output %s left empty: %v", k, err)
			files[k] = ""
		}
	}
	if b.Status == bundle.StatusCancelled {
		r := c.fail(ctx, p, errCancelled)
		for k, v := range files {
			r.Outputs = withOutput(r.Outputs, k, v)
		}
		return r
	}
	wf := c.ciWorkflow(job)
	res, perr := publish.Publish(ctx, p.gh, publish.Request{Bundle: b, Job: job, Config: p.cfg.Config, Log: c.log(), Tracker: p.tracker, CIWorkflow: wf})
	if perr == nil {
		c.proveCI(ctx, p, res, wf)
	}
	r := c.published(ctx, p, b, res, perr)
	for k, v := range files {
		r.Outputs = withOutput(r.Outputs, k, v)
	}
	return r
}

// plan is the job the pipeline runs, the model it asks for, and the
// environment the test command's is made from.
type plan struct {
	job     pipeline.Job
	choice  provider.Choice
	environ []string
}

// plan turns the inputs (then the policy's defaults, then built-in
// defaults) into the pipeline's job and the model choice.
func (c *console) plan(p *prepared, ws, tmp string) (plan, error) {
	in, d := p.in, p.cfg.Defaults
	job := pipeline.Job{Mode: p.job.Mode, Workdir: ws, FailureLog: p.job.FailureLog, Instructions: p.job.Instructions,
		// On mini-agent's own PR a person's command asks for a change even
		// when the tests pass (a review comment, not a red build).
		ChangeRequested: p.job.Iterate,
		TestCommand:     first(in.TestCommand, d.TestCommand), Protected: p.cfg.ProtectedPaths(), SecretNames: secretInputEnv,
		TestEnv: p.cfg.TestEnv, TestWritable: p.cfg.TestWritable, TestNetwork: in.TestNetwork, TestSockets: in.TestSockets,
		TestTimeout: 10 * time.Minute, Version: c.env.Version,
		TracePath: filepath.Join(tmp, "trace.jsonl"), BundlePath: filepath.Join(tmp, "bundle.json")}
	environ := proc.WithoutCommandFiles(c.env.environ())
	if in.Token != "" {
		// actions/checkout persists the token in .git/config in this form.
		environ = append(environ, tokenBasicEnv+"="+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+in.Token)))
	}
	if job.TestCommand == "" {
		d := testcmd.DetectIn(ws)
		for _, n := range d.Notes {
			fmt.Fprintf(c.log(), "test command detection: %s\n", n)
		}
		if job.TestCommand = d.Command; job.TestCommand == "" {
			return plan{}, exitcode.Usagef("no test-command input and none detected (no go.mod, package.json, Cargo.toml, pyproject.toml, pytest.ini or setup.cfg at the workspace root or in the directories below it that were searched)")
		}
		fmt.Fprintf(c.log(), "test command (detected: %s in %s): %s\n", d.Kind, strings.Join(d.Roots, ", "), job.TestCommand)
	}
	choice := provider.Choice{Config: provider.Config{Provider: first(strings.ToLower(in.Provider), d.Provider, "openai"),
		Model: first(in.Model, d.Model), BaseURL: first(in.BaseURL, d.BaseURL), Getenv: apiKeyGetenv(c.env.Getenv, in.APIKey)}}
	if choice.Provider == provider.ProviderScript {
		if in.Script == "" {
			return plan{}, exitcode.Usagef("provider script needs the script input (a JSONL trajectory)")
		}
		choice.ScriptPath = in.Script
	}
	steps := firstInt(in.MaxSteps, d.MaxSteps, agent.DefaultMaxSteps)
	minutes := firstInt(in.MaxMinutes, d.MaxMinutes, int(agent.DefaultTimeout/time.Minute))
	choice.MaxCostUSD = in.MaxCostUSD
	if choice.MaxCostUSD == 0 {
		choice.MaxCostUSD = d.MaxCostUSD
	}
	job.Limits = agent.Limits{MaxSteps: steps, Timeout: time.Duration(minutes) * time.Minute, MaxCostUSD: choice.MaxCostUSD}
	switch {
	case in.PriceIn != nil:
		choice.Price = &[2]float64{*in.PriceIn, *in.PriceOut}
	case d.PriceIn != nil:
		choice.Price = &[2]float64{*d.PriceIn, *d.PriceOut}
	}
	return plan{job: job, choice: choice, environ: environ}, nil
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

// tokenBasicEnv carries the token's basic-auth form among the environment
// the pipeline reads secrets from: its name marks it a secret, so the value
// is redacted from everything the model and the PR see, and the test
// command never gets it.
const tokenBasicEnv = "MINI_AGENT_GITHUB_TOKEN_BASIC_AUTH"

// checkWorkspace makes sure a fix is made on the failing commit: the
// published commit's parent is the workspace's HEAD.
func checkWorkspace(ctx context.Context, job *route.Job, ws, event string) error {
	if job.Mode != agent.ModeFix || job.HeadSHA == "" {
		return nil
	}
	out, err := gitexec.Output(ctx, gitexec.Options{Dir: ws}, "rev-parse", "HEAD")
	if err != nil {
		return exitcode.Usagef("the workspace %s is not a git checkout (run actions/checkout first): %v", ws, err)
	}
	if head := strings.TrimSpace(out); head != job.HeadSHA {
		return exitcode.Usagef("the workspace is at %s but the failure is at %s: check out the failing commit "+
			"(actions/checkout with `ref: %s`) so the fix applies to it", short(head), short(job.HeadSHA), refHint(event))
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

// warnPersistedCredentials warns when the checkout kept a credential in the
// git config (actions/checkout's default): test code the model writes runs
// in the workspace, where only the sandbox keeps it from the credential. Only names are read, never values.
func (c *console) warnPersistedCredentials(ctx context.Context, ws string) {
	out, err := gitexec.Output(ctx, gitexec.Options{Dir: ws}, "config", "--includes", "--name-only", "--get-regexp", `^http\..*\.extraheader$`)
	if err != nil || strings.TrimSpace(out) == "" {
		return
	}
	c.gha.Warningf("the checkout left a credential in the git config (%s): code the model writes runs as tests in this "+
		"workspace; the sandbox hides the credential from it where it can (the run's warnings say whether it did); use "+
		"actions/checkout with `persist-credentials: false` (mini-agent publishes through the API and needs no git credential)", oneLine(out))
}

// precheck ends the job before any model call when publishing would not
// take its result: a proposal refused anyway (closed PR for this failure at
// this commit, max attempts), GitHub refusing the writes (a read-only token,
// a ruleset), or a validated fix for this failure already on the fix branch
// (its PR is opened instead of running the model again).
func (c *console) precheck(ctx context.Context, p *prepared, job pipeline.Job, ws string) (*publish.Result, error) {
	stub := &bundle.Bundle{BaseSHA: p.job.HeadSHA, Command: job.TestCommand}
	logs := job.FailureLogs
	if job.FailureLog != "" {
		logs = append([]string{job.FailureLog}, logs...)
	}
	if len(logs) > 0 {
		// An unreadable failure is the pipeline's to report.
		if fc, err := pipeline.ExtractFailures(logs, ws); err == nil {
			stub.Signature = fc.Signature()
		}
	}
	publish.Annotate(stub, p.job)
	return publish.Precheck(ctx, p.gh, p.job, p.cfg.Config, stub, c.log())
}

// fetchLogs downloads each failed job's log (and its annotations) into a
// file of its own, so identical failures across jobs and matrix legs are
// merged with a count. A log that is gone is skipped with a warning; with
// none left, the harness runs the test command instead (nil).
func (c *console) fetchLogs(ctx context.Context, p *prepared, tmp string) ([]string, error) {
	var total int64
	var paths []string
	for i, j := range p.job.FailedJobs {
		if total >= maxLogBytes {
			c.gha.Warningf("failure logs past %d MB are not read (job %q)", maxLogBytes>>20, j.Name)
			break
		}
		path := filepath.Join(tmp, fmt.Sprintf("job-%d.log", i+1))
		n, err := c.fetchJobLog(ctx, p, j, path, min(maxJobLogBytes, maxLogBytes-total))
		if errors.Is(err, ghapi.ErrGone) || errors.Is(err, ghapi.ErrNotFound) {
			c.gha.Warningf("the log of job %q is not available: %v", j.Name, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		total += n
		paths = append(paths, path)
	}
	if len(paths) == 0 {
		c.gha.Warningf("no failed job's log could be read: running the test command to see what fails")
		return nil, nil
	}
	fmt.Fprintf(c.log(), "read %d failed job log(s), %d bytes\n", len(paths), total)
	return paths, nil
}

// fetchJobLog writes one job's log, at most limit bytes, then its
// annotations, to path.
func (c *console) fetchJobLog(ctx context.Context, p *prepared, j ghapi.Job, path string, limit int64) (int64, error) {
	rc, err := p.gh.JobLog(ctx, p.job.Owner, p.job.Repo, j.ID)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	// In mini-agent's own directory under RUNNER_TEMP, but never through a
	// link all the same.
	f, err := safefile.Create(path, 0o600)
	if err != nil {
		return 0, fmt.Errorf("failure log: %w", err)
	}
	defer f.Close()
	fmt.Fprintf(f, "=== mini-agent: log of failed job %q (failed steps: %s) ===\n", j.Name, strings.Join(j.FailedSteps, ", "))
	n, err := io.Copy(f, io.LimitReader(rc, limit))
	if err != nil {
		return 0, fmt.Errorf("failure log of job %q: %w", j.Name, err)
	}
	if j.CheckRunID != 0 {
		anns, err := p.gh.Annotations(ctx, p.job.Owner, p.job.Repo, j.CheckRunID)
		if err != nil {
			c.gha.Warningf("annotations of job %q: %v", j.Name, err)
		}
		for _, an := range anns {
			fmt.Fprintf(f, "annotation %s %s:%d: %s %s\n", an.Level, an.Path, an.StartLine, an.Title, oneLine(an.Message))
		}
	}
	return n, f.Close()
}
