// Package failure turns a CI log or a test run's output into a compact,
// structured account of what failed: the failing tests with their location
// and assertion message, build errors, and the failed step of a GitHub
// Actions job, rendered for the model within a byte budget.
//
// Input is streamed line by line with bounded memory: a GitHub Actions job
// log (timestamps, groups, ##[error] lines, ANSI colours), raw test output of
// the recognized runners (go test and go test -json, pytest, jest, vitest,
// node's test runner, cargo test, rustc, tsc), or JUnit XML. When nothing is
// recognized, a generic excerpt (windows around error lines plus the tail)
// is kept instead.
//
// Leaf engine: imports nothing above it.
package failure

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Limits that keep memory bounded whatever the size of the log.
const (
	// DefaultBudget is the default byte budget of the rendered context.
	DefaultBudget = 8192
	// maxLine is how much of one log line is kept; the rest is dropped.
	maxLine = 4096
	// maxFailures is how many distinct failures one context keeps.
	maxFailures = 500
	// maxBuildErrors is how many distinct build errors one context keeps.
	maxBuildErrors = 200
	// maxMessage bounds a failure's message.
	maxMessage = 2048
	// maxExcerpt bounds a failure's excerpt.
	maxExcerpt = 2048
	// maxExcerptLines bounds the lines of a failure's excerpt.
	maxExcerptLines = 40
)

// Failure is one failing test.
type Failure struct {
	// ID names the test as its runner does (TestX/sub, path::test, suite › test).
	ID string `json:"id"`
	// Package is the Go package, test file or suite the test belongs to.
	Package string `json:"package,omitempty"`
	// Location is file:line (sometimes file:line:col) of the failure,
	// relative to the workspace when it points inside it.
	Location string `json:"location,omitempty"`
	// Message is the assertion message or error.
	Message string `json:"message,omitempty"`
	// Excerpt is supporting output (stack, diff, source frame), bounded.
	Excerpt string `json:"excerpt,omitempty"`
	// Count is how many times this failure was seen (jobs, matrix legs).
	Count int `json:"count"`
}

// BuildError is one compiler or type-checker error.
type BuildError struct {
	// Location is file:line:col of the error.
	Location string `json:"location,omitempty"`
	// Message is the compiler's message.
	Message string `json:"message"`
	// Count is how many times this error was seen (jobs, matrix legs).
	Count int `json:"count"`
}

// FailureContext is what failed, extracted from one or more logs.
type FailureContext struct {
	// Failures are the failing tests, in the order they were reported.
	Failures []Failure `json:"failures,omitempty"`
	// BuildErrors are compiler errors, in the order they were reported.
	BuildErrors []BuildError `json:"build_errors,omitempty"`
	// Omitted counts failures and build errors beyond the kept limits.
	Omitted int `json:"omitted,omitempty"`
	// Step is the failed Actions step's title (e.g. "Run go test ./...").
	Step string `json:"step,omitempty"`
	// Command is the failed step's script, when the log shows it.
	Command string `json:"command,omitempty"`
	// ExitCode is the failed step's exit code; 0 when unknown.
	ExitCode int `json:"exit_code,omitempty"`
	// Source names the recognizers that produced the result, comma-separated.
	Source string `json:"source,omitempty"`
	// Generic is the fallback excerpt, set only when nothing was recognized.
	Generic string `json:"generic,omitempty"`
	// Budget is the default byte budget of Render.
	Budget int `json:"budget,omitempty"`
	// Note says what is wrong with the input itself (a report cut short).
	Note string `json:"note,omitempty"`
}

// Options tunes extraction.
type Options struct {
	// Workspace is the repository checkout; locations pointing inside it
	// are made relative to it. Optional.
	Workspace string
	// Budget is the byte budget of the rendered context (DefaultBudget if 0).
	Budget int

	// perLine feeds every line to the recognizers (no quiet path): the
	// reference the quiet path is tested against.
	perLine bool
	// excerptOnly: see segmenter.
	excerptOnly bool
}

// Extract reads a CI log, test output or JUnit XML document from r and
// returns what failed. It reads r to the end, line by line, and never holds
// more than a bounded amount of it.
//
// When r is also an io.Seeker (a file, a bytes.Reader), the steps of an
// Actions log after the first are recognized, and the generic excerpt is
// built, only when the result needs them, by reading those steps again
// (see deferred); the result is the same, and r is left at no particular
// offset.
func Extract(r io.Reader, opt Options) (*FailureContext, error) {
	origin := int64(-1)
	rs, seekable := r.(io.ReadSeeker)
	if seekable {
		if o, err := rs.Seek(0, io.SeekCurrent); err == nil {
			origin = o
		}
	}
	br := bufio.NewReaderSize(r, readBuffer)
	if isXML(br) {
		return extractJUnit(br, opt)
	}
	var fc *FailureContext
	var err error
	if origin >= 0 {
		fc, err = extractSeekable(br, rs, origin, opt)
	} else {
		fc, err = extractLines(br, opt)
	}
	if err != nil {
		return nil, fmt.Errorf("extract failure: %w", err)
	}
	return fc, nil
}

// ExtractFile is Extract on a file; a .xml file is read as JUnit XML.
func ExtractFile(path string, opt Options) (*FailureContext, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("extract failure: %w", err)
	}
	defer f.Close()
	if strings.EqualFold(filepath.Ext(path), ".xml") {
		return extractJUnit(bufio.NewReaderSize(f, readBuffer), opt)
	}
	return Extract(f, opt)
}

func budgetOf(opt Options) int {
	if opt.Budget > 0 {
		return opt.Budget
	}
	return DefaultBudget
}
