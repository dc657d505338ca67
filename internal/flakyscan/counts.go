package flakyscan

import (
	"bytes"
	"regexp"
	"strconv"
)

// maxCountLine bounds the part of a log line the counter looks at.
const maxCountLine = 4096

// testCounts are what a log says about how many tests (or packages) ran
// and failed, for the infrastructure rule.
type testCounts struct {
	// passed and failed count top-level `--- PASS:`/`--- FAIL:` lines (go
	// test -v), plus the totals of pytest and jest/vitest summary lines.
	passed, failed int
	// pkgOK and pkgFail count go test's per-package `ok` and `FAIL` lines.
	pkgOK, pkgFail int
}

var (
	// tsPrefix is the Actions timestamp every log line starts with.
	tsPrefix = regexp.MustCompile(`^\x{FEFF}?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z ?`)
	ansi     = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)
	// pytest: "==== 3 failed, 120 passed, 2 skipped in 4.2s ===="
	pytestSummary = regexp.MustCompile(`^=+ .*\b(?:passed|failed)\b.* in [0-9.]+s`)
	// jest / vitest: "Tests:       3 failed, 120 passed, 123 total" / "Tests  3 failed | 120 passed (123)"
	jsSummary = regexp.MustCompile(`^\s*Tests:?\s+\d+ (?:failed|passed)`)
	nFailed   = regexp.MustCompile(`(\d+) failed`)
	nPassed   = regexp.MustCompile(`(\d+) passed`)
)

// lineCounter is an io.Writer that counts tests in the log written to it,
// line by line, with bounded memory.
type lineCounter struct {
	c       testCounts
	partial []byte
	skip    bool // the current line exceeded maxCountLine; drop until '\n'
}

func (lc *lineCounter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !lc.skip {
			if len(lc.partial)+len(chunk) > maxCountLine {
				lc.skip = true
				lc.partial = lc.partial[:0]
			} else {
				lc.partial = append(lc.partial, chunk...)
			}
		}
		if i < 0 {
			break
		}
		if !lc.skip {
			lc.line(lc.partial)
		}
		lc.partial, lc.skip = lc.partial[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// flush counts a last line without a newline.
func (lc *lineCounter) flush() {
	if !lc.skip && len(lc.partial) > 0 {
		lc.line(lc.partial)
	}
	lc.partial = lc.partial[:0]
}

func (lc *lineCounter) line(raw []byte) {
	s := string(bytes.TrimRight(raw, "\r"))
	s = tsPrefix.ReplaceAllString(s, "")
	s = ansi.ReplaceAllString(s, "")
	switch {
	// Top-level tests only: subtests are indented.
	case len(s) > 10 && s[:10] == "--- PASS: ":
		lc.c.passed++
	case len(s) > 10 && s[:10] == "--- FAIL: ":
		lc.c.failed++
	case len(s) > 4 && s[:4] == "ok  " && (s[4] == '\t' || s[4] == ' '):
		lc.c.pkgOK++
	case len(s) > 5 && s[:5] == "FAIL\t":
		lc.c.pkgFail++
	case pytestSummary.MatchString(s), jsSummary.MatchString(s):
		lc.c.failed += firstInt(nFailed, s)
		lc.c.passed += firstInt(nPassed, s)
	}
}

func firstInt(re *regexp.Regexp, s string) int {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// The infrastructure rule. A failed job is taken for an infrastructure
// failure (a dead service, a full disk, a broken runner), not for failing
// tests, and ignored, when any of these holds:
//   - its log reports more than MaxFailingTests distinct failing tests;
//   - the log counts at least minCounted tests (go test -v result lines,
//     pytest or jest/vitest summaries) and more than half of them failed;
//   - the log has no per-test counts but at least minCountedPackages go
//     packages, and more than half of them failed.
const (
	minCounted         = 10
	minCountedPackages = 4
)

// infrastructure applies the rule to a job with distinct failing tests.
func infrastructure(distinct, maxFailing int, c testCounts) bool {
	if distinct > maxFailing {
		return true
	}
	if total := c.passed + c.failed; total >= minCounted {
		return 2*c.failed > total
	}
	if total := c.pkgOK + c.pkgFail; total >= minCountedPackages {
		return 2*c.pkgFail > total
	}
	return false
}
