package report

import (
	"strings"
	"testing"
)

func TestBodyNamesTestCommandIsolation(t *testing.T) {
	t.Parallel()
	b := sample()
	if body := Body(b, Options{}); strings.Contains(body, "isolation") {
		t.Fatalf("isolation line without a run:\n%s", body)
	}
	b.Isolation = "processes: cgroup v2 (cgroup.kill) + child subreaper; landlock ABI 7: writes limited to workspace, temp and tool caches"
	body := Body(b, Options{})
	line := "Test command isolation: " + b.Isolation + "\n"
	if strings.Count(body, line) != 1 {
		t.Fatalf("body lacks %q once:\n%s", line, body)
	}
	if strings.Index(body, line) < strings.Index(body, "| full test command |") {
		t.Errorf("isolation line not after the validation table")
	}
}
