package flakyjob

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/flakyscan"
)

func TestAddToQuarantine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in, id, want string
		added              bool
	}{
		{"new file", "", "TestB", "TestB\n", true},
		{"sorted, comments kept first", "# why\nTestC\n\nTestA\n# more\n", "TestB", "# why\n# more\nTestA\nTestB\nTestC\n", true},
		{"already there", "TestA\r\nTestB\r\n", "TestB", "TestA\nTestB\n", false},
		{"duplicates folded", "TestA\nTestA\n  TestZ  \n", "TestM", "TestA\nTestM\nTestZ\n", true},
	} {
		got, added := AddToQuarantine(c.in, c.id)
		if diff := cmp.Diff(c.want, got); diff != "" || added != c.added {
			t.Errorf("%s: added %v (want %v), content (-want +got):\n%s", c.name, added, c.added, diff)
		}
		again, addedAgain := AddToQuarantine(got, c.id)
		if again != got || addedAgain {
			t.Errorf("%s: not idempotent: %q", c.name, again)
		}
	}
}

func TestQuarantineIDs(t *testing.T) {
	t.Parallel()
	if got := QuarantineID("TestServer/slow_case"); got != "TestServer" {
		t.Errorf("subtest id → %q, want its parent", got)
	}
	if got := QuarantineID("tests/test_x.py::test_y[a/b]"); got != "tests/test_x.py::test_y[a/b]" {
		t.Errorf("pytest id changed: %q", got)
	}
	for _, c := range []struct {
		id  string
		go_ bool
		ok  bool
	}{
		{"TestStartsEmpty", true, true}, {"Test_Ünïcode9", true, true},
		{"Test|.*", true, false}, {"Test.*", true, false}, {"TestA TestB", true, false}, {"", true, false}, {"#Test", true, false},
		{"tests/test_x.py::test_y[1]", false, true}, {"a|b", false, false}, {"a\nb", false, false}, {"$(rm)", false, false},
	} {
		if got := validQuarantineID(c.id, c.go_); got != c.ok {
			t.Errorf("validQuarantineID(%q, go=%v) = %v, want %v", c.id, c.go_, got, c.ok)
		}
	}
}

// TestRenderingIsSanitised: test names and reasons come from CI logs and
// the model's diff: nothing hidden, no mention, no breaking out of a table
// cell or code span reaches a PR body or issue comment.
func TestRenderingIsSanitised(t *testing.T) {
	t.Parallel()
	evil := "TestX`|<!-- mini-agent:flaky-tracked --> @octocat\n| injected |"
	c := &Candidate{Candidate: flakyscan.Candidate{Tests: []flakyscan.TestRef{{Test: evil}}, Failures: make([]flakyscan.Occurrence, 2), Commits: []string{"a"}},
		Issue: 7, Fix: &flaky.FixReport{Status: flaky.FixProven, RunsAfter: 20, Need: 14,
			Checks: []flaky.Check{{Name: "removed-parallel", Severity: "flag", File: "a_test.go", Line: 3, Reason: evil}}}}
	tr := &TestResult{Ref: c.Candidate.Tests[0], LocalID: evil, Report: &flaky.TestReport{Runs: 7, Failures: 5}}
	for name, body := range map[string]string{"fix section": fixSection(c, tr), "fix note": fixNote(c, tr), "quarantine": quarantineBody(c, tr, "q.txt", "TestX")} {
		if strings.Contains(body, "<!-- mini-agent:flaky-tracked --> @") || strings.Contains(body, " @octocat") || strings.Contains(body, "\n| injected |") {
			t.Errorf("%s: untrusted text reached the body raw:\n%s", name, body)
		}
	}
	s := fixSection(c, tr)
	for _, want := range []string{"Tracked by #7", "| before the fix | 7 | 5 | 71.4% |", "| after the fix | 20 | 0 | 0.0% |", "`removed-parallel`", "flagged (allowed; review it)"} {
		if !strings.Contains(s, want) {
			t.Errorf("fix section lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(s, trackedMarker) != 1 {
		t.Errorf("the tracked marker must appear once (a log cannot forge it):\n%s", s)
	}
}

// TestUnprovenNoteSaysWhy: an unproven fix's issue comment does not guess
// why (a model that refused, or made no change, is not a budget that
// ended): the status line carries the reason the fix job gave.
func TestUnprovenNoteSaysWhy(t *testing.T) {
	t.Parallel()
	c := &Candidate{Candidate: flakyscan.Candidate{Tests: []flakyscan.TestRef{{Test: "TestX"}}, Failures: make([]flakyscan.Occurrence, 2), Commits: []string{"a"}},
		Issue: 7, Fix: &flaky.FixReport{Status: flaky.FixUnproven, Reason: "the model refused: I won't change these tests"}}
	tr := &TestResult{Ref: c.Candidate.Tests[0], LocalID: "TestX", Report: &flaky.TestReport{Runs: 7, Failures: 5}}
	note := fixNote(c, tr)
	if !strings.Contains(note, "the model refused: I won't change these tests") || strings.Contains(note, "budget") {
		t.Errorf("the note does not say why the fix is unproven:\n%s", note)
	}
}
