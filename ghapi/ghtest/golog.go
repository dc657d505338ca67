package ghtest

import (
	"fmt"
	"strings"
	"time"
)

// GoTest is one top-level test in a GoTestLog.
type GoTest struct {
	Name string
	// Fail makes the test fail with Message reported at File:Line.
	Fail    bool
	File    string // default "<pkg base>_test.go"
	Line    int    // default 42
	Message string
}

// GoPackage is one package's result in a GoTestLog.
type GoPackage struct {
	Path  string
	Tests []GoTest
}

// GoTestLog renders the log of a GitHub Actions job whose test step ran
// `go test -v ./...` over pkgs: the runner's preamble, the checkout step,
// then the test output (=== RUN, the t.Errorf line, --- FAIL/--- PASS,
// the package's FAIL/ok line) and, when a test failed, the step's error,
// every line carrying the Actions timestamp prefix from start on.
func GoTestLog(start time.Time, pkgs ...GoPackage) string {
	var b strings.Builder
	t := start.UTC()
	line := func(format string, args ...any) {
		t = t.Add(137 * time.Millisecond)
		fmt.Fprintf(&b, "%s %s\n", t.Format("2006-01-02T15:04:05.0000000Z"), fmt.Sprintf(format, args...))
	}
	b.WriteString("\ufeff")
	line("Current runner version: '2.321.0'")
	line("##[group]Operating System")
	line("Ubuntu")
	line("24.04.1")
	line("##[endgroup]")
	line("Complete job name: test")
	line("##[group]Run actions/checkout@v4")
	line("with:")
	line("  fetch-depth: 1")
	line("##[endgroup]")
	line("[command]/usr/bin/git checkout --progress --force refs/remotes/origin/main")
	line("##[group]Run go test -v ./...")
	line("\x1b[36;1mgo test -v ./...\x1b[0m")
	line("shell: /usr/bin/bash -e {0}")
	line("##[endgroup]")
	failed := false
	for _, p := range pkgs {
		base := p.Path[strings.LastIndex(p.Path, "/")+1:]
		pkgFailed := false
		for i, tc := range p.Tests {
			line("=== RUN   %s", tc.Name)
			dur := float64(i%7+1) / 100
			if !tc.Fail {
				line("--- PASS: %s (%.2fs)", tc.Name, dur)
				continue
			}
			pkgFailed = true
			file, ln := tc.File, tc.Line
			if file == "" {
				file = base + "_test.go"
			}
			if ln == 0 {
				ln = 42
			}
			for k, m := range strings.Split(tc.Message, "\n") {
				if k == 0 {
					line("    %s:%d: %s", file, ln, m)
				} else {
					line("        %s", m)
				}
			}
			line("--- FAIL: %s (%.2fs)", tc.Name, dur)
		}
		if pkgFailed {
			failed = true
			line("FAIL")
			line("FAIL\t%s\t%.3fs", p.Path, 0.1+float64(len(p.Tests))/100)
		} else {
			line("PASS")
			line("ok  \t%s\t%.3fs", p.Path, 0.05+float64(len(p.Tests))/100)
		}
	}
	if failed {
		line("FAIL")
		line("##[error]Process completed with exit code 1.")
	}
	line("Post job cleanup.")
	return b.String()
}

// LintLog renders the log of a job whose lint step failed before any test
// ran: a failure outside the test step.
func LintLog(start time.Time) string {
	var b strings.Builder
	t := start.UTC()
	for _, l := range []string{
		"Current runner version: '2.321.0'",
		"##[group]Run golangci/golangci-lint-action@v6",
		"with:",
		"  version: v1.62",
		"##[endgroup]",
		"Running [/home/runner/golangci-lint-1.62.0-linux-amd64/golangci-lint run] in [/home/runner/work/app/app] ...",
		"  Error: store/cache.go:88:2: ineffectual assignment to err (ineffassign)",
		"  Error: issues found",
		"##[error]Process completed with exit code 1.",
		"Post job cleanup.",
	} {
		t = t.Add(211 * time.Millisecond)
		fmt.Fprintf(&b, "%s %s\n", t.Format("2006-01-02T15:04:05.0000000Z"), l)
	}
	return b.String()
}
