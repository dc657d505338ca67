package invoice

import "testing"

func TestSummary(t *testing.T) {
	lines := []Line{{"widget", 2, 500}, {"gadget", 1, 205}}
	if got := Summary(lines, "EUR"); got != "Total: 12.05 EUR" {
		t.Errorf("Summary = %q, want %q", got, "Total: 12.05 EUR")
	}
}

func TestLineValid(t *testing.T) {
	if (Line{"widget", 0, 500}).Valid() || !(Line{"widget", 1, 0}).Valid() {
		t.Error("Valid: zero quantity must be invalid, a free item valid")
	}
}
