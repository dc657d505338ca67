package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/report"
)

// outputNames are the action's outputs, always all set (empty when unknown).
var outputNames = []string{"status", "pr-url", "branch", "bundle", "trace", "steps", "tokens", "cost-usd"}

// finish sets the outputs and writes the job summary. The runner's files
// are optional (a local run has none): without them the values are logged.
func (a *actionRun) finish(summary string) {
	for _, k := range outputNames {
		v := a.out[k]
		if a.env.Getenv("GITHUB_OUTPUT") == "" {
			fmt.Fprintf(a.log(), "output %s=%s\n", k, v)
			continue
		}
		if err := fileCommand(func() { a.gha.SetOutput(k, v) }); err != nil {
			fmt.Fprintf(a.env.Stderr, "mini-agent: setting output %s: %v\n", k, err)
		}
	}
	if footer := report.Footer(versionString()); summary != "" && !strings.Contains(summary, footer) {
		summary += "\n" + footer
	}
	if summary != "" && a.env.Getenv("GITHUB_STEP_SUMMARY") != "" {
		if err := fileCommand(func() { a.gha.AddStepSummary(summary) }); err != nil {
			fmt.Fprintf(a.env.Stderr, "mini-agent: writing the job summary: %v\n", err)
		}
	}
}

// fileCommand runs a go-githubactions file command, which panics when the
// runner's file cannot be written, as an error.
func fileCommand(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// summary is the job summary: the outcome, then the same report as the PR.
func (a *actionRun) summary(b *bundle.Bundle, res *publish.Result) string {
	var w strings.Builder
	fmt.Fprintf(&w, "## mini-agent: %s\n\n", res.Status)
	if why := report.Why(b); why != "" {
		// A stopped run leads with why it stopped.
		fmt.Fprintf(&w, "**%s**\n\n", report.Untrusted(strings.ToUpper(why[:1])+why[1:]))
	}
	fmt.Fprintf(&w, "%s\n\n", res.Reason)
	if res.PRURL != "" && (res.Action == publish.ActionPRCreated || res.Action == publish.ActionPRUpdated || res.Action == publish.ActionDraftPR) {
		fmt.Fprintf(&w, "Pull request: %s (branch `%s`)\n\n", res.PRURL, res.Branch)
	}
	if res.CommentURL != "" {
		fmt.Fprintf(&w, "Comment: %s\n\n", res.CommentURL)
	}
	if a.job != nil {
		fmt.Fprintf(&w, "Trigger: %s. Policy file: %s.\n\n", a.job.Trigger, a.cfg.Origin)
	}
	if b.Version == 0 {
		return w.String() // no run happened (pre-checked)
	}
	w.WriteString(report.Body(b, report.Options{CINote: publish.CINote, Version: versionString()}))
	if b.Diff != "" && res.Action != publish.ActionPRCreated && res.Action != publish.ActionPRUpdated && res.Action != publish.ActionPushed {
		fence := fenceFor(b.Diff)
		fmt.Fprintf(&w, "\n<details><summary>Diff (%s)</summary>\n\n%sdiff\n%s\n%s\n</details>\n", b.Status, fence, strings.TrimRight(cut(b.Diff, 200_000), "\n"), fence)
	}
	return w.String()
}

// fenceFor is a backtick fence longer than any run of backticks in s (at
// least four), so the model-written diff cannot close its code block.
func fenceFor(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(4, longest+1))
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
func (a *actionRun) annotateFailure(b *bundle.Bundle, why string) {
	msg := "mini-agent found no validated fix: " + why
	for _, m := range location.FindAllStringSubmatch(b.Report.RootCause, -1) {
		p := filepath.ToSlash(filepath.Clean(m[1]))
		if strings.HasPrefix(p, "../") || filepath.IsAbs(p) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(a.ws, p)); err == nil && !fi.IsDir() {
			if _, err := strconv.Atoi(m[2]); err == nil {
				a.gha.WithFieldsMap(map[string]string{"file": p, "line": m[2]}).Errorf("%s", msg)
				return
			}
		}
	}
	a.gha.Errorf("%s", msg)
}

// fetchLogs downloads each failed job's log (and its annotations) into a
// file of its own, so identical failures across jobs and matrix legs are
// merged with a count. A log that is gone is skipped with a warning; with
// none left, the harness runs the test command instead (nil).
func (a *actionRun) fetchLogs(ctx context.Context) ([]string, error) {
	job := a.job
	var total int64
	var paths []string
	for i, j := range job.FailedJobs {
		if total >= maxLogBytes {
			a.gha.Warningf("failure logs past %d MB are not read (job %q)", maxLogBytes>>20, j.Name)
			break
		}
		n, path, err := a.fetchJobLog(ctx, i, j, min(maxJobLogBytes, maxLogBytes-total))
		if errors.Is(err, ghapi.ErrGone) || errors.Is(err, ghapi.ErrNotFound) {
			a.gha.Warningf("the log of job %q is not available: %v", j.Name, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		total += n
		paths = append(paths, path)
	}
	if len(paths) == 0 {
		a.gha.Warningf("no failed job's log could be read: running the test command to see what fails")
		return nil, nil
	}
	fmt.Fprintf(a.log(), "read %d failed job log(s), %d bytes\n", len(paths), total)
	return paths, nil
}

// fetchJobLog writes one job's log, at most limit bytes, then its
// annotations, to job-N.log in the temp dir.
func (a *actionRun) fetchJobLog(ctx context.Context, i int, j ghapi.Job, limit int64) (int64, string, error) {
	job := a.job
	rc, err := a.gh.JobLog(ctx, job.Owner, job.Repo, j.ID)
	if err != nil {
		return 0, "", err
	}
	defer rc.Close()
	path := filepath.Join(a.tmp, fmt.Sprintf("job-%d.log", i+1))
	f, err := os.Create(path)
	if err != nil {
		return 0, "", fmt.Errorf("failure log: %w", err)
	}
	defer f.Close()
	fmt.Fprintf(f, "=== mini-agent: log of failed job %q (failed steps: %s) ===\n", j.Name, strings.Join(j.FailedSteps, ", "))
	n, err := io.Copy(f, io.LimitReader(rc, limit))
	if err != nil {
		return 0, "", fmt.Errorf("failure log of job %q: %w", j.Name, err)
	}
	if j.CheckRunID != 0 {
		anns, err := a.gh.Annotations(ctx, job.Owner, job.Repo, j.CheckRunID)
		if err != nil {
			a.gha.Warningf("annotations of job %q: %v", j.Name, err)
		}
		for _, an := range anns {
			fmt.Fprintf(f, "annotation %s %s:%d: %s %s\n", an.Level, an.Path, an.StartLine, an.Title, oneLine(an.Message))
		}
	}
	return n, path, f.Close()
}
