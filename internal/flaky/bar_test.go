package flaky

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestBarNeed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		runs, failures, want int
	}{
		{10, 3, 20},     // 2×10 = 20 > ⌈4.6/0.3⌉ = 16
		{20, 2, 46},     // ⌈4.6/0.1⌉ = 46 exactly (float 4.6/0.1 is 45.99…)
		{40, 1, 184},    // ⌈4.6·40⌉ = 184 > 80
		{7, 2, 17},      // ⌈4.6·3.5⌉ = ⌈16.1⌉ = 17 > 14
		{4, 3, 8},       // 2×4 wins at high rates
		{1000, 1, 4603}, // 0.1%: ⌈4.6/p⌉ = 4600 leaves 1.004%; the exact n is 4603
	}
	for _, tc := range tests {
		b, err := NewBar(tc.runs, tc.failures, 1<<20)
		if err != nil {
			t.Fatalf("NewBar(%d, %d): %v", tc.runs, tc.failures, err)
		}
		if b.Need != tc.want {
			t.Errorf("NewBar(%d, %d).Need = %d, want %d", tc.runs, tc.failures, b.Need, tc.want)
		}
	}
}

// TestBarResidualChance shows the bar's promise: had the fix changed
// nothing, a test failing at the pre-fix rate would pass all Need runs with
// probability below 1% — for every rate from 1/2000 up.
func TestBarResidualChance(t *testing.T) {
	t.Parallel()
	for runs := 2; runs <= 2000; runs += 7 {
		for _, failures := range []int{1, 2, 3, runs / 4, runs / 2, runs - 1} {
			if failures < 1 || failures >= runs {
				continue
			}
			b, err := NewBar(runs, failures, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			p := float64(failures) / float64(runs)
			if chance := math.Pow(1-p, float64(b.Need)); chance >= ResidualChance {
				t.Fatalf("%d/%d: (1-%.5f)^%d = %.5f, not below 1%%", failures, runs, p, b.Need, chance)
			}
			if b.Need < 2*runs {
				t.Fatalf("%d/%d: Need %d below twice the pre-fix runs", failures, runs, b.Need)
			}
		}
	}
}

func TestBarRefuses(t *testing.T) {
	t.Parallel()
	if _, err := NewBar(0, 0, 10); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no runs: err = %v", err)
	}
	for _, c := range [][3]int{{10, 0, 100}, {10, 10, 100}, {10, 2, 0}, {10, 11, 100}, {MaxRuns + 1, 1, 10}, {10, 2, MaxRuns + 1}} {
		if _, err := NewBar(c[0], c[1], c[2]); err == nil {
			t.Errorf("NewBar(%d, %d, budget %d) accepted", c[0], c[1], c[2])
		}
	}
}

func TestBarJudge(t *testing.T) {
	t.Parallel()
	b, err := NewBar(10, 3, 100) // Need 20
	if err != nil {
		t.Fatal(err)
	}
	run := func(b Bar, fails map[int]bool) (*Evidence, Result) {
		after := &Evidence{}
		for b.Continue(after) {
			after.Add(Outcome{Failed: fails[after.Runs+1], Message: "boom"})
		}
		return after, b.Judge(after)
	}
	if _, r := run(b, nil); r.Status != FixProven || r.Runs != 20 {
		t.Errorf("clean: %+v, want proven after 20", r)
	}
	if _, r := run(b, map[int]bool{7: true}); r.Status != FixFailedBar || r.Runs != 7 || !slices.Equal(r.FailedRuns, []int{7}) {
		t.Errorf("failure at run 7: %+v, want failed-bar stopping at 7", r)
	}
	small, err := NewBar(10, 3, 12)
	if err != nil {
		t.Fatal(err)
	}
	if small.Reachable() {
		t.Error("budget 12 < need 20 reported reachable")
	}
	if _, r := run(small, nil); r.Status != FixUnproven || r.Runs != 12 {
		t.Errorf("budget-capped: %+v, want unproven after 12", r)
	}
	// A caller that stops short without failures is unproven too.
	short := &Evidence{}
	short.Add(Outcome{})
	if r := b.Judge(short); r.Status != FixUnproven {
		t.Errorf("1 clean run: %v, want unproven", r.Status)
	}
	// Judging an evidence with failures beyond the limit still fails.
	late := &Evidence{}
	for i := 0; i < 25; i++ {
		late.Add(Outcome{Failed: i == 24})
	}
	if r := b.Judge(late); r.Status != FixFailedBar {
		t.Errorf("failure at run 25: %v, want failed-bar", r.Status)
	}
}
