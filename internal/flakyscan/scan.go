// Package flakyscan finds flaky tests in a repository's GitHub Actions
// history: it reads the workflow runs of a window of days (one filtered
// listing per day, so GitHub's 1,000-result cap never truncates a day
// silently), the jobs of every attempt of re-run and failed runs, and the
// failed jobs' logs through the failure extractor, and reports the tests
// that both failed and passed on the same code, grouped into clusters of
// tests that fail together and ranked by the CI minutes their failures
// wasted. It posts nothing; see internal/flakyissue for that.
//
// What counts as a flake signal, for a test identified by workflow, job
// name, package and test id:
//
//   - same code: the test failed in one attempt and its job succeeded in
//     another attempt of the same run (a re-run uses the same commit and
//     ref), or in another run on the same head SHA when neither run was
//     triggered by a pull_request-like event (those test a merge commit
//     that moves with the base branch, so their head SHA does not name the
//     code that ran);
//   - across commits: on push-like runs of the default branch, in the order
//     the runs were created (re-running an old commit does not make it
//     newer), the test failed, later its job succeeded, later the test
//     failed again, with its failures on at least two commits. A test that
//     fails on every run since some commit (a regression), or that failed
//     for a while and then passed for good (a fixed regression), has no
//     such pattern and is not reported.
//
// Ignored: cancelled attempts and jobs (a run whose latest attempt was
// cancelled still contributes its earlier, completed attempts); failed
// jobs whose log shows no failing
// test (a lint, build or setup step failed: a failure outside the test
// step); failed jobs where most tests failed (the infrastructure rule, see
// infrastructure); runs not completed; days whose listing is truncated
// (reported, and nothing from them is used).
//
// Job level: uses ghapi and the failure extractor.
package flakyscan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/failure"
)

// Defaults.
const (
	// DefaultDays is the default window.
	DefaultDays = 14
	// DefaultMaxFailingTests is the default of Options.MaxFailingTests.
	DefaultMaxFailingTests = 25
	// DefaultMaxLogBytes is how much of a job log is read by default.
	DefaultMaxLogBytes = 64 << 20
	// DefaultMaxLogs bounds the logs one scan downloads by default.
	DefaultMaxLogs = 500
)

// Source is the GitHub side of a scan; *ghapi.Client implements it.
type Source interface {
	RunsOnDay(ctx context.Context, owner, repo string, day time.Time) (*ghapi.DayRuns, error)
	JobsOfAttempt(ctx context.Context, owner, repo string, runID int64, attempt int) (*ghapi.AttemptJobs, error)
	JobLog(ctx context.Context, owner, repo string, jobID int64) (io.ReadCloser, error)
}

// Options configure Scan. Owner and Repo are required.
type Options struct {
	Owner, Repo string
	// End is a time on the last day scanned (UTC date); zero means now.
	End time.Time
	// Days is the window, ending with End's day; 0 means DefaultDays.
	Days int
	// DefaultBranch enables the across-commits signal on the push-like
	// runs of this branch; empty disables that signal.
	DefaultBranch string
	// MaxFailingTests: a failed job whose log reports more distinct failing
	// tests is an infrastructure failure; 0 means DefaultMaxFailingTests.
	MaxFailingTests int
	// MaxLogBytes bounds how much of one log is read; 0 means
	// DefaultMaxLogBytes.
	MaxLogBytes int64
	// MaxLogs bounds the logs downloaded; a scan that needs more fails
	// rather than concluding from part of the history. 0 means
	// DefaultMaxLogs.
	MaxLogs int
}

// Scan reads the history and finds the flaky candidates. It fails on an
// API error other than an expired log, and when ctx ends.
func Scan(ctx context.Context, src Source, opt Options) (*Result, error) {
	if opt.Owner == "" || opt.Repo == "" {
		return nil, errors.New("flakyscan: owner and repository are required")
	}
	if opt.Days < 0 || opt.MaxFailingTests < 0 || opt.MaxLogBytes < 0 || opt.MaxLogs < 0 {
		return nil, errors.New("flakyscan: negative limit")
	}
	opt.Days = cmpOr(opt.Days, DefaultDays)
	opt.MaxFailingTests = cmpOr(opt.MaxFailingTests, DefaultMaxFailingTests)
	opt.MaxLogBytes = cmpOr(opt.MaxLogBytes, DefaultMaxLogBytes)
	opt.MaxLogs = cmpOr(opt.MaxLogs, DefaultMaxLogs)
	if opt.End.IsZero() {
		opt.End = time.Now()
	}
	s := &scan{ctx: ctx, src: src, opt: opt, res: &Result{}, fails: map[TestRef][]failObs{}, passes: map[jobKey][]Occurrence{}}
	if err := s.run(); err != nil {
		return nil, err
	}
	s.res.Candidates = s.candidates()
	return s.res, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// jobKey is a job across runs: the same workflow and job name.
type jobKey struct {
	workflowID int64
	job        string
}

type failObs struct {
	occ     Occurrence
	message string
}

type scan struct {
	ctx    context.Context
	src    Source
	opt    Options
	res    *Result
	fails  map[TestRef][]failObs
	passes map[jobKey][]Occurrence
}

func (s *scan) run() error {
	end := s.opt.End.UTC()
	var runs []ghapi.ListedRun
	for i := s.opt.Days - 1; i >= 0; i-- {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		d, err := s.src.RunsOnDay(s.ctx, s.opt.Owner, s.opt.Repo, end.AddDate(0, 0, -i))
		if d != nil {
			s.res.APICalls += d.Requests
		}
		if err != nil {
			return fmt.Errorf("flakyscan: %w", err)
		}
		if s.res.From.IsZero() {
			s.res.From = d.Day
		}
		s.res.To = d.Day
		if d.Truncated {
			s.res.TruncatedDays = append(s.res.TruncatedDays, d.Day)
			continue
		}
		runs = append(runs, d.Runs...)
	}
	s.res.Runs = len(runs)

	// Pass 1: the attempts that may hold failures — every attempt but a
	// green latest one.
	type todo struct {
		run     ghapi.ListedRun
		attempt int
	}
	var greens []ghapi.ListedRun
	var failing []todo
	badSHAs := map[string]bool{} // head SHAs of non-PR runs with a failed or re-run attempt
	for _, r := range runs {
		if r.Status != "completed" {
			s.res.Ignored.NotCompleted++
			continue
		}
		for a := 1; a < r.RunAttempt; a++ {
			failing = append(failing, todo{r, a})
		}
		switch r.Conclusion {
		case "failure", "timed_out":
			failing = append(failing, todo{r, r.RunAttempt})
		case "success":
			greens = append(greens, r)
		case "cancelled":
			s.res.Ignored.CancelledRuns++
		}
		if (r.RunAttempt > 1 || r.Conclusion == "failure" || r.Conclusion == "timed_out") && !prLike(r.Event) {
			badSHAs[r.HeadSHA] = true
		}
	}
	for _, t := range failing {
		if err := s.attempt(t.run, t.attempt); err != nil {
			return err
		}
	}
	// Pass 2: green latest attempts that can be evidence of a pass: the
	// last attempt of a re-run run, another run of a failing commit, or a
	// default-branch push — and only for workflows that had a test failure.
	// A default-branch push only matters between two test failures of its
	// workflow on that branch, on different commits (the across-commits
	// signal), so only those are read.
	failingWorkflows := map[int64]bool{}
	type span struct {
		first, last time.Time
		shas        map[string]bool
	}
	spans := map[int64]*span{}
	for ref, fs := range s.fails {
		failingWorkflows[ref.WorkflowID] = true
		for _, f := range fs {
			if f.occ.Branch != s.opt.DefaultBranch || prLike(f.occ.Event) {
				continue
			}
			sp := spans[ref.WorkflowID]
			if sp == nil {
				sp = &span{first: f.occ.RunCreated, last: f.occ.RunCreated, shas: map[string]bool{}}
				spans[ref.WorkflowID] = sp
			}
			sp.shas[f.occ.HeadSHA] = true
			if f.occ.RunCreated.Before(sp.first) {
				sp.first = f.occ.RunCreated
			}
			if f.occ.RunCreated.After(sp.last) {
				sp.last = f.occ.RunCreated
			}
		}
	}
	between := func(r ghapi.ListedRun) bool {
		sp := spans[r.WorkflowID]
		return s.onDefaultBranch(r) && sp != nil && len(sp.shas) >= 2 && r.CreatedAt.After(sp.first) && r.CreatedAt.Before(sp.last)
	}
	for _, r := range greens {
		if !failingWorkflows[r.WorkflowID] {
			continue
		}
		if r.RunAttempt > 1 || (!prLike(r.Event) && badSHAs[r.HeadSHA]) || between(r) {
			if err := s.attempt(r, r.RunAttempt); err != nil {
				return err
			}
		}
	}
	return nil
}

// prLike reports events whose runs test a merge commit rather than their
// head SHA.
func prLike(event string) bool {
	return event == "pull_request" || event == "pull_request_target" || event == "merge_group"
}

func (s *scan) onDefaultBranch(r ghapi.ListedRun) bool {
	return s.opt.DefaultBranch != "" && r.HeadBranch == s.opt.DefaultBranch && !prLike(r.Event)
}

// attempt reads the jobs of attempt n of r: passes are recorded for green
// jobs, failing tests for failed ones.
func (s *scan) attempt(r ghapi.ListedRun, n int) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	js, err := s.src.JobsOfAttempt(s.ctx, s.opt.Owner, s.opt.Repo, r.ID, n)
	if js != nil {
		s.res.APICalls += js.Requests
	}
	if err != nil {
		return fmt.Errorf("flakyscan: %w", err)
	}
	s.res.Attempts++
	for _, j := range js.Jobs {
		occ := Occurrence{
			RunID: r.ID, Attempt: n, HeadSHA: r.HeadSHA, Branch: r.HeadBranch, Event: r.Event,
			RunURL: r.HTMLURL, AttemptURL: fmt.Sprintf("%s/attempts/%d", r.HTMLURL, n),
			JobURL: j.HTMLURL, JobID: j.ID, RunCreated: r.CreatedAt, At: j.StartedAt, Duration: j.Duration(),
		}
		if occ.At.IsZero() {
			occ.At = r.CreatedAt
		}
		key := jobKey{r.WorkflowID, j.Name}
		switch {
		case j.Conclusion == "success" && len(j.FailedSteps()) == 0:
			// A step that failed under continue-on-error leaves the job
			// green: such a job is no evidence that its tests passed.
			s.passes[key] = append(s.passes[key], occ)
		case j.Conclusion == "cancelled":
			s.res.Ignored.CancelledJobs++
		case j.Failed():
			if err := s.failedJob(r, j, occ); err != nil {
				return err
			}
		}
	}
	return nil
}

// failedJob reads a failed job's log and records its failing tests, unless
// the failure lies outside the tests or is an infrastructure failure.
func (s *scan) failedJob(r ghapi.ListedRun, j ghapi.AttemptJob, occ Occurrence) error {
	if s.res.Logs >= s.opt.MaxLogs {
		return fmt.Errorf("flakyscan: more than %d failed jobs to read in the window; shorten the window or raise the log budget", s.opt.MaxLogs)
	}
	s.res.APICalls++
	s.res.Logs++
	body, err := s.src.JobLog(s.ctx, s.opt.Owner, s.opt.Repo, j.ID)
	if errors.Is(err, ghapi.ErrGone) || errors.Is(err, ghapi.ErrNotFound) {
		s.res.Ignored.LogsGone++
		return nil
	}
	if err != nil {
		return fmt.Errorf("flakyscan: %w", err)
	}
	defer body.Close()
	lc := &lineCounter{}
	fc, err := failure.Extract(io.TeeReader(io.LimitReader(body, s.opt.MaxLogBytes), lc), failure.Options{})
	if err != nil {
		return fmt.Errorf("flakyscan: log of job %d: %w", j.ID, err)
	}
	lc.flush()
	tests := 0
	seen := map[string]bool{}
	for _, f := range fc.Failures {
		if k := f.Package + "\x00" + f.ID; !seen[k] {
			seen[k] = true
			tests++
		}
	}
	switch {
	case tests == 0:
		s.res.Ignored.NonTestFailure++
		return nil
	case infrastructure(tests+fc.Omitted, s.opt.MaxFailingTests, lc.c):
		s.res.Ignored.Infrastructure++
		return nil
	}
	for _, f := range fc.Failures {
		ref := TestRef{Workflow: r.Name, WorkflowID: r.WorkflowID, Job: j.Name, Package: f.Package, Test: f.ID}
		obs := s.fails[ref]
		if len(obs) > 0 && obs[len(obs)-1].occ.JobID == j.ID {
			continue // the same test reported twice in one log
		}
		s.fails[ref] = append(obs, failObs{occ: occ, message: f.Message})
	}
	return nil
}
