package flakyscan

import (
	"strings"
	"testing"
)

func count(log string, chunk int) testCounts {
	lc := &lineCounter{}
	for len(log) > 0 { // written in pieces, as io.Copy would
		n := min(chunk, len(log))
		_, _ = lc.Write([]byte(log[:n]))
		log = log[n:]
	}
	lc.flush()
	return lc.c
}

func TestLineCounter(t *testing.T) {
	t.Parallel()
	log := strings.Join([]string{
		"2026-03-01T09:00:00.1000000Z --- PASS: TestA (0.00s)",
		"2026-03-01T09:00:00.2000000Z     --- PASS: TestA/sub (0.00s)", // subtests are not counted
		"2026-03-01T09:00:00.3000000Z --- FAIL: TestB (0.01s)",
		"2026-03-01T09:00:00.4000000Z \x1b[31m--- FAIL: TestC (0.01s)\x1b[0m",
		"2026-03-01T09:00:00.5000000Z FAIL\texample.com/p\t0.2s",
		"2026-03-01T09:00:00.6000000Z ok  \texample.com/q\t0.1s",
		"2026-03-01T09:00:00.7000000Z ===== 3 failed, 120 passed, 2 skipped in 4.20s =====",
		"Tests:       2 failed, 30 passed, 32 total",
		" Tests  1 failed | 9 passed (10)",
		"--- PASS: " + strings.Repeat("x", maxCountLine), // over-long: ignored
		"--- FAIL: TestLast (0.00s)",                     // no final newline
	}, "\n")
	want := testCounts{passed: 1 + 120 + 30 + 9, failed: 2 + 3 + 2 + 1 + 1, pkgOK: 1, pkgFail: 1}
	for _, chunk := range []int{1, 7, 4096, len(log)} {
		if got := count(log, chunk); got != want {
			t.Errorf("chunk %d: counts = %+v, want %+v", chunk, got, want)
		}
	}
}

func TestInfrastructure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		distinct int
		c        testCounts
		want     bool
	}{
		{"a few failures among many", 2, testCounts{passed: 98, failed: 2}, false},
		{"more failing tests than the cap", 26, testCounts{passed: 1000, failed: 26}, true},
		{"most counted tests failed", 13, testCounts{passed: 12, failed: 13}, true},
		{"exactly half is not most", 12, testCounts{passed: 12, failed: 12}, false},
		{"too few counted to judge", 3, testCounts{passed: 1, failed: 3}, false},
		{"most packages failed (no -v)", 3, testCounts{pkgOK: 1, pkgFail: 3}, true},
		{"one package of many failed", 1, testCounts{pkgOK: 9, pkgFail: 1}, false},
	}
	for _, tc := range tests {
		if got := infrastructure(tc.distinct, DefaultMaxFailingTests, tc.c); got != tc.want {
			t.Errorf("%s: infrastructure = %v, want %v", tc.name, got, tc.want)
		}
	}
}
