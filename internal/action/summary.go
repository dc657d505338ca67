package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/report"
)

// published turns the publisher's result into outputs, annotations, the
// job summary and the exit code.
func (c *console) published(ctx context.Context, p *prepared, b *bundle.Bundle, res *publish.Result, perr error) Result {
	if perr != nil && res == nil {
		return c.fail(ctx, p, perr)
	}
	out := map[string]string{"pr-url": res.PRURL, "branch": res.Branch}
	if res.Status == publish.StatusFailed {
		out["error"] = res.Reason
		if res.Refusal != nil {
			out["error"] = res.Refusal.Line()
		}
	}
	if b.Run.Steps > 0 || b.Usage.InputTokens > 0 {
		out["steps"] = fmt.Sprint(b.Run.Steps)
		out["tokens"] = fmt.Sprint(b.Usage.InputTokens + b.Usage.OutputTokens)
		if b.CostKnown {
			out["cost-usd"] = fmt.Sprintf("%.4f", b.CostUSD)
		}
	}
	for _, w := range b.Warnings {
		c.gha.Warningf("%s", w)
	}
	code := exitcode.ForPublished(res.Status, b.Status)
	if perr != nil {
		code = exitcode.ForAction(ctx, perr)
	}
	r := Result{Status: res.Status, Code: code, Summary: c.summary(p, b, res), Outputs: out}
	switch res.Status {
	case publish.StatusFixed, publish.StatusExplained, publish.StatusSkipped:
		c.gha.Noticef("mini-agent %s: %s", res.Status, res.Reason)
	case publish.StatusNotFixed, publish.StatusNotReproduced:
		c.annotateFailure(b, res.Reason)
	default:
		if res.Refusal != nil {
			c.gha.WithFieldsMap(map[string]string{"title": "GitHub refused to publish (mini-agent)"}).Errorf("%s", res.Reason)
		} else {
			c.gha.Errorf("mini-agent failed: %s", res.Reason)
		}
		c.trackFailure(ctx, p, res.Reason)
		r.Status = publish.StatusFailed
	}
	return r
}

// summary is the job summary: the outcome, then the same report as the PR.
func (c *console) summary(p *prepared, b *bundle.Bundle, res *publish.Result) string {
	var w strings.Builder
	fmt.Fprintf(&w, "## mini-agent: %s\n\n", res.Status)
	if why := report.Why(b); why != "" {
		// A stopped run leads with why it stopped.
		fmt.Fprintf(&w, "**%s**\n\n", report.Untrusted(strings.ToUpper(why[:1])+why[1:]))
	}
	if rf := res.Refusal; rf != nil {
		// What to change comes first: the report below is what it saves.
		w.WriteString(refusalSection(rf, res))
	} else {
		fmt.Fprintf(&w, "%s\n\n", res.Reason)
	}
	if res.PRURL != "" && (res.Action == publish.ActionPRCreated || res.Action == publish.ActionPRUpdated || res.Action == publish.ActionDraftPR) {
		fmt.Fprintf(&w, "Pull request: %s (branch `%s`)\n\n", res.PRURL, res.Branch)
	}
	if res.CommentURL != "" {
		fmt.Fprintf(&w, "Comment: %s\n\n", res.CommentURL)
	}
	if p != nil && p.job != nil {
		fmt.Fprintf(&w, "Trigger: %s. Policy file: %s.\n\n", p.job.Trigger, p.cfg.Origin)
	}
	if b.Version == 0 {
		return w.String() // no run happened (pre-checked)
	}
	w.WriteString(report.Body(b, report.Options{CINote: publish.CINote, Version: c.env.Version}))
	if b.Diff != "" && res.Action != publish.ActionPRCreated && res.Action != publish.ActionPRUpdated && res.Action != publish.ActionPushed {
		fence := report.Fence(b.Diff, 4)
		fmt.Fprintf(&w, "\n<details><summary>Diff (%s)</summary>\n\n%sdiff\n%s\n%s\n</details>\n", b.Status, fence, strings.TrimRight(cut(b.Diff, 200_000), "\n"), fence)
	}
	return w.String()
}

// refusalSection is the job summary's account of a refusal: GitHub's
// answer, what to change, and where the validated fix is.
func refusalSection(rf *publish.Refusal, res *publish.Result) string {
	var w strings.Builder
	switch {
	case res.BeforeModel && rf.Status != 0:
		w.WriteString("**Publishing would be refused, so the model was not run.** GitHub answered a first write:\n\n")
		fmt.Fprintf(&w, "> %d: %s", rf.Status, report.Untrusted(rf.GitHub))
		if rf.DocURL != "" {
			fmt.Fprintf(&w, " (%s)", rf.DocURL)
		}
		w.WriteString("\n\n")
	case rf.Status != 0:
		w.WriteString("**GitHub refused to publish.** It answered:\n\n")
		fmt.Fprintf(&w, "> %d: %s", rf.Status, report.Untrusted(rf.GitHub))
		if rf.DocURL != "" {
			fmt.Fprintf(&w, " (%s)", rf.DocURL)
		}
		w.WriteString("\n\n")
	default:
		fmt.Fprintf(&w, "**Publishing would be refused, so the model was not run.** %s.\n\n", strings.TrimSuffix(rf.GitHub, "."))
	}
	fmt.Fprintf(&w, "**To fix:** %s.\n\n", rf.Fix)
	if res.Branch != "" && res.Commit != "" {
		fmt.Fprintf(&w, "The validated fix is committed on branch `%s` (%s). Once this is fixed, rerun the job: it opens the pull "+
			"request for that commit without calling the model again.\n\n", res.Branch, res.Commit)
	}
	return w.String()
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "\n… (cut; the whole diff is in the bundle)"
}

var location = regexp.MustCompile(`([A-Za-z0-9_./-]+\.[A-Za-z0-9]+):(\d+)`)

// annotateFailure writes an error annotation, pointing at the root cause's
// first file:line inside the workspace when there is one.
func (c *console) annotateFailure(b *bundle.Bundle, why string) {
	msg := "mini-agent found no validated fix: " + why
	ws := c.env.workspace()
	for _, m := range location.FindAllStringSubmatch(b.Report.RootCause, -1) {
		p := filepath.ToSlash(filepath.Clean(m[1]))
		if strings.HasPrefix(p, "../") || filepath.IsAbs(p) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(ws, p)); err == nil && !fi.IsDir() {
			if _, err := strconv.Atoi(m[2]); err == nil {
				c.gha.WithFieldsMap(map[string]string{"file": p, "line": m[2]}).Errorf("%s", msg)
				return
			}
		}
	}
	c.gha.Errorf("%s", msg)
}
