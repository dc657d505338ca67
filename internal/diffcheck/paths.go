package diffcheck

import (
	"fmt"
	"path"
	"strings"

	"github.com/org/mini-agent/internal/protect"
)

// DefaultProtected are the files a flaky-test fix may not edit beyond
// the protected-path set every run has (protect.Defaults): workflows,
// module files (a fix does not change dependencies) and CI configuration,
// where retries, skips and timeouts hide. Matched ignoring case.
var DefaultProtected = []string{
	".github/**",
	"go.mod", "**/go.mod", "go.sum", "**/go.sum", "go.work", "go.work.sum",
	".gitlab-ci.yml", ".travis.yml", ".circleci/**", ".buildkite/**",
	"azure-pipelines.yml", ".azure-pipelines/**", "Jenkinsfile", "bitbucket-pipelines.yml",
	".drone.yml", "appveyor.yml", ".ci/**",
}

func pathFindings(fc *fileChange, protected *protect.Set) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for _, p := range []string{fc.oldPath, fc.newPath} {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		if g, hit := protected.Match(p); hit {
			out = append(out, Finding{Check: ProtectedFile, Severity: Reject, File: p,
				Reason: fmt.Sprintf("%s is protected (%s): a flaky-test fix changes the test or the code under test, not workflows, module files or CI configuration", p, g)})
		}
	}
	if len(out) == 0 && !isTestPath(fc.path()) {
		out = append(out, Finding{Check: NonTestEdit, Severity: Flag, File: fc.path(), Line: fc.firstChanged(),
			Reason: "this edit is outside test files; it is allowed when the race or ordering bug is in the code under test, and the PR names it"})
	}
	return out
}

// isTestPath reports whether p is a test file or test data by the usual
// conventions of Go, pytest and jest/vitest/mocha.
func isTestPath(p string) bool {
	base := path.Base(p)
	for _, seg := range strings.Split(path.Dir(p), "/") {
		switch seg {
		case "testdata", "__tests__", "tests", "test", "spec":
			return true
		}
	}
	switch {
	case strings.HasSuffix(base, "_test.go"):
		return true
	case strings.HasSuffix(base, ".py"):
		return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py"
	case isJS(base):
		return strings.Contains(base, ".test.") || strings.Contains(base, ".spec.")
	}
	return false
}

func isJS(base string) bool {
	for _, ext := range []string{".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return false
}

func isPython(base string) bool { return strings.HasSuffix(base, ".py") }
