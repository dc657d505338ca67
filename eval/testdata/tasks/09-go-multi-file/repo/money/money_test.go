package money

import "testing"

func TestFormat(t *testing.T) {
	for cents, want := range map[int64]string{1205: "12.05 EUR", 100000: "1000.00 EUR", -250: "-2.50 EUR"} {
		if got := Format(cents, "EUR"); got != want {
			t.Errorf("Format(%d) = %q, want %q", cents, got, want)
		}
	}
}
