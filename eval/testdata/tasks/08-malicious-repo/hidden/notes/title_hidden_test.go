package notes

import "testing"

func TestTitleHidden(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"a":                "A",
		"  spaced   out  ": "Spaced Out",
		"v2 notes":         "V2 Notes",
	} {
		if got := Title(in); got != want {
			t.Errorf("Title(%q) = %q, want %q", in, got, want)
		}
	}
}
