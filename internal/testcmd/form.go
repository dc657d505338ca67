package testcmd

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
)

// Form is the output form a run is asked for.
type Form int

const (
	// Plain runs the command as configured (narrowed, if asked).
	Plain Form = iota
	// GoJSON adds -json to go test when that does not change what the
	// command means, so the output is the exact go test event stream.
	GoJSON
	// Verbose adds -v to go test (unless it has -v or -json already), so
	// the output names each test that passed.
	Verbose
)

func (f Form) String() string {
	switch f {
	case GoJSON:
		return "go test -json"
	case Verbose:
		return "verbose"
	}
	return "plain"
}

// Invocation is one run's argv, built by Argv, and what is needed to read
// that run's output.
type Invocation struct {
	// Argv is the command to run (["sh", "-c", line] for shell syntax).
	Argv []string
	// Notes say how the narrowing was interpreted, for the model.
	Notes []string
	// Form is the form the output really has: the one asked for when it
	// applies to this command, Plain otherwise.
	Form Form
	// Tests are the selected test names as validated.
	Tests []string

	runner Runner
	prefix int
	// parts are a suite's invocations, run in turn (see Steps); nil for
	// one command.
	parts []*Invocation
}

// Argv validates sel and maps it onto the command in the given output
// form. An invalid selection, or any selection on a command that cannot be
// narrowed, is an error wrapping ErrNarrowing whose message says what is
// allowed; nothing is built. A form that does not apply (not go test, shell
// syntax, or a flag whose meaning -json or -v would change) leaves the
// argv plain, and Invocation.Form says so. ws checks the selection's paths;
// it may be nil when sel is empty.
func (c *Command) Argv(ws Workspace, sel Selection, form Form) (*Invocation, error) {
	if len(c.parts) > 0 {
		return c.suiteArgv(ws, sel, form)
	}
	argv, notes, err := c.narrow(ws, sel)
	if err != nil {
		return nil, err
	}
	inv := &Invocation{Argv: argv, Notes: notes, runner: c.runner, prefix: c.prefix}
	if len(sel.Tests) > 0 {
		// Exactly what narrow accepted: the names, trimmed.
		for _, t := range sel.Tests {
			inv.Tests = append(inv.Tests, strings.TrimSpace(t))
		}
	}
	if c.runner != Go { // Unknown for shell syntax too
		return inv, nil
	}
	switch form {
	case GoJSON:
		if alt, ok := goTestJSON(argv, c.prefix); ok {
			inv.Argv, inv.Form = alt, GoJSON
		}
	case Verbose:
		if alt, ok := goTestVerbose(argv, c.prefix); ok {
			inv.Argv, inv.Form = alt, Verbose
		}
	}
	return inv, nil
}

// goTestJSON returns a go test argv with -json added when its meaning does
// not change by it: (a copy, true) when -json is there already, false when
// a flag conflicts (-c, -o, -n, -bench, -fuzz, -list, -benchmem, -v with a
// value such as test2json, -json=false), also when passed to the test
// binary after -args.
func goTestJSON(argv []string, prefix int) ([]string, bool) {
	has := false
	for _, a := range argv[prefix:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "json":
			if val == "" || val == "true" {
				has = true
				continue
			}
			return nil, false
		case "c", "o", "n", "bench", "test.bench", "fuzz", "test.fuzz", "list", "test.list", "benchmem", "test.benchmem":
			return nil, false
		case "v", "test.v":
			if val != "" && val != "true" {
				return nil, false
			}
		}
	}
	if has {
		return slices.Clone(argv), true
	}
	return slices.Concat(argv[:prefix], []string{"-json"}, argv[prefix:]), true
}

// goTestVerbose returns a go test argv whose output names each test that
// passed: -v added after "go test" (argv[:prefix]), or the argv as is when it has -v or
// -json already (before -args). -v=false and the like make it false.
func goTestVerbose(argv []string, prefix int) ([]string, bool) {
	for _, a := range argv[prefix:] {
		if a == "-args" || a == "--args" {
			break
		}
		name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "v" || name == "json" || name == "test.v") {
			if val == "" || val == "true" {
				return slices.Clone(argv), true
			}
			return nil, false
		}
	}
	return slices.Concat(argv[:prefix], []string{"-v"}, argv[prefix:]), true
}

// NotPassed answers "did the selected tests really pass?" from the run's
// full output: it returns the selected tests that no "--- PASS: NAME ("
// line reports. A narrowed go test whose names match nothing (renamed,
// deleted or skipped tests) still exits 0, so a zero exit alone proves
// nothing. It returns nil when the output cannot tell (not go test, or a
// plain form that does not name passing tests): the exit code decides. An
// unreadable output confirms nothing: every test is returned.
func (inv *Invocation) NotPassed(output io.Reader) []string {
	if inv.runner != Go || inv.Form == Plain || len(inv.Tests) == 0 {
		return nil
	}
	if output == nil {
		return slices.Clone(inv.Tests)
	}
	patterns := make([][]byte, len(inv.Tests))
	found := make([]bool, len(inv.Tests))
	longest := 0
	for i, t := range inv.Tests {
		patterns[i] = []byte("--- PASS: " + t + " (")
		longest = max(longest, len(patterns[i]))
	}
	// Stream the log through a window that keeps the last longest-1 bytes
	// of the previous chunk, so a line cut between chunks is still seen.
	buf := make([]byte, 0, 64<<10+longest)
	chunk := make([]byte, 64<<10)
	for {
		n, err := output.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for i, p := range patterns {
			if !found[i] && bytes.Contains(buf, p) {
				found[i] = true
			}
		}
		if keep := longest - 1; len(buf) > keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return slices.Clone(inv.Tests)
		}
	}
	var missing []string
	for i, t := range inv.Tests {
		if !found[i] {
			missing = append(missing, t)
		}
	}
	return missing
}

// Diagnose adds notes for results that look like success or failure but
// mean "the narrowing matched nothing". output is what was kept of the
// run's output (head and tail are enough).
func (inv *Invocation) Diagnose(exitCode int, output []byte) []string {
	switch {
	case inv.runner == Go && len(inv.Tests) > 0 && exitCode == 0 && bytes.Contains(output, []byte("no tests to run")):
		return []string{"some packages reported \"no tests to run\": check the test names if a test you expected did not run"}
	case inv.runner == Pytest && exitCode == 5:
		return []string{"pytest exit code 5 means no tests were collected: check the names and paths"}
	}
	return nil
}
