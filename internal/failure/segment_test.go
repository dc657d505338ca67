package failure

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestCleanLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3*readBuffer)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"bom and timestamp", "\uFEFF2024-05-01T12:34:56.1234567Z hello\n2024-05-01T12:34:56.1234567Z \n", []string{"hello", ""}},
		{"timestamp without fraction", "2024-05-01T12:34:56Z a\n", []string{"a"}},
		{"not a timestamp", "2024-05-01 12:34:56 a\n", []string{"2024-05-01 12:34:56 a"}},
		{"ansi csi and osc", "\x1b[1m\x1b[31mFAIL\x1b[39m\x1b[22m x\x1b]8;;http://x\x07link\x1b]8;;\x07\n", []string{"FAIL xlink"}},
		{"crlf and progress", "a\r\nstep 1\rstep 2\r\n", []string{"a", "step 2"}},
		{"invalid utf-8", "ab\xff\xfecd\n", []string{"ab\uFFFD\uFFFDcd"}},
		{"no final newline", "last", []string{"last"}},
		{"very long line is cut", long + "\nnext\n", []string{strings.Repeat("x", maxLine), "next"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lr := newLineReader(bufio.NewReaderSize(strings.NewReader(tc.in), readBuffer))
			var got []string
			for {
				b, err := lr.next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(b))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// actionsLog stamps lines like a job log.
func actionsLog(lines ...string) string {
	var b strings.Builder
	b.WriteString("\uFEFF")
	for _, l := range lines {
		b.WriteString("2024-05-01T12:34:56.1234567Z " + l + "\n")
	}
	return b.String()
}

func TestSegmentation(t *testing.T) {
	t.Parallel()
	goFail := []string{"--- FAIL: TestX (0.00s)", "    x_test.go:3: bad", "FAIL", "FAIL\tex.com/x\t0.01s"}
	tests := []struct {
		name            string
		log             string
		step, cmd       string
		exit            int
		ids             []string
		genericContains string
	}{
		{name: "failed step kept, passing step with failures ignored", log: actionsLog(append(append(
			[]string{"##[group]Run go test ./flaky/...", "\x1b[36;1mgo test ./flaky/...\x1b[0m", "shell: /usr/bin/bash -e {0}", "##[endgroup]",
				"--- FAIL: TestIgnored (0.00s)", "    i_test.go:1: retried later", "FAIL\tex.com/i\t0.01s",
				"##[group]Run make test", "\x1b[36;1mset -e\x1b[0m", "\x1b[36;1mmake test\x1b[0m", "shell: /usr/bin/bash -e {0}", "env:", "  A: b", "##[endgroup]"},
			goFail...), "##[error]Process completed with exit code 2.", "Post job cleanup.", "--- FAIL: TestPost (0.00s)")...),
			step: "Run make test", cmd: "set -e\nmake test", exit: 2, ids: []string{"TestX"}},
		{name: "cancelled job without exit code", log: actionsLog("##[group]Run ./deploy.sh", "./deploy.sh", "##[endgroup]",
			"uploading", "##[error]The operation was canceled."),
			step: "Run ./deploy.sh", cmd: "./deploy.sh", genericContains: "The operation was canceled."},
		{name: "raw output without framing", log: strings.Join(goFail, "\n"), ids: []string{"TestX"}},
		{name: "user group inside the step", log: actionsLog(append([]string{"##[group]Run go test", "go test", "##[endgroup]",
			"##[group]Test output", "##[warning]slow"}, append(goFail, "##[endgroup]", "##[error]Process completed with exit code 1.")...)...),
			step: "Run go test", cmd: "go test", exit: 1, ids: []string{"TestX"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fc := extractString(t, tc.log)
			if fc.Step != tc.step || fc.Command != tc.cmd || fc.ExitCode != tc.exit {
				t.Errorf("step %q cmd %q exit %d, want %q %q %d", fc.Step, fc.Command, fc.ExitCode, tc.step, tc.cmd, tc.exit)
			}
			if strings.Join(fc.IDs(), ",") != strings.Join(tc.ids, ",") {
				t.Errorf("ids %v, want %v", fc.IDs(), tc.ids)
			}
			if !strings.Contains(fc.Generic, tc.genericContains) {
				t.Errorf("generic %q lacks %q", fc.Generic, tc.genericContains)
			}
		})
	}
}

// TestBorrowedLinesAreCopied feeds many failures through a reader whose
// buffer is reused, so any retained view of a line would be overwritten.
func TestBorrowedLinesAreCopied(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; i < 200; i++ {
		b.WriteString("--- FAIL: TestN" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + " (0.00s)\n")
		b.WriteString("    n_test.go:" + "1" + ": message " + string(rune('a'+i%26)) + "\n")
		b.WriteString(strings.Repeat("noise ", 2000) + "\n")
	}
	b.WriteString("FAIL\tex.com/n\t0.1s\n")
	fc := extractString(t, b.String())
	for _, f := range fc.Failures {
		last := f.ID[len(f.ID)-1:]
		if !strings.HasPrefix(f.ID, "TestN") || f.Message != "message "+last || f.Package != "ex.com/n" {
			t.Fatalf("corrupted failure %+v", f)
		}
	}
	if len(fc.Failures) != 182 { // lcm(7, 26) distinct names among 200
		t.Errorf("%d distinct failures, want 182", len(fc.Failures))
	}
}

// stripTimestampRef is stripTimestamp without its fast path for the
// runner's seven fractional digits.
func stripTimestampRef(b []byte) []byte {
	const stamp = len("2024-05-01T12:34:56")
	if len(b) < stamp+1 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' ||
		!isDigit(b[0]) || !isDigit(b[3]) || !isDigit(b[18]) {
		return b
	}
	i := stamp
	if b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i >= len(b) || b[i] != 'Z' {
		return b
	}
	i++
	if i < len(b) && b[i] == ' ' {
		i++
	}
	return b[i:]
}

// TestStripTimestampFastPath: every cut of timestamps with each byte
// replaced in turn (digits, 'Z', '.', space, letters) is stripped as the
// plain loop strips it.
func TestStripTimestampFastPath(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"2024-05-01T12:34:56.1234567Z x", "2024-05-01T12:34:56.12345678Z x",
		"2024-05-01T12:34:56.123456Z x", "2024-05-01T12:34:56Z x", "2024-05-01T12:34:56.1234567Zx"} {
		for pos := 0; pos < len(base); pos++ {
			for _, c := range []byte{'0', '9', 'Z', '.', ' ', 'a', '/', ':'} {
				b := []byte(base)
				b[pos] = c
				for cut := 0; cut <= len(b); cut++ {
					in := b[:cut]
					if got, want := stripTimestamp(in), stripTimestampRef(in); string(got) != string(want) {
						t.Fatalf("stripTimestamp(%q) = %q, want %q", in, got, want)
					}
				}
			}
		}
	}
}
