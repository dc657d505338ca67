package format

import "testing"

// TestSetDefault changes the package default and leaves it changed: the
// order dependence.
func TestSetDefault(t *testing.T) {
	Default = "hex"
	if got := Format(255, ""); got != "0xff" {
		t.Errorf("Format(255) = %q with Default hex, want 0xff", got)
	}
}

// TestFormatDefault passes alone and fails once TestSetDefault ran before
// it in the same process.
func TestFormatDefault(t *testing.T) {
	if got := Format(42, ""); got != "42" {
		t.Errorf("Format(42) = %q, want 42", got)
	}
}

var executions int

// TestSecondTime fails alone: from its second execution in one process
// (-count=3, -cpu 1,2,4) on.
func TestSecondTime(t *testing.T) {
	executions++
	if executions > 1 {
		t.Errorf("execution %d in this process, want the first", executions)
	}
}

// TestPlain always passes.
func TestPlain(t *testing.T) {
	if got := Format(7, "text"); got != "7" {
		t.Errorf("Format(7, text) = %q, want 7", got)
	}
}
