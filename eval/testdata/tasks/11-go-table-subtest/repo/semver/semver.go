// Package semver compares semantic version strings (MAJOR.MINOR.PATCH).
package semver

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse splits "v1.2.3" or "1.2.3" into its three numbers.
func Parse(v string) ([3]int, error) {
	var out [3]int
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) != 3 {
		return out, fmt.Errorf("semver: %q: want MAJOR.MINOR.PATCH", v)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, fmt.Errorf("semver: %q: bad number %q", v, p)
		}
		out[i] = n
	}
	return out, nil
}

// Compare returns -1, 0 or 1 as a is older than, equal to or newer than b.
func Compare(a, b string) (int, error) {
	x, err := Parse(a)
	if err != nil {
		return 0, err
	}
	y, err := Parse(b)
	if err != nil {
		return 0, err
	}
	for i := 0; i < 2; i++ {
		switch {
		case x[i] < y[i]:
			return -1, nil
		case x[i] > y[i]:
			return 1, nil
		}
	}
	return 0, nil
}
