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
