// Package diffcheck finds the usual wrong "fixes" of a flaky test in a
// fix's unified diff: new sleeps, raised timeouts, retry loops, skips,
// build tags, deleted or renamed tests, weaker assertions, recover(),
// discarded errors, pytest/jest rerun options and edits to protected files.
// Each finding has a stable check name, a severity (reject or flag), a
// file:line and one sentence the model can act on.
//
// Go files are compared before and after with go/parser; Python and
// JavaScript files, and every file for the timeout check, are judged on
// the diff's lines. The checks are mechanical: they see patterns, not
// intent, so a "reject" is a refusal to accept the diff as a root-cause fix,
// never a claim that the diff is wrong.
//
// Leaf engine: imports nothing above it (protect, glob, go-gitdiff).
package diffcheck

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/org/mini-agent/internal/protect"
)

// Severity says what a finding does to the fix.
type Severity string

// The severities.
const (
	// Reject: the diff is not accepted as a fix.
	Reject Severity = "reject"
	// Flag: allowed, but named in the PR body.
	Flag Severity = "flag"
)

// The check names; they are stable and appear in reports. All reject but
// the last two, which flag.
const (
	NewSleep          = "new-sleep"           // time.Sleep/After/Tick outside a synctest bubble; sleep/setTimeout in Python/JS
	TimeoutOnly       = "timeout-only"        // a changed line only raises a timeout, deadline or wait
	RetryLoop         = "retry-loop"          // a loop that re-runs the test body or an assertion until it passes
	NewSkip           = "new-skip"            // t.Skip*, testing.Short(), pytest skip/xfail, it.skip/xit
	NewBuildTag       = "new-build-tag"       // a new //go:build or // +build line
	DeletedTest       = "deleted-test"        // a test present before is gone
	RenamedTest       = "renamed-test"        // a test gone with a new one in its place
	FewerAssertions   = "fewer-assertions"    // a kept test has fewer assertion calls
	NewRecover        = "new-recover"         // a new recover()
	DiscardedError    = "discarded-error"     // a new `_ = err`
	PytestFlakyMarker = "pytest-flaky-marker" // @pytest.mark.flaky, @flaky, --reruns
	JestRetry         = "jest-retry"          // jest.retryTimes, vitest retry:, mocha this.retries
	ProtectedFile     = "protected-file"      // .github/**, go.mod/go.sum, CI configuration, Options.Protected
	RemovedParallel   = "removed-parallel"    // flag: t.Parallel() removed
	NonTestEdit       = "non-test-edit"       // flag: a file outside tests changed
)

// Limits on untrusted input.
const (
	MaxDiffSize = 4 << 20 // bytes of diff accepted
	MaxFileSize = 2 << 20 // bytes of one before/after file read
)

// Finding is one anti-pattern seen in the diff.
type Finding struct {
	Check    string   `json:"name"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	// Line is in the after file (the before file for deletions); 0 when the
	// finding is about the whole file.
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s (%s): %s", f.File, f.Line, f.Check, f.Severity, f.Reason)
}

// Source gives the contents of a file before and after the fix; paths are
// the diff's slash-separated, repository-relative names.
type Source interface {
	Before(path string) ([]byte, error)
	After(path string) ([]byte, error)
}

// Options adjust the checks.
type Options struct {
	// Protected are extra globs whose edits are rejected, on top of
	// DefaultProtected (e.g. the config's protected-paths).
	Protected []string
}

// Rejected reports whether any finding rejects the diff.
func Rejected(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity == Reject })
}

// RejectedChecks names the checks among the rejecting findings, each once,
// in order of first finding (never nil).
func RejectedChecks(fs []Finding) []string {
	names := []string{}
	for _, f := range fs {
		if f.Severity == Reject && !slices.Contains(names, f.Check) {
			names = append(names, f.Check)
		}
	}
	return names
}

// Check runs every check on the unified diff. A diff that does not parse,
// or a Go file that does not parse, is an error and no findings: the checks
// cannot vouch for what they cannot read. An empty diff has no findings.
func Check(diff string, src Source, opt Options) ([]Finding, error) {
	if len(diff) > MaxDiffSize {
		return nil, fmt.Errorf("diffcheck: diff is %d bytes, more than the %d accepted", len(diff), MaxDiffSize)
	}
	protected, err := protect.WithDefaults(append(slices.Clone(DefaultProtected), opt.Protected...))
	if err != nil {
		return nil, fmt.Errorf("diffcheck: %w", err)
	}
	files, err := parseDiff(diff)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, fc := range files {
		fs, err := checkFile(fc, src, protected)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Check, b.Check))
	})
	return slices.Compact(out), nil
}

func checkFile(fc *fileChange, src Source, protected *protect.Set) ([]Finding, error) {
	var out []Finding
	out = append(out, pathFindings(fc, protected)...)
	if strings.HasSuffix(fc.path(), ".go") && !fc.binary {
		before, after, err := readBoth(fc, src)
		if err != nil {
			return nil, err
		}
		fs, err := goFindings(fc, before, after)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	out = append(out, textFindings(fc)...)
	return out, nil
}

func readBoth(fc *fileChange, src Source) (before, after []byte, err error) {
	if !fc.isNew {
		if before, err = src.Before(fc.oldPath); err != nil {
			return nil, nil, fmt.Errorf("diffcheck: read %s before the fix: %w", fc.oldPath, err)
		}
	}
	if !fc.isDelete {
		if after, err = src.After(fc.newPath); err != nil {
			return nil, nil, fmt.Errorf("diffcheck: read %s after the fix: %w", fc.newPath, err)
		}
	}
	if len(before) > MaxFileSize || len(after) > MaxFileSize {
		return nil, nil, fmt.Errorf("diffcheck: %s is larger than %d bytes", fc.path(), MaxFileSize)
	}
	return before, after, nil
}

// Dirs is a Source reading two directory trees, such as a checkout before
// the fix and a copy with the fix applied. Paths may not leave the trees.
type Dirs struct {
	BeforeDir, AfterDir string
}

// Before implements Source.
func (d Dirs) Before(p string) ([]byte, error) { return readUnder(d.BeforeDir, p) }

// After implements Source.
func (d Dirs) After(p string) ([]byte, error) { return readUnder(d.AfterDir, p) }

func readUnder(dir, p string) ([]byte, error) {
	if p == "" || path.IsAbs(p) || strings.Contains(p, "\\") {
		return nil, fmt.Errorf("refusing path %q", p)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, errors.New("file too large")
	}
	return data, nil
}
