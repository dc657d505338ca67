package actiontest

import (
	"regexp"
	"strings"
	"testing"
)

// scripts/test.sh is the whole suite (the README's test command and what
// CI runs): no go test in it may pass -short, which skips the slow
// end-to-end tests; the README names both commands.
func TestWholeSuiteRunsWithoutShort(t *testing.T) {
	t.Parallel()
	script := readRepoFile(t, "scripts/test.sh")
	goTests := 0
	for _, line := range strings.Split(script, "\n") {
		code, _, _ := strings.Cut(line, "#")
		if regexp.MustCompile(`(^|\s)-(test\.)?short\b`).MatchString(code) {
			t.Errorf("scripts/test.sh passes -short: %q", line)
		}
		if strings.Contains(code, "go test ") {
			goTests++
		}
	}
	if goTests == 0 {
		t.Error("scripts/test.sh runs no go test")
	}
	section := readmeSection(t, "Testing")
	for _, want := range []string{"go test -short ./...", "scripts/test.sh", "-update"} {
		if !strings.Contains(section, want) {
			t.Errorf("the README's Testing section does not show %q", want)
		}
	}
}

// TestReadmeDescribesCIAsItIs: what the README says CI runs is what
// .ci/run runs, and what ci.yml runs is .ci/run.
func TestReadmeDescribesCIAsItIs(t *testing.T) {
	t.Parallel()
	section := readmeSection(t, "Testing")
	run := readRepoFile(t, ".ci/run")
	for _, step := range []struct{ readme, script string }{
		{"`gofmt`", "gofmt -l"}, {"`go vet`", "go vet ./..."}, {"`staticcheck`", "staticcheck ./..."},
		{"the demo", "go run ./cmd/mini-agent demo"}, {"`scripts/test.sh`", "scripts/test.sh"},
	} {
		if !strings.Contains(section, step.readme) || !strings.Contains(run, step.script) {
			t.Errorf("README says %q: %v; .ci/run runs %q: %v", step.readme, strings.Contains(section, step.readme),
				step.script, strings.Contains(run, step.script))
		}
	}
	if !strings.Contains(section, "`.ci/run`") || !strings.Contains(readRepoFile(t, ".github/workflows/ci.yml"), "run: .ci/run") {
		t.Error("the README does not name .ci/run, or CI does not run it")
	}
}
