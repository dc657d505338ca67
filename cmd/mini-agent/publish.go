package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
	"github.com/sethvargo/go-githubactions"
)

func publishCommand() (*command, *string) {
	cfgPath := new(string)
	return &command{
		name:  "publish",
		usage: "publish [--config PATH] BUNDLE",
		about: "Publishes a bundle made by 'mini-agent fix --bundle BUNDLE' in an earlier, read-only job of the " +
			"same workflow run (the two-job recipe): the event is routed again and the repository's policy (read " +
			"from the default branch) is applied to the bundle before anything is written. Needs GITHUB_TOKEN (or " +
			"INPUT_GITHUB_TOKEN) with contents and pull-requests write permission, and the runner's GITHUB_EVENT_* " +
			"variables. Sets the same outputs as the action when GITHUB_OUTPUT is set.",
		groups: []flagGroup{{"Policy", []string{"config"}}},
		meta:   map[string]string{"config": "PATH"},
		examples: []string{
			"mini-agent publish bundle.json",
			"mini-agent publish --config .github/mini-agent.yml bundle.json",
		},
		footer: "Exit codes: 0 published (or skipped), 1 not fixed, 2 usage or configuration error, 3 validation " +
			"failed, 4 a GitHub API error or a bundle refused by the policy.",
		define: func(fs *flag.FlagSet) {
			fs.StringVar(cfgPath, "config", "", "policy file in the repository (default "+config.DefaultPath+")")
		},
	}, cfgPath
}

// runPublish is `mini-agent publish BUNDLE`, the write half of the two-job
// recipe.
func runPublish(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, cfg := publishCommand()
	fs := c.flagSet()
	if code, done := c.parse(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 1 {
		return c.usageError(stderr, fmt.Sprintf("give one bundle file, got %d arguments; Usage: mini-agent %s", fs.NArg(), c.usage))
	}
	return publishMain(ctx, processEnv(stdout, stderr), fs.Arg(0), *cfg)
}

func publishMain(ctx context.Context, env actionEnv, bundlePath, cfgPath string) int {
	a := &actionRun{ctx: ctx, env: env, out: map[string]string{}}
	a.gha = githubactions.New(githubactions.WithGetenv(env.Getenv), githubactions.WithWriter(lockedWriter{&a.lock, env.Stdout}))
	status, code, summary := a.publishBundle(ctx, bundlePath, cfgPath)
	a.out["status"] = status
	a.finish(summary)
	return code
}

func (a *actionRun) publishBundle(ctx context.Context, path, cfgPath string) (string, int, string) {
	in, err := readInputs(a.gha)
	if cfgPath != "" {
		in.Config = cfgPath
	}
	a.in = in
	if err != nil {
		return a.fail(pipeline.ExitUsage, err)
	}
	if in.Token == "" {
		return a.fail(pipeline.ExitUsage, errors.New("GITHUB_TOKEN (or INPUT_GITHUB_TOKEN) is empty: publish needs a token with write permissions"))
	}
	b, err := bundle.Read(path)
	if err != nil {
		return a.fail(pipeline.ExitUsage, err)
	}
	a.out["bundle"] = path
	ev, err := a.event()
	if err != nil {
		return a.fail(pipeline.ExitUsage, err)
	}
	if err := a.connect(ctx, in.Token); err != nil {
		return a.fail(pipeline.ExitUsage, err)
	}
	if end := a.route(ctx, ev); end != nil {
		return end.status, end.code, end.summary
	}
	if a.job.Help {
		return string(publish.StatusSkipped), pipeline.ExitOK, "## mini-agent: skipped\n\nhelp is answered by `mini-agent action`, not publish\n"
	}
	if a.job.RunURL == "" && a.job.Source != route.SourceRun {
		a.job.RunURL = a.currentRunURL()
	}
	fmt.Fprintf(a.log(), "mini-agent publish: %s\nwrite policy: %s (%s)\npolicy file: %s\n", a.job.Trigger, a.job.Write, a.job.Reason, a.cfg.Origin)
	publish.Annotate(b, a.job)
	res, perr := publish.Publish(ctx, a.gh, publish.Request{Bundle: b, Job: a.job, Config: a.cfg.Config, Log: a.log()})
	return a.published(b, res, perr)
}
