package diffcheck

import (
	"regexp"
	"strconv"
	"strings"
)

// A number with an optional duration unit ("100ms", "5 * time.Second"), or
// a bare Go duration constant (time.Second).
var (
	reQuantity = regexp.MustCompile(`(\d+(?:\.\d+)?)(?:\s*\*\s*time\.(Nanosecond|Microsecond|Millisecond|Second|Minute|Hour)\b|(ns|us|µs|ms|s|m|h)\b)?|\btime\.(Nanosecond|Microsecond|Millisecond|Second|Minute|Hour)\b`)
	// Words that make a number on the line a wait: without one, a larger
	// number is a buffer size or a count, not a timeout.
	reTimeContext = regexp.MustCompile(`(?i)timeout|deadline|sleep|wait|delay|eventually|time\.(Nanosecond|Microsecond|Millisecond|Second|Minute|Hour)`)
)

var unitNanos = map[string]float64{
	"Nanosecond": 1, "ns": 1,
	"Microsecond": 1e3, "us": 1e3, "µs": 1e3,
	"Millisecond": 1e6, "ms": 1e6,
	"Second": 1e9, "s": 1e9,
	"Minute": 60e9, "m": 60e9,
	"Hour": 3600e9, "h": 3600e9,
}

type quantity struct {
	value   float64
	hasUnit bool
}

// quantities returns the line with every quantity replaced by "#" and the
// quantities in order.
func quantities(line string) (string, []quantity) {
	var qs []quantity
	skel := reQuantity.ReplaceAllStringFunc(line, func(m string) string {
		sub := reQuantity.FindStringSubmatch(m)
		var q quantity
		if sub[4] != "" { // bare time.Second
			q.value, q.hasUnit = unitNanos[sub[4]], true
		} else {
			v, err := strconv.ParseFloat(sub[1], 64)
			if err != nil {
				return m
			}
			q.value = v
			if u := sub[2] + sub[3]; u != "" {
				q.value, q.hasUnit = v*unitNanos[u], true
			}
		}
		qs = append(qs, q)
		return "#"
	})
	return strings.Join(strings.Fields(skel), " "), qs
}

// raisesOnlyTimeout reports a changed line that differs from the old one
// only in quantities, every changed one larger, on a line about waiting.
func raisesOnlyTimeout(old, new string) bool {
	if !reTimeContext.MatchString(new) && !hasUnit(new) {
		return false
	}
	oldSkel, oq := quantities(old)
	newSkel, nq := quantities(new)
	if oldSkel != newSkel || len(oq) != len(nq) {
		return false
	}
	larger := false
	for i := range oq {
		if oq[i].hasUnit != nq[i].hasUnit {
			return false
		}
		switch {
		case nq[i].value > oq[i].value:
			larger = true
		case nq[i].value < oq[i].value:
			return false
		}
	}
	return larger
}

func hasUnit(line string) bool {
	_, qs := quantities(line)
	for _, q := range qs {
		if q.hasUnit {
			return true
		}
	}
	return false
}

func timeoutFindings(fc *fileChange) []Finding {
	var out []Finding
	for _, p := range fc.pairs {
		if raisesOnlyTimeout(p.old, p.new) {
			out = append(out, Finding{Check: TimeoutOnly, Severity: Reject, File: fc.path(), Line: p.newLine,
				Reason: "this line only raises a timeout, deadline or wait; a longer wait makes the flake rarer, not gone — remove the race it waits out"})
		}
	}
	return out
}
