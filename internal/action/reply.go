package action

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

// fail ends the execution with an error annotation; a command's tracking
// comment says so too, so a requested run never ends in silence. p is nil
// before the event is routed.
func (c *console) fail(ctx context.Context, p *prepared, err error) Result {
	msg := describe(err)
	c.gha.Errorf("mini-agent: %s", msg)
	c.trackFailure(ctx, p, msg)
	return Result{Status: publish.StatusFailed, Code: exitcode.ForAction(ctx, err), Summary: "## mini-agent: failed\n\n" + msg + "\n",
		Outputs: map[string]string{"error": msg}}
}

// jobFieldNames are the job's fields as an action user knows them.
var jobFieldNames = map[string]string{
	"workdir":      "the workspace (GITHUB_WORKSPACE)",
	"test-command": "the test-command input",
	"failure-log":  "the failure-log input",
	"mode":         "the mode input",
	"model":        "the model",
	"bundle":       "the bundle file",
	"summary":      "the summary file",
	"trace":        "the trace file",
}

// describe is err in the action's words: its inputs, not the CLI's flags.
func describe(err error) string {
	var (
		ce *pipeline.ConfigError
		be *provider.BudgetError
	)
	switch {
	case errors.As(err, &ce):
		name := jobFieldNames[ce.Field]
		if name == "" {
			name = ce.Field
		}
		return ce.Describe(name)
	case errors.As(err, &be):
		return be.Describe("max-cost-usd", "the price-in", "price-out inputs")
	}
	return err.Error()
}

// trackFailure puts a failure on a command's tracking comment.
func (c *console) trackFailure(ctx context.Context, p *prepared, why string) {
	if p == nil || p.job == nil || p.job.CommentID == 0 || p.tracker == nil {
		return
	}
	msg := fmt.Sprintf("**mini-agent** · %s\n\n**Failed:** %s\n\nSee %s\n", p.job.Trigger, why, c.env.currentRunURL())
	if _, err := p.tracker.Post(context.WithoutCancel(ctx), msg); err != nil {
		fmt.Fprintf(c.env.Stderr, "mini-agent: updating the tracking comment: %v\n", err)
	}
}

// replySkipped answers a person's comment command that an authorized
// route stopped (off label, PR head moved, a fork head): they asked, so
// they are told.
func (c *console) replySkipped(ctx context.Context, t *publish.Tracker, d route.Decision) {
	j := d.About
	if j == nil || j.CommentID == 0 || t == nil {
		return
	}
	if _, err := t.Post(ctx, fmt.Sprintf("**mini-agent** · %s\n\n**Skipped:** %s.\n", j.Trigger, d.Reason)); err != nil {
		c.gha.Warningf("could not answer the command: %v", err)
	}
}

// help answers `/mini-agent help` (or an unknown command) on the tracking
// comment.
func (c *console) help(ctx context.Context, p *prepared) Result {
	job := p.job
	text := helpText(p.cfg.Config)
	if job.UnknownVerb != "" {
		text = fmt.Sprintf("Unknown command `%s`.\n\n%s", job.UnknownVerb, text)
	}
	if err := p.gh.ReactToComment(ctx, job.Owner, job.Repo, job.CommentID, "eyes"); err != nil {
		c.gha.Warningf("could not react to the command: %v", err)
	}
	if p.tracker == nil {
		return c.fail(ctx, p, errors.New("help: no pull request to answer on"))
	}
	if _, err := p.tracker.Post(ctx, text); err != nil {
		return c.fail(ctx, p, err)
	}
	return Result{Status: publish.StatusAnswered, Code: exitcode.OK, Summary: "## mini-agent: help\n\n" + text}
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
