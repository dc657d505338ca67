package semver

import "testing"

func TestComparePatchHidden(t *testing.T) {
	if got, _ := Compare("0.0.10", "0.0.9"); got != 1 {
		t.Errorf("Compare(0.0.10, 0.0.9) = %d, want 1", got)
	}
}
