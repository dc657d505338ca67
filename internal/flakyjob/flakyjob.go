// Package flakyjob is the action's scheduled flaky-test mode (`mode:
// flaky`): it wires the pieces that find, prove, report and fix flaky tests
// into one run under the repository's budgets.
//
//  1. Scan the default branch's CI history (internal/flakyscan). Nothing
//     found: return having written nothing.
//  2. Examine the top candidates (at most flaky.max-fixes) in the checked-out
//     workspace with the local stress runs (internal/flakyrun), narrowed to
//     the candidate's tests; when none of them fails alone, once more with
//     the whole suite (an order dependence needs its neighbours). A test the
//     workspace does not have is reported, not guessed.
//  3. File or update one issue per candidate with the local proof
//     (internal/flakyissue).
//  4. For each locally flaky test (never a `failing` one: that is a
//     regression), within max-fixes and max-prs: the fix job with the
//     evidence (flakyfix.Fix); only a `proven` fix becomes a draft PR
//     "Tracked by #N" through internal/publish, its body adding the
//     before/after table and the anti-pattern checks. Any other outcome is
//     said on the issue once per status and commit.
//  5. Quarantine (opt-in, flaky.quarantine-file): a flaky test without a
//     proven fix is proposed in a draft PR adding its name to that file.
//
// The workspace is reset to its commit between candidates, so a fix's edits
// never reach the next candidate's proof. Every PR is found again by its
// branch (derived from the test), so a later scheduled run never opens a
// second one for the same test.
//
// Job level: uses flakyscan, flakyrun, flakyissue, publish, config and ghapi.
package flakyjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyissue"
	"github.com/org/mini-agent/internal/flakyscan"
	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/redact"
	"github.com/org/mini-agent/internal/testcmd"
)

// GitHub is what the flaky job reads and writes (ghapi.Client implements it).
type GitHub interface {
	flakyscan.Source
	flakyissue.Client
	publish.GitHub
}

// Job is one scheduled run of the flaky mode.
type Job struct {
	Owner, Repo string
	// DefaultBranch is scanned, and receives the PRs.
	DefaultBranch string
	// Workdir is the checkout of the default branch (clean: a workspace
	// with uncommitted changes is examined, but nothing is fixed in it).
	Workdir string
	// Command is the parsed test command.
	Command *testcmd.Command
	// Config is the repository's policy (its flaky: section, labels,
	// protected paths, branch prefix, max-diff).
	Config *config.Config
	// Fix is the template of every fix job: limits, protected paths,
	// secret names, test environment, version. Mode, Workdir, TestCommand,
	// FailureLog, TracePath and BundlePath are set per candidate.
	Fix pipeline.Job
	// Deps are the fix jobs' dependencies (the model). A nil Model turns
	// fixes off (detection and issues still run).
	Deps pipeline.Deps
	// OutDir receives each fix job's trace and bundle.
	OutDir string
	// Env, EnvAllow, SecretNames, WritableDirs and NoSandbox contain the
	// local test runs (see flakyrun.Config).
	Env, EnvAllow, SecretNames, WritableDirs []string
	NoSandbox                                bool
	// Trigger describes the event, for PR bodies.
	Trigger string
	// End is a time on the last day scanned; zero means now.
	End time.Time
	// MinRuns overrides flakyrun's clean executions that end a passing
	// test's examination (0: its default). Tests lower it.
	MinRuns int
	// Seed, when not zero, makes the local runs' shuffled orders
	// reproducible (flakyrun.Config.Seed); zero keeps random seeds.
	Seed int64
	// Progress receives one line per step; nil discards.
	Progress io.Writer
}

// TestResult is one test of a candidate as examined locally.
type TestResult struct {
	Ref flakyscan.TestRef
	// LocalID is the id the local runs gave it ("" when not found).
	LocalID string
	// Report is the local evidence (zero when not examined or not found).
	Report *flaky.TestReport
	// Problem says why the test has no local verdict.
	Problem string
}

// Candidate is one ranked candidate and what became of it.
type Candidate struct {
	flakyscan.Candidate
	// Examined: the local runs were made (within max-fixes).
	Examined bool
	// WholeSuite: the tests failed only when run with the whole suite.
	WholeSuite bool
	Tests      []TestResult
	// Issue is the candidate's issue (0: none, e.g. the new-issue budget).
	Issue int
	// Fix is the judged fix of the candidate's flaky test, if one ran.
	Fix *flaky.FixReport
	// FixTest is the test the fix was for.
	FixTest string
	// PR is the draft PR of a proven fix, Quarantine the quarantine PR.
	PR, Quarantine *PR
	// Notes say what was skipped and why (budgets, an existing PR).
	Notes []string

	local *examined
}

// PR is a pull request the run opened or found.
type PR struct {
	Number int
	URL    string
	// Existing: opened by an earlier run (nothing written this time).
	Existing bool
}

// Result is what the run did.
type Result struct {
	Scan       *flakyscan.Result
	Candidates []*Candidate
	Issues     *flakyissue.Outcome
	// Notes are run-wide remarks (a dirty workspace, no model).
	Notes []string
}

// Run runs the flaky mode. Errors are API or workspace failures; budgets
// and refusals are in the Result.
func Run(ctx context.Context, gh GitHub, job Job) (*Result, error) {
	if job.Owner == "" || job.Repo == "" || job.DefaultBranch == "" || job.Command == nil || job.Config == nil {
		return nil, errors.New("flakyjob: owner, repository, default branch, test command and policy are required")
	}
	fc := job.Config.Flaky
	// Everything the mode publishes or logs is redacted, whichever step
	// wrote it.
	rd := secrets(ctx, job)
	gh = redactingGitHub{GitHub: gh, rd: rd}
	r := &runner{gh: gh, job: job, log: job.Progress}
	if r.log == nil {
		r.log = io.Discard
	}
	r.log = redact.Writer{W: r.log, Rd: rd}
	scan, err := flakyscan.Scan(ctx, gh, flakyscan.Options{Owner: job.Owner, Repo: job.Repo, End: job.End,
		Days: fc.WindowDays, DefaultBranch: job.DefaultBranch})
	if err != nil {
		return nil, fmt.Errorf("flakyjob: %w", err)
	}
	res := &Result{Scan: scan}
	defer func() {
		for _, c := range res.Candidates {
			if c.local != nil {
				c.local.res.RemoveLogs()
			}
		}
	}()
	r.logf("flaky: scanned %d day(s), %d runs, %d API calls: %d candidate(s)", fc.WindowDays, scan.Runs, scan.APICalls, len(scan.Candidates))
	if len(scan.Candidates) == 0 {
		return res, nil
	}
	head, clean, err := r.workspaceState(ctx)
	if err != nil {
		return nil, err
	}
	r.head, r.clean = head, clean
	if !clean {
		res.Notes = append(res.Notes, "the workspace has uncommitted changes: the tests were examined as they are, but nothing is fixed or proposed from it")
	}
	if job.Deps.Model.Model == nil {
		res.Notes = append(res.Notes, "no model: fixes are off")
	}
	for i := range scan.Candidates {
		res.Candidates = append(res.Candidates, &Candidate{Candidate: scan.Candidates[i]})
	}

	// Local proof of the top candidates.
	proofs := map[flakyscan.TestRef]flakyissue.Proof{}
	for i, c := range res.Candidates {
		if i >= fc.Fixes() {
			c.Notes = append(c.Notes, fmt.Sprintf("not examined locally: flaky.max-fixes is %d", fc.Fixes()))
			continue
		}
		if pending, err := r.pendingFix(ctx, c); err != nil || pending {
			if err != nil {
				return res, err
			}
			continue
		}
		if err := r.reset(ctx); err != nil {
			return res, err
		}
		if err := r.examine(ctx, c, proofs); err != nil {
			return res, err
		}
	}

	out, err := flakyissue.Publish(ctx, gh, scan, flakyissue.Options{Owner: job.Owner, Repo: job.Repo, Label: fc.Label,
		MaxNewIssues: issueBudget(fc.Issues()), Proofs: proofs})
	res.Issues = out
	for i, n := range out.Issues {
		res.Candidates[i].Issue = n
	}
	if err != nil {
		return res, err
	}

	// Fixes, then quarantine, within the PR budget.
	prs := 0
	for _, c := range res.Candidates {
		if !c.Examined {
			continue
		}
		target := flakiest(c.Tests)
		if err := r.regressionNote(ctx, c); err != nil {
			return res, err
		}
		if target == nil {
			continue
		}
		switch {
		case !clean || job.Deps.Model.Model == nil:
		case prs >= fc.PRs():
			c.Notes = append(c.Notes, fmt.Sprintf("no fix attempted: flaky.max-prs (%d) reached", fc.PRs()))
		default:
			opened, err := r.fix(ctx, c, target)
			if err != nil {
				return res, err
			}
			if opened {
				prs++
			}
		}
		if c.PR != nil || fc.QuarantineFile == "" || !clean {
			continue
		}
		if prs >= fc.PRs() {
			c.Notes = append(c.Notes, fmt.Sprintf("no quarantine proposed: flaky.max-prs (%d) reached", fc.PRs()))
			continue
		}
		opened, err := r.quarantine(ctx, c, target)
		if err != nil {
			return res, err
		}
		if opened {
			prs++
		}
	}
	return res, r.reset(ctx)
}

// issueBudget maps the policy's max-issues onto flakyissue's (0 there
// means its default; negative means none).
func issueBudget(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

type runner struct {
	gh   GitHub
	job  Job
	log  io.Writer
	head string
	// clean: the workspace had no uncommitted change at the start, so
	// resetting it loses nothing.
	clean bool
}

func (r *runner) logf(format string, args ...any) { fmt.Fprintf(r.log, format+"\n", args...) }

// workspaceState is the checkout's HEAD and whether it is clean.
func (r *runner) workspaceState(ctx context.Context) (string, bool, error) {
	opt := gitexec.Options{Dir: r.job.Workdir}
	head, err := gitexec.Output(ctx, opt, "rev-parse", "HEAD")
	if err != nil {
		return "", false, fmt.Errorf("flakyjob: the workspace %s is not a git checkout (run actions/checkout first): %w", r.job.Workdir, err)
	}
	st, err := gitexec.Output(ctx, opt, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return "", false, fmt.Errorf("flakyjob: %w", err)
	}
	return strings.TrimSpace(head), strings.TrimSpace(st) == "", nil
}

// reset puts the workspace back at its commit: tracked files restored,
// untracked files removed (ignored ones, such as build caches, kept). It is
// only done on a workspace that was clean at the start.
func (r *runner) reset(ctx context.Context) error {
	if !r.clean {
		return nil
	}
	opt := gitexec.Options{Dir: r.job.Workdir}
	st, err := gitexec.Output(ctx, opt, "status", "--porcelain", "--untracked-files=all")
	if err != nil || strings.TrimSpace(st) == "" {
		return err
	}
	if _, err := gitexec.Output(ctx, opt, "reset", "-q", "--hard", r.head); err != nil {
		return fmt.Errorf("flakyjob: reset the workspace: %w", err)
	}
	if _, err := gitexec.Output(ctx, opt, "clean", "-q", "-f", "-d"); err != nil {
		return fmt.Errorf("flakyjob: reset the workspace: %w", err)
	}
	return nil
}
