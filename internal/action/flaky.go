package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/flakyjob"
	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/testcmd"
)

// flaky is `mode: flaky` on a schedule or a dispatch: the flaky-test scan
// of the default branch's CI history, the local proof in the checkout, the
// issues, and draft PRs for proven fixes (and quarantine, when the policy
// names a file), under the policy's flaky: budgets.
func (c *console) flaky(ctx context.Context, p *prepared) Result {
	job := p.job
	if ref := c.env.Getenv("GITHUB_REF"); ref != "" && ref != "refs/heads/"+job.DefaultBranch {
		why := fmt.Sprintf("mode flaky examines and fixes the default branch %s, but this run is on %s: run it from %s",
			job.DefaultBranch, ref, job.DefaultBranch)
		c.gha.Noticef("mini-agent skipped: %s", why)
		return Result{Status: publish.StatusSkipped, Code: exitcode.OK, Summary: "## mini-agent: skipped\n\n" + why + "\n"}
	}
	ws := c.env.workspace()
	if _, err := gitexec.Output(ctx, gitexec.Options{Dir: ws}, "rev-parse", "HEAD"); err != nil {
		return c.fail(ctx, p, exitcode.Usagef("mode flaky needs a checkout of %s in the workspace %s (run actions/checkout first): %v", job.DefaultBranch, ws, err))
	}
	c.warnPersistedCredentials(ctx, ws)
	tmp, err := c.env.tempDir()
	if err != nil {
		return c.fail(ctx, p, err)
	}
	pl, err := c.plan(p, ws, tmp)
	if err != nil {
		return c.fail(ctx, p, err)
	}
	cmd, err := testcmd.Parse(pl.job.TestCommand)
	if err != nil {
		return c.fail(ctx, p, exitcode.Usagef("the test-command input: %w", err))
	}
	var deps pipeline.Deps
	if p.cfg.Flaky.Fixes() > 0 && p.cfg.Flaky.PRs() > 0 {
		model, err := provider.Select(pl.choice)
		if err != nil {
			// Detection and issues need no model: say why nothing is fixed.
			c.gha.Warningf("mode flaky: no model (%s): flaky tests are reported, not fixed", describe(err))
		} else {
			deps = pipeline.Deps{Model: model, Progress: c.log(), Environ: pl.environ}
		}
	}
	res, err := flakyjob.Run(ctx, p.gh, flakyjob.Job{Owner: job.Owner, Repo: job.Repo, DefaultBranch: job.DefaultBranch,
		Workdir: ws, Command: cmd, Config: p.cfg.Config, Fix: pl.job, Deps: deps, OutDir: tmp,
		Env: pl.environ, EnvAllow: pl.job.TestEnv, SecretNames: pl.job.SecretNames, WritableDirs: pl.job.TestWritable,
		Trigger: job.Trigger, Seed: p.cfg.Flaky.Seed, Progress: c.log()})
	if err != nil {
		r := c.fail(ctx, p, err)
		if res != nil {
			r.Summary += "\n" + res.Markdown()
			r.Outputs = flakyOutputs(res)
		}
		return r
	}
	status := flakyStatus(res)
	r := Result{Status: status, Code: exitcode.ForPublished(status, ""), Summary: res.Markdown(), Outputs: flakyOutputs(res)}
	c.gha.Noticef("mini-agent flaky: %s: %d candidate(s), issues %s, PRs %s", status, len(res.Candidates),
		orNoneList(r.Outputs["flaky-issues"]), orNoneList(r.Outputs["flaky-prs"]))
	return r
}

// flakyStatus: skipped when the history shows no flaky test; fixed when
// every candidate has a proven fix's PR (opened now or by an earlier run);
// not-fixed otherwise: flaky, failing or not-reproduced tests remain, and
// the issues say which.
func flakyStatus(res *flakyjob.Result) publish.Status {
	if len(res.Candidates) == 0 {
		return publish.StatusSkipped
	}
	for _, c := range res.Candidates {
		if c.PR == nil {
			return publish.StatusNotFixed
		}
	}
	return publish.StatusFixed
}

// flakyOutputs are the flaky-issues and flaky-prs outputs (comma-separated
// numbers) and pr-url (the first PR).
func flakyOutputs(res *flakyjob.Result) map[string]string {
	join := func(ns []int) string {
		s := make([]string, len(ns))
		for i, n := range ns {
			s[i] = strconv.Itoa(n)
		}
		return strings.Join(s, ",")
	}
	out := map[string]string{"flaky-issues": join(res.IssueNumbers()), "flaky-prs": join(res.PRNumbers())}
	for _, c := range res.Candidates {
		for _, pr := range []*flakyjob.PR{c.PR, c.Quarantine} {
			if pr != nil && out["pr-url"] == "" {
				out["pr-url"] = pr.URL
			}
		}
	}
	return out
}

func orNoneList(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
