package bundle

// Verdict is what the baseline showed about the target tests at the base
// commit, on a clean checkout, before the agent ran.
type Verdict string

// Baseline verdicts.
const (
	// VerdictReproduced: every target test failed on every baseline run.
	VerdictReproduced Verdict = "reproduced"
	// VerdictIntermittent: the targets failed on some runs only: a flake,
	// for the flaky path (its evidence, its rerun bar).
	VerdictIntermittent Verdict = "intermittent"
	// VerdictNotReproduced: the targets passed on every run here, so no fix
	// can be proven.
	VerdictNotReproduced Verdict = "not-reproduced"
	// VerdictNoTargets: the job names no failing test (a requested change
	// on a passing suite): nothing to reproduce, only nothing to break.
	VerdictNoTargets Verdict = "no-targets"
)

// TestRecord is one test's runs in one phase (base or after).
type TestRecord struct {
	ID       string `json:"id"`
	Runs     int    `json:"runs"`
	Failures int    `json:"failures"`
	// Message is the first failure's text, bounded.
	Message string `json:"message,omitempty"`
}

// Passes reports a test that ran and never failed.
func (t TestRecord) Passes() bool { return t.Runs > 0 && t.Failures == 0 }

// Phase is the harness's runs of one tree: the target tests narrowed
// (Narrowed times each), then the full test command once, caches off.
type Phase struct {
	// Tree is the git tree id the runs were made on.
	Tree string `json:"tree"`
	// Targets are the target tests' records.
	Targets []TestRecord `json:"targets,omitempty"`
	// Failed are the tests (or, when the runner's output does not name
	// them, "(suite)") that failed in the full command's run.
	Failed []string `json:"failed,omitempty"`
	// FullPassed is the full command's exit status: 0 and in time.
	FullPassed bool `json:"full_passed"`
	// FullRan says the full command ran to an outcome.
	FullRan bool `json:"full_ran"`
	// Runs counts the command runs made; Duration their seconds.
	Runs     int     `json:"runs"`
	Duration float64 `json:"duration_s"`
	// Commands are the command lines as run (narrowed, full).
	Commands []string `json:"commands,omitempty"`
	// Notes say what could not be done as asked.
	Notes []string `json:"notes,omitempty"`
}

// Target is the record of the target id in p, and whether there is one.
func (p *Phase) Target(id string) (TestRecord, bool) {
	if p == nil {
		return TestRecord{}, false
	}
	for _, t := range p.Targets {
		if t.ID == id {
			return t, true
		}
	}
	return TestRecord{}, false
}

// Baseline is the base commit's phase and its verdict.
type Baseline struct {
	Verdict Verdict `json:"verdict"`
	Commit  string  `json:"commit"`
	Phase
	// PreExisting are tests that failed at the base but are not targets:
	// not required to pass, required not to get worse.
	PreExisting []string `json:"pre_existing,omitempty"`
	// Environment is what the harness can see of this machine (tool
	// versions, OS), for a failure that does not reproduce here.
	Environment []string `json:"environment,omitempty"`
	// CIEnvironment is what the failing CI log says of its machine (runner,
	// OS, image, Go versions, the names of the variables its steps set),
	// to compare with Environment.
	CIEnvironment []string `json:"ci_environment,omitempty"`
}

// Proof is the published tree's phase and the harness's judgement of it.
type Proof struct {
	Phase
	// Holds is true when every target failed at the base and passes after,
	// and no test that passed at the base fails after.
	Holds bool `json:"holds"`
	// NewFailures are tests that did not fail at the base and fail after.
	NewFailures []string `json:"new_failures,omitempty"`
	// Reasons say why the proof does not hold (empty when it does).
	Reasons []string `json:"reasons,omitempty"`
	// LeftOut are files the run created in the workspace that the change
	// does not carry (ignored or untracked): a fix that needs them is not
	// in the PR.
	LeftOut []string `json:"left_out,omitempty"`
}
