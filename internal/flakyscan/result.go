package flakyscan

import "time"

// TestRef identifies a test in the history.
type TestRef struct {
	Workflow   string `json:"workflow"`
	WorkflowID int64  `json:"workflow_id"`
	Job        string `json:"job"`
	Package    string `json:"package,omitempty"`
	Test       string `json:"test"`
}

// Occurrence is one attempt of a run in the evidence.
type Occurrence struct {
	RunID   int64  `json:"run_id"`
	Attempt int    `json:"attempt"`
	HeadSHA string `json:"head_sha"`
	Branch  string `json:"branch"`
	Event   string `json:"event"`
	// RunURL links the run; AttemptURL the attempt; JobURL the job.
	RunURL     string `json:"run_url"`
	AttemptURL string `json:"attempt_url"`
	JobURL     string `json:"job_url,omitempty"`
	JobID      int64  `json:"job_id"`
	// RunCreated is when the run was created (its commit's push, roughly);
	// At when the job started.
	RunCreated time.Time     `json:"run_created"`
	At         time.Time     `json:"at"`
	Duration   time.Duration `json:"duration"`
}

// Signal names.
const (
	SignalSameCode     = "same-code"      // failed and passed on the same commit
	SignalAcrossCommit = "across-commits" // failed on several commits while passing between them
)

// Candidate is a cluster of tests that failed together, with a flake
// signal.
type Candidate struct {
	// Tests are the cluster's tests, sorted; Tests[0] names the cluster.
	Tests []TestRef `json:"tests"`
	// Signals are the flake signals seen (SignalSameCode, SignalAcrossCommit).
	Signals []string `json:"signals"`
	// Failures are the failed attempts (one per failed job), oldest first.
	Failures []Occurrence `json:"failures"`
	// Passes are the attempts whose job passed that the signals rest on,
	// oldest first.
	Passes []Occurrence `json:"passes"`
	// Commits are the head SHAs the tests failed on, in first-seen order.
	Commits []string `json:"commits"`
	// Messages are the distinct failure messages, as logged (untrusted), at
	// most maxMessages.
	Messages []string `json:"messages"`
	// Wasted is the sum of the failed jobs' durations: CI time lost.
	Wasted time.Duration `json:"wasted"`
}

// Ignored counts what the scan left out, and why.
type Ignored struct {
	NotCompleted   int `json:"not_completed"`
	CancelledRuns  int `json:"cancelled_runs"`
	CancelledJobs  int `json:"cancelled_jobs"`
	NonTestFailure int `json:"non_test_failure"`
	Infrastructure int `json:"infrastructure"`
	LogsGone       int `json:"logs_gone"`
}

// Result is what a scan found.
type Result struct {
	// From and To are the first and last days scanned (midnight UTC).
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// TruncatedDays are days GitHub could not list completely; nothing
	// from them was used.
	TruncatedDays []time.Time `json:"truncated_days"`
	// Candidates are ranked by Wasted, then by failures.
	Candidates []Candidate `json:"candidates"`
	Ignored    Ignored     `json:"ignored"`
	// Runs is how many runs were listed on complete days; Attempts how many
	// attempts' jobs were read; Logs how many job logs were downloaded.
	Runs     int `json:"runs"`
	Attempts int `json:"attempts"`
	Logs     int `json:"logs"`
	// APICalls is how many GitHub API requests the scan made (listing
	// pages, job listings, log requests; transport retries not counted,
	// nor the downloads from the log storage host).
	APICalls int `json:"api_calls"`
}
