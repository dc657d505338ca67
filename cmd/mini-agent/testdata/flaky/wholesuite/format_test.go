package format

import "testing"

func TestFormatDefault(t *testing.T) {
	if got := Format(42, ""); got != "42" {
		t.Errorf("Format(42) = %q, want 42", got)
	}
}

func TestSetDefault(t *testing.T) {
	Default = "hex"
	if got := Format(255, ""); got != "0xff" {
		t.Errorf("Format(255) = %q with Default hex, want 0xff", got)
	}
}
