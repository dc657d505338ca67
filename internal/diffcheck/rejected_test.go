package diffcheck

import (
	"slices"
	"testing"
)

// TestRejectedChecks names each rejecting check once, in order, and leaves
// flagged findings out.
func TestRejectedChecks(t *testing.T) {
	fs := []Finding{
		{Check: "removed-parallel", Severity: Flag},
		{Check: "new-skip", Severity: Reject},
		{Check: "new-sleep", Severity: Reject},
		{Check: "new-skip", Severity: Reject},
	}
	if got, want := RejectedChecks(fs), []string{"new-skip", "new-sleep"}; !slices.Equal(got, want) {
		t.Errorf("RejectedChecks = %q, want %q", got, want)
	}
	if got := RejectedChecks(fs[:1]); got == nil || len(got) != 0 {
		t.Errorf("RejectedChecks of a flag only = %#v, want an empty list", got)
	}
}
