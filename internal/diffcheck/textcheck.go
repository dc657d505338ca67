package diffcheck

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// textRule is a pattern judged on the diff's lines of Python, JavaScript
// and configuration files: it fires when added lines match it more often
// than deleted lines do (so a moved line is not new).
type textRule struct {
	check  string
	applys func(base string) bool
	re     *regexp.Regexp
	reason string
}

func anyText(string) bool { return true }

var textRules = []textRule{
	{NewSleep, func(b string) bool { return isPython(b) || isJS(b) },
		regexp.MustCompile(`\b(time|asyncio)\.sleep\s*\(|(^|[^.\w])sleep\s*\(|(^|[^.\w])setTimeout\s*\(|\bwaitForTimeout\s*\(`),
		"a new sleep or setTimeout wait hides the race instead of synchronising; wait for the event itself (await the promise, an Event, a condition)"},
	{NewSkip, isPython,
		regexp.MustCompile(`@pytest\.mark\.(skip|skipif|xfail)\b|\bpytest\.(skip|importorskip)\s*\(|@unittest\.skip|\.skipTest\s*\(`),
		"a new skip or xfail stops the test from counting instead of fixing it"},
	{NewSkip, isJS,
		regexp.MustCompile(`\b(it|test|describe)\.(skip|todo)\b|\bx(it|test|describe)\s*\(|\.skipIf\s*\(`),
		"a new skip stops the test from running instead of fixing it"},
	{RetryLoop, func(b string) bool { return isPython(b) || isJS(b) },
		regexp.MustCompile(`(?i)^\s*(for|while)\b.*\b(retry|retries|attempts?|tries)\b|^\s*@(tenacity\.)?retry\b`),
		"a new loop re-runs the test body or an assertion until it passes; a retry hides the flake, fix its cause"},
	{PytestFlakyMarker, anyText,
		regexp.MustCompile(`@pytest\.mark\.flaky\b|@flaky\b|--reruns\b|\breruns\s*=|\breruns_delay\b|pytest-rerunfailures`),
		"a pytest flaky/reruns marker or option re-runs the failing test until it passes; fix the cause instead"},
	{JestRetry, anyText,
		regexp.MustCompile(`\bretryTimes\s*\(|\bthis\.retries\s*\(|\bretry\s*:\s*\d|"retry"\s*:\s*\d`),
		"a jest/vitest/mocha retry option re-runs the failing test until it passes; fix the cause instead"},
}

var (
	reCommentLine = regexp.MustCompile(`^\s*(#|//|\*|/\*)`)
	rePyTest      = regexp.MustCompile(`^\s*(?:async\s+)?def\s+(test\w*)\s*\(`)
	reJSTest      = regexp.MustCompile("^\\s*(?:it|test)(?:\\.\\w+)?\\s*\\(\\s*(['\"`])(.*?)['\"`]")
	rePyAssert    = regexp.MustCompile(`^\s*assert\b|\bself\.assert\w*\s*\(|\bpytest\.raises\s*\(`)
	reJSAssert    = regexp.MustCompile(`\bexpect\s*\(|\bassert(\.\w+)?\s*\(`)
)

func textFindings(fc *fileChange) []Finding {
	base := path.Base(fc.path())
	var out []Finding
	out = append(out, timeoutFindings(fc)...)
	if strings.HasSuffix(base, ".go") {
		return out // Go files are judged on their syntax trees
	}
	for _, r := range textRules {
		if !r.applys(base) {
			continue
		}
		addedN, firstLine := countMatches(fc.added, r.re)
		deletedN, _ := countMatches(fc.deleted, r.re)
		if addedN > deletedN {
			out = append(out, Finding{Check: r.check, Severity: Reject, File: fc.path(), Line: firstLine, Reason: r.reason})
		}
	}
	if isTestPath(fc.path()) && (isPython(base) || isJS(base)) {
		out = append(out, textTestFindings(fc, isPython(base))...)
	}
	return out
}

// countMatches counts non-comment lines matching re and the first such line.
func countMatches(lines map[int]string, re *regexp.Regexp) (n, first int) {
	for ln, text := range lines {
		if reCommentLine.MatchString(text) || !re.MatchString(text) {
			continue
		}
		n++
		if first == 0 || ln < first {
			first = ln
		}
	}
	return n, first
}

// textTestFindings finds deleted, renamed and weakened tests in Python or
// JavaScript by their declaration and assertion lines.
func textTestFindings(fc *fileChange, python bool) []Finding {
	nameRe, group, assertRe := reJSTest, 2, reJSAssert
	if python {
		nameRe, group, assertRe = rePyTest, 1, rePyAssert
	}
	names := func(lines map[int]string) ([]string, map[string]int) {
		at := map[string]int{}
		for ln, text := range lines {
			if m := nameRe.FindStringSubmatch(text); m != nil {
				if old, ok := at[m[group]]; !ok || ln < old {
					at[m[group]] = ln
				}
			}
		}
		list := make([]string, 0, len(at))
		for n := range at {
			list = append(list, n)
		}
		slices.SortFunc(list, func(x, y string) int { return at[x] - at[y] })
		return list, at
	}
	delNames, delAt := names(fc.deleted)
	addNames, addAt := names(fc.added)
	var gone, added []string
	for _, n := range delNames {
		if _, ok := addAt[n]; !ok {
			gone = append(gone, n)
		}
	}
	for _, n := range addNames {
		if _, ok := delAt[n]; !ok {
			added = append(added, n)
		}
	}
	var out []Finding
	for i, n := range gone {
		if i < len(added) {
			out = append(out, Finding{Check: RenamedTest, Severity: Reject, File: fc.path(), Line: addAt[added[i]],
				Reason: "test " + n + " was renamed to " + added[i] + "; a renamed test loses its history, keep the name"})
			continue
		}
		out = append(out, Finding{Check: DeletedTest, Severity: Reject, File: fc.path(), Line: delAt[n],
			Reason: "test " + n + " was deleted (line in the old file); deleting a flaky test is not a fix"})
	}
	addedN, first := countMatches(fc.added, assertRe)
	deletedN, firstDel := countMatches(fc.deleted, assertRe)
	if deletedN > addedN {
		if first == 0 {
			first = firstDel
		}
		out = append(out, Finding{Check: FewerAssertions, Severity: Reject, File: fc.path(), Line: first,
			Reason: "the change removes more assertions than it adds; a weaker test is not a fixed one, keep every check"})
	}
	return out
}
