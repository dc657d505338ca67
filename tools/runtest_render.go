package tools

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/org/mini-agent/internal/proc"
)

// Text renders the outcome as the model reads it: a key: value header
// (status, exit code, duration, timed-out flag, command, notes, failing
// tests), then the bounded output. At most about 32 KB.
func (o RunOutcome) Text() string {
	var b strings.Builder
	status := "PASSED"
	switch {
	case o.TimedOut:
		status = "TIMEOUT"
	case o.ExitCode != 0:
		status = "FAILED"
	}
	fmt.Fprintf(&b, "status: %s\n", status)
	if o.Signal != "" {
		fmt.Fprintf(&b, "exit_code: %d (killed by signal: %s)\n", o.ExitCode, o.Signal)
	} else {
		fmt.Fprintf(&b, "exit_code: %d\n", o.ExitCode)
	}
	fmt.Fprintf(&b, "duration: %s\n", o.Duration.Round(time.Millisecond))
	fmt.Fprintf(&b, "timed_out: %t\n", o.TimedOut)
	fmt.Fprintf(&b, "command: %s\n", truncate(displayCommand(o), maxCommandDisplay))
	if o.Protections != "" {
		fmt.Fprintf(&b, "isolation: %s\n", truncate(oneLine(o.Protections), 2*maxLineBytes))
	}
	for _, n := range o.Notes {
		fmt.Fprintf(&b, "note: %s\n", truncate(oneLine(n), maxLineBytes))
	}
	if len(o.Failing) > 0 {
		fmt.Fprintf(&b, "failing tests (%d):\n", len(o.Failing))
		start := b.Len()
		for i, f := range o.Failing {
			if i == maxFailingLines || b.Len()-start > maxFailingBytes {
				fmt.Fprintf(&b, "  ... %d more\n", len(o.Failing)-i)
				break
			}
			fmt.Fprintf(&b, "  %s\n", truncate(oneLine(f), maxLineBytes))
		}
	}
	fmt.Fprintf(&b, "output: %d lines, %d bytes; full log: read_file {\"path\":%q}\n", o.OutputLines, o.OutputBytes, o.LogRef)
	b.WriteString(o.Output)
	text := strings.ToValidUTF8(b.String(), "\uFFFD")
	if len(text) > maxAnswerBytes {
		const cut = "\n[answer cut at 32 KB]\n"
		text = truncate(text, maxAnswerBytes-len(cut)) + cut
	}
	return text
}

// renderOutput shows head, a marker naming the omitted lines and how to
// page them with read_file, and tail.
func renderOutput(c proc.Capture, logRef string) string {
	if !c.Truncated() {
		return string(c.Head) + string(c.Tail)
	}
	var b strings.Builder
	b.Grow(len(c.Head) + len(c.Tail) + 160)
	b.Write(c.Head)
	if len(c.Head) > 0 && c.Head[len(c.Head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "... %d lines omitted (%d bytes); read them with read_file {\"path\":%q,\"start_line\":%d} ...\n",
		c.OmittedLines, c.OmittedBytes, logRef, c.HeadLines()+1)
	b.Write(c.Tail)
	return b.String()
}

// truncate cuts s to at most n bytes at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Volatile parts of a run_test answer: its duration line, run numbers in
// log references, and test runners' timings ("(0.00s)", "0.012s", "277ms").
var (
	durationLine = regexp.MustCompile(`(?m)^duration: .*$`)
	runRef       = regexp.MustCompile(`@runs/\d+\.log`)
	timing       = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|µs|m\d+(\.\d+)?s)\b`)
)

// Fingerprint implements agent.Fingerprinter: two runs with the same
// outcome give the same fingerprint, whatever they took, so the loop sees
// a model re-running an unchanged failing test as repeating itself.
// Assertion values are kept: a changed "got 1200" is a changed outcome.
func (r *RunTest) Fingerprint(text string) string {
	text = durationLine.ReplaceAllString(text, "duration: -")
	text = runRef.ReplaceAllString(text, "@runs/N.log")
	return timing.ReplaceAllString(text, "T")
}

// displayArgv joins argv for humans and the model, quoting words a shell
// would split or interpret. It is for display only: argv is never re-parsed.
// displayCommand shows the command a run ran: its argv, or a suite's
// commands joined by " && ".
func displayCommand(o RunOutcome) string {
	if o.Invocation == nil {
		return displayArgv(o.Argv)
	}
	var parts []string
	for _, step := range o.Invocation.Steps() {
		parts = append(parts, displayArgv(step))
	}
	return strings.Join(parts, " && ")
}

func displayArgv(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
		}) < 0 {
			b.WriteString(a)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}
