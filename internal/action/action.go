// Package action is the GitHub Action as an application: `mini-agent
// action` (decide from the event, run the job, publish) and `mini-agent
// publish` (the write half of the two-job recipe). Both start from one
// preparation — inputs, GitHub client, repository policy, routed job,
// tracking comment — and end in a Result the caller turns into the
// process's outputs and exit code. It is a job-level package over route,
// config, pipeline and publish; cmd/mini-agent only calls Run and Publish.
//
// Job level: the application; uses route, config, pipeline, publish and ghapi.
package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

// Result is how one execution ended.
type Result struct {
	// Status is the `status` output (see docs/action.md, "Outputs").
	Status publish.Status
	// Code is the exit code (internal/exitcode).
	Code int
	// Summary is the job summary (markdown).
	Summary string
	// Outputs are the other outputs by name: pr-url, branch, bundle, trace,
	// steps, tokens, cost-usd.
	Outputs map[string]string
}

// Run is `mini-agent action`: it reads the event that started the workflow
// and the inputs, decides whether and how to act, runs the job and
// publishes the result. The outputs and job summary are written before it
// returns.
func Run(ctx context.Context, env Env) Result {
	c := newConsole(env)
	r := c.run(ctx)
	c.finish(r)
	return r
}

// Publish is `mini-agent publish BUNDLE`: the event is routed again and the
// repository's policy (from cfgPath, or the input, or the default) is
// applied to a bundle made by an earlier read-only job before anything is
// written.
func Publish(ctx context.Context, env Env, bundlePath, cfgPath string) Result {
	c := newConsole(env)
	r := c.publish(ctx, bundlePath, cfgPath)
	c.finish(r)
	return r
}

// prepared is what both commands start from, built once and not changed
// afterwards.
type prepared struct {
	in  inputs
	gh  *ghapi.Client
	cfg *config.Loaded
	job *route.Job
	// tracker is the PR's tracking comment (nil without a PR).
	tracker *publish.Tracker
}

func (c *console) run(ctx context.Context) Result {
	in, err := readInputs(c.gha)
	if err != nil {
		return c.fail(ctx, nil, err)
	}
	p, end := c.prepare(ctx, in)
	if end != nil {
		return *end
	}
	fmt.Fprintf(c.log(), "mini-agent: %s\nwrite policy: %s (%s)\npolicy file: %s\n", p.job.Trigger, p.job.Write, p.job.Reason, p.cfg.Origin)
	if p.job.Help {
		return c.help(ctx, p)
	}
	if p.job.Flaky {
		return c.flaky(ctx, p)
	}
	if p.job.Refresh {
		c.refreshCI(ctx, p)
		return Result{Status: publish.StatusSkipped, Code: exitcode.OK, Summary: "## mini-agent: CI refreshed\n\n" + p.job.Reason + "\n"}
	}
	if p.job.FollowUp {
		// The completion itself first: it has the failure's logs, which a
		// refresh of the same PR would not show.
		r := c.followUp(ctx, p)
		c.refreshCI(ctx, p)
		return r
	}
	c.refreshCI(ctx, p)
	return c.work(ctx, p)
}

func (c *console) publish(ctx context.Context, path, cfgPath string) Result {
	in, err := readInputs(c.gha)
	if cfgPath != "" {
		in.Config = cfgPath
	}
	if err != nil {
		return c.fail(ctx, nil, err)
	}
	if in.Token == "" {
		return c.fail(ctx, nil, exitcode.Usagef("GITHUB_TOKEN (or INPUT_GITHUB_TOKEN) is empty: publish needs a token with write permissions"))
	}
	b, err := bundle.Read(path)
	if err != nil {
		return c.fail(ctx, nil, exitcode.Usagef("%w", err))
	}
	r := c.publishBundle(ctx, in, b)
	r.Outputs = withOutput(r.Outputs, "bundle", path)
	return r
}

func (c *console) publishBundle(ctx context.Context, in inputs, b *bundle.Bundle) Result {
	p, end := c.prepare(ctx, in)
	if end != nil {
		return *end
	}
	if p.job.Help || p.job.FollowUp || p.job.Refresh || p.job.Flaky {
		return Result{Status: publish.StatusSkipped, Code: exitcode.OK,
			Summary: "## mini-agent: skipped\n\nhelp, CI follow-ups and mode flaky are answered by `mini-agent action`, not publish\n"}
	}
	fmt.Fprintf(c.log(), "mini-agent publish: %s\nwrite policy: %s (%s)\npolicy file: %s\n", p.job.Trigger, p.job.Write, p.job.Reason, p.cfg.Origin)
	publish.Annotate(b, p.job)
	wf := c.ciWorkflow(p.job)
	res, perr := publish.Publish(ctx, p.gh, publish.Request{Bundle: b, Job: p.job, Config: p.cfg.Config, Log: c.log(), Tracker: p.tracker, CIWorkflow: wf})
	if perr == nil {
		c.proveCI(ctx, p, res, wf)
	}
	return c.published(ctx, p, b, res, perr)
}

// withOutput is outputs with name set to value.
func withOutput(outputs map[string]string, name, value string) map[string]string {
	if outputs == nil {
		outputs = map[string]string{}
	}
	outputs[name] = value
	return outputs
}

// prepare reads the event, connects to GitHub, loads the policy and routes
// the event. A non-nil Result means the execution ends here: skipped,
// refused or failed.
func (c *console) prepare(ctx context.Context, in inputs) (*prepared, *Result) {
	end := func(r Result) (*prepared, *Result) { return nil, &r }
	ev, err := c.event(in)
	if err != nil {
		return end(c.fail(ctx, nil, exitcode.Usagef("%w", err)))
	}
	p := &prepared{in: in}
	if in.Token != "" {
		p.gh, err = ghapi.New(ctx, ghapi.Options{Token: in.Token, BaseURL: c.env.Getenv("GITHUB_API_URL"),
			HTTPClient: c.env.httpClient(), WriteInterval: c.env.WriteInterval})
		if err != nil {
			return end(c.fail(ctx, nil, exitcode.Usagef("%w", err)))
		}
	}
	router := &route.Router{LoadConfig: func(ctx context.Context, defaultBranch string) (*config.Loaded, error) {
		if p.gh == nil {
			return nil, errNoToken
		}
		owner, repo, _ := strings.Cut(c.env.Getenv("GITHUB_REPOSITORY"), "/")
		return config.Load(ctx, p.gh, owner, repo, defaultBranch, in.Config)
	}}
	if p.gh != nil {
		router.GitHub = p.gh
	}
	d, cfg, err := router.Route(ctx, ev)
	p.cfg = cfg
	if err != nil {
		return end(c.fail(ctx, nil, err))
	}
	job := d.Job
	if job == nil {
		job = d.About // a skip that stops a job already authorized
	}
	if job != nil && job.PR != 0 && p.gh != nil {
		p.tracker = &publish.Tracker{GH: p.gh, Owner: job.Owner, Repo: job.Repo, PR: job.PR}
	}
	if d.Skipped() {
		c.gha.Noticef("mini-agent skipped: %s", d.Reason)
		c.replySkipped(ctx, p.tracker, d)
		return end(Result{Status: publish.StatusSkipped, Code: exitcode.OK, Summary: "## mini-agent: skipped\n\n" + d.Reason + "\n"})
	}
	accepted := *job
	if accepted.RunURL == "" && accepted.Source != route.SourceRun && accepted.CommentID == 0 {
		// An in-job step: this run is the failing one. A comment command's
		// run is not, and its failing run is not known: no link.
		accepted.RunURL = c.env.currentRunURL()
	}
	p.job = &accepted
	return p, nil
}

// errNoToken: the event needs the API and no token was given.
var errNoToken = exitcode.Usagef("github-token is empty (and GITHUB_TOKEN is not set): mini-agent needs it to read the policy file and publish")

// event reads the triggering event from GITHUB_EVENT_NAME / _PATH.
func (c *console) event(in inputs) (route.Event, error) {
	g := c.env.Getenv
	ev := route.Event{Name: g("GITHUB_EVENT_NAME"), Repo: g("GITHUB_REPOSITORY"), SHA: g("GITHUB_SHA"), Ref: g("GITHUB_REF"),
		Mode: in.Mode, FailureLog: in.FailureLog}
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
