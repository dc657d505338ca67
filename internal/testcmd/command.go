// Package testcmd owns what mini-agent knows about the maintainer's test
// command: it parses the configured line once (argv or shell syntax),
// recognises the runner (go test, pytest, jest, vitest, npm test, cargo
// test), maps a narrowing (test names, packages) and an output form (plain,
// go test -json, verbose) onto argv, tells from the output whether the
// selected tests really passed, extracts test names from failure ids and
// guesses a command from a project's files. For the harness's own runs it
// switches the runner's result caches off (Invocation.Uncached: go test
// -count=1, pytest -p no:cacheprovider), so a pass is a real run.
//
// It is a leaf engine: it runs nothing and imports nothing above it. The
// run_test tool and the job runner's validation both ask it.
//
// Leaf engine: imports nothing above it.
package testcmd

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Runner is a test runner whose narrowing and output testcmd understands.
type Runner int

// The runners testcmd recognises. Unknown is every other command, and every
// command written in shell syntax.
const (
	Unknown Runner = iota
	Go
	Pytest
	Jest // jest, npx jest
	Vitest
	Npm // npm test / npm run test: narrowing goes after "--" to the script
	Cargo
)

var runnerNames = map[Runner]string{
	Unknown: "unrecognized", Go: "go test", Pytest: "pytest", Jest: "jest",
	Vitest: "vitest", Npm: "npm test", Cargo: "cargo test",
}

func (r Runner) String() string { return runnerNames[r] }

// supportedRunners is quoted to the model when narrowing is refused.
const supportedRunners = "go test, pytest (or python -m pytest), jest, vitest, npm test and cargo test"

// Command is the maintainer's configured test command, parsed once. It is
// trusted: only what is mapped onto it (a narrowing) is validated.
type Command struct {
	line   string
	argv   []string // the words, or [sh -c line] when shell syntax is used
	shell  bool
	runner Runner
	prefix int // argv[:prefix] names the runner, e.g. "go test", "python -m pytest"
}

// Parse splits the configured command line. A line with shell syntax
// (operators, redirects, expansions, globs, NAME=value prefixes, several
// lines) runs whole through `sh -c` and cannot be narrowed; a line that is
// empty, or that no shell could parse (an unterminated quote, a lone
// trailing backslash), is an error: a configuration problem to report
// before anything runs.
func Parse(line string) (*Command, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil, errors.New("no test command is configured")
	}
	words, needShell, err := splitCommand(line)
	switch {
	case err != nil:
		return nil, fmt.Errorf("test command %q: %w", line, err)
	case needShell:
		return &Command{line: line, argv: []string{"sh", "-c", line}, shell: true}, nil
	}
	r, prefix := detectRunner(words)
	return &Command{line: line, argv: words, runner: r, prefix: prefix}, nil
}

// Line is the command as configured (trimmed).
func (c *Command) Line() string { return c.line }

// Runner is the recognised runner; Unknown for shell syntax.
func (c *Command) Runner() Runner { return c.runner }

// Shell reports that the command runs through `sh -c`.
func (c *Command) Shell() bool { return c.shell }

// Narrowable reports whether tests and packages can be mapped onto the command.
func (c *Command) Narrowable() bool { return !c.shell && c.runner != Unknown }

// NarrowingHelp describes, for the run_test tool's description, what
// narrowing this command takes.
func (c *Command) NarrowingHelp() string {
	switch {
	case !c.Narrowable():
		return "This test command cannot be narrowed: call run_test with no arguments."
	case c.runner == Go:
		return "tests: Go test names (TestFoo, TestFoo/subtest) or -run patterns; packages: directories or package patterns (./internal/x, ./pkg/...)."
	case c.runner == Pytest:
		return "tests: node ids (tests/test_x.py::test_y) or test names (combined into -k); packages: test files or directories."
	case c.runner == Cargo:
		return "tests: test name filters (module::test_name); packages: crate names (-p) or integration test files (tests/foo.rs)."
	}
	return "tests: test names or name patterns (-t); packages: test files or directories."
}

// program is the one rule for naming a program from an argv word: its base
// name, with either slash as separator and without ".exe", so "go",
// "/usr/local/go/bin/go", "go.exe" and `C:\Go\bin\go.exe` are all "go".
func program(word string) string {
	return strings.TrimSuffix(filepath.Base(strings.ReplaceAll(word, `\`, "/")), ".exe")
}

func detectRunner(w []string) (Runner, int) {
	at := func(i int) string {
		if i < len(w) {
			return w[i]
		}
		return ""
	}
	base := program(w[0])
	switch {
	case base == "go" && at(1) == "test":
		return Go, 2
	case base == "pytest" || base == "py.test":
		return Pytest, 1
	case strings.HasPrefix(base, "python") && at(1) == "-m" && at(2) == "pytest":
		return Pytest, 3
	case base == "jest":
		return Jest, 1
	case base == "vitest":
		return Vitest, 1
	case base == "npx" && at(1) == "jest":
		return Jest, 2
	case base == "npx" && at(1) == "vitest":
		return Vitest, 2
	case base == "npm" && (at(1) == "test" || at(1) == "t" || at(1) == "tst"):
		return Npm, 2
	case base == "npm" && at(1) == "run" && at(2) == "test":
		return Npm, 3
	case base == "cargo" && at(1) == "test":
		return Cargo, 2
	case base == "cargo" && strings.HasPrefix(at(1), "+") && at(2) == "test":
		return Cargo, 3
	}
	return Unknown, 0
}
