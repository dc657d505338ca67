package flaky

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		outcomes []bool // true = failed
		want     Verdict
	}{
		{"never failed", []bool{false, false, false}, VerdictPassing},
		{"always failed", []bool{true, true}, VerdictFailing},
		{"both", []bool{false, true, false}, VerdictFlaky},
		{"one failure one pass", []bool{true, false}, VerdictFlaky},
		{"single pass", []bool{false}, VerdictPassing},
		{"single failure", []bool{true}, VerdictFailing},
	}
	for _, tc := range tests {
		e := &Evidence{ID: "T"}
		for _, f := range tc.outcomes {
			e.Add(Outcome{Failed: f, Message: "boom"})
		}
		got, err := e.Verdict()
		if err != nil || got != tc.want {
			t.Errorf("%s: Verdict() = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := (&Evidence{}).Verdict(); !errors.Is(err, ErrNoRuns) {
		t.Errorf("Verdict of no runs: err = %v, want ErrNoRuns", err)
	}
}

func TestEarlyStop(t *testing.T) {
	t.Parallel()
	e := &Evidence{}
	for i := 0; i < 20 && !e.Enough(); i++ {
		e.Add(Outcome{Failed: i%2 == 1})
	}
	if e.Failures != EarlyStopFailures || e.Runs != 10 {
		t.Errorf("stopped at %d failures in %d runs, want 5 in 10", e.Failures, e.Runs)
	}
	if want := []int{2, 4, 6, 8, 10}; !slices.Equal(e.FailedRuns, want) {
		t.Errorf("FailedRuns = %v, want %v", e.FailedRuns, want)
	}

	// Only failures: five is not enough to call it failing, ten is.
	f := &Evidence{}
	for i := 0; i < 40 && !f.Enough(); i++ {
		f.Add(Outcome{Failed: true})
	}
	if v, _ := f.Verdict(); f.Runs != FailingStopFailures || v != VerdictFailing {
		t.Errorf("always failing: stopped after %d runs as %s, want %d runs, failing", f.Runs, v, FailingStopFailures)
	}
	// Five failures, then a pass: flaky, and enough.
	g := &Evidence{}
	for i := 0; i < 40 && !g.Enough(); i++ {
		g.Add(Outcome{Failed: i != 5})
	}
	if v, _ := g.Verdict(); g.Runs != 6 || v != VerdictFlaky {
		t.Errorf("five failures then a pass: stopped after %d runs as %s, want 6, flaky", g.Runs, v)
	}
}

func TestNormalizeMessage(t *testing.T) {
	t.Parallel()
	same := [][2]string{
		{"took 1.2s", "took 1.3s"},
		{"timed out after 350ms", "timed out after 2m1.5s"},
		{"got 3, want 4", "got 17, want 4"},
		{"nil map at 0xc000012345 in goroutine 7", "nil map at 0xc0000ab000 in goroutine 31"},
		{"x_test.go:12: boom", "x_test.go:14:   boom"},
		{"waited 40µs", "waited 12ns"},
	}
	for _, p := range same {
		if a, b := NormalizeMessage(p[0]), NormalizeMessage(p[1]); a != b {
			t.Errorf("%q → %q and %q → %q should be one message", p[0], a, p[1], b)
		}
	}
	differ := [][2]string{
		{"got 3, want 4", "got 3, expected 4"},
		{"took 1.2s", "took 1.2 seconds"},
		{"order: [a b]", "order: [b a]"},
	}
	for _, p := range differ {
		if a, b := NormalizeMessage(p[0]), NormalizeMessage(p[1]); a == b {
			t.Errorf("%q and %q both → %q; they are different failures", p[0], p[1], a)
		}
	}
	if got := NormalizeMessage("took 1.2s at 0xAB, count 12"); got != "took <dur> at <addr>, count N" {
		t.Errorf("NormalizeMessage = %q", got)
	}
}

func TestEvidenceDeduplicates(t *testing.T) {
	t.Parallel()
	e := &Evidence{ID: "TestX"}
	e.Add(Outcome{Failed: true, Message: "took 1.2s", Seed: "11", Flags: "-shuffle=on"})
	e.Add(Outcome{Failed: true, Message: "took 1.3s", Seed: "12", Flags: "-shuffle=on"})
	e.Add(Outcome{Failed: false, Seed: "13", Race: "WARNING: DATA RACE at 0x01"})
	e.Add(Outcome{Failed: true, Message: "other failure", Seed: "11", Race: "WARNING: DATA RACE at 0x02"})
	if want := []string{"took 1.2s", "other failure"}; !slices.Equal(e.Messages, want) {
		t.Errorf("Messages = %q, want %q", e.Messages, want)
	}
	if want := []string{"11", "12"}; !slices.Equal(e.Seeds, want) {
		t.Errorf("Seeds = %q, want only failing runs' seeds %q", e.Seeds, want)
	}
	if want := []string{"WARNING: DATA RACE at 0x01"}; !slices.Equal(e.Races, want) {
		t.Errorf("Races = %q, want %q", e.Races, want)
	}
	if want := []string{"-shuffle=on"}; !slices.Equal(e.Flags, want) {
		t.Errorf("Flags = %q, want %q", e.Flags, want)
	}
}

func TestEvidenceBounded(t *testing.T) {
	t.Parallel()
	e := &Evidence{}
	for i := 0; i < 100; i++ {
		e.Add(Outcome{Failed: true, Message: strings.Repeat("x", i+1) + strings.Repeat("é", MaxMessageLen), Seed: strings.Repeat("s", i+1)})
	}
	if len(e.Messages) != MaxMessages || len(e.Seeds) != MaxSeeds {
		t.Fatalf("kept %d messages and %d seeds, want %d and %d", len(e.Messages), len(e.Seeds), MaxMessages, MaxSeeds)
	}
	for _, m := range e.Messages {
		if len(m) > MaxMessageLen+len("…") || !strings.HasSuffix(m, "…") {
			t.Fatalf("message of %d bytes not truncated to %d", len(m), MaxMessageLen)
		}
		if !utf8Valid(m) {
			t.Fatalf("truncation split a UTF-8 sequence")
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
