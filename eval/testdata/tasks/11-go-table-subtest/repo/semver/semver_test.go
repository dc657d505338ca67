package semver

import "testing"

func TestCompare(t *testing.T) {
	cases := []struct {
		name string
		a, b string
		want int
	}{
		{"equal", "1.2.3", "v1.2.3", 0},
		{"major", "2.0.0", "1.9.9", 1},
		{"minor", "1.2.0", "1.10.0", -1},
		{"patch", "1.2.3", "1.2.4", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Compare(c.a, c.b)
			if err != nil || got != c.want {
				t.Errorf("Compare(%q, %q) = %d, %v; want %d", c.a, c.b, got, err, c.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, v := range []string{"1.2", "1.x.3", "1.2.-3"} {
		if _, err := Parse(v); err == nil {
			t.Errorf("Parse(%q) succeeded", v)
		}
	}
}
