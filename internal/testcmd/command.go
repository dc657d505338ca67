// Package testcmd owns what mini-agent knows about the maintainer's test
// command: it parses the configured line once (argv, simple commands
// joined by "&&", or shell syntax), recognises the runner (go test with or
// without go's -C flag, pytest, jest, vitest, npm test, cargo test), maps a
// narrowing (test names, packages) and an output form (plain,
// go test -json, verbose) onto argv, tells from the output whether the
// selected tests really passed, extracts test names from failure ids and
// guesses a command from the project files at and below a repository's
// root. For the harness's own runs it
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
	"path"
	"path/filepath"
	"slices"
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
	prefix int // argv[:prefix] names the runner, e.g. "go test", "python -m pytest", "go -C sub test"
	// dir is the directory go's -C flag runs go test in ("go -C DIR test",
	// "go test -C DIR"), cleaned, with slashes; "" without -C. Packages
	// the narrowing names in workspace paths are given relative to it.
	dir string
	// dirErr says why dir cannot take workspace paths (absolute, or
	// outside the workspace); nil when it can.
	dirErr error
	// parts are the commands of a suite ("A && B": see Parse), nil for one
	// command.
	parts []*Command
	// advice is said when the command cannot be narrowed and a form that
	// can exists (cd DIR && go test ...: go -C DIR test ...).
	advice string
}

// Parse splits the configured command line. Simple commands joined by
// "&&" are a suite, run one after another without a shell (see suite.go).
// Any other line with shell syntax (operators, redirects, expansions,
// globs, NAME=value prefixes, several lines, a shell builtin such as cd in
// an "&&" list) runs whole through `sh -c` and cannot be narrowed; a line
// that is empty, or that no shell could parse (an unterminated quote, a
// lone trailing backslash), is an error: a configuration problem to report
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
		if c, ok := parseSuite(line); ok {
			return c, nil
		}
		return &Command{line: line, argv: []string{"sh", "-c", line}, shell: true, advice: cdAdvice(line)}, nil
	}
	return simple(line, words), nil
}

// simple is the command of one argv.
func simple(line string, words []string) *Command {
	c := &Command{line: line, argv: words}
	c.runner, c.prefix, c.dir = detectRunner(words)
	if c.dir != "" {
		c.dir, c.dirErr = cleanDir(c.dir)
	}
	return c
}

// Line is the command as configured (trimmed).
func (c *Command) Line() string { return c.line }

// Runner is the recognised runner; Unknown for shell syntax.
func (c *Command) Runner() Runner { return c.runner }

// Shell reports that the command runs through `sh -c`.
func (c *Command) Shell() bool { return c.shell }

// Narrowable reports whether tests and packages can be mapped onto the
// command (for a suite: onto each of its commands, all of one runner).
func (c *Command) Narrowable() bool {
	for _, p := range c.parts {
		if !p.Narrowable() {
			return false
		}
	}
	return !c.shell && c.runner != Unknown
}

// Advice is how to write a command that cannot be narrowed so that it can
// ("cd DIR && go test ./..." as "go -C DIR test ./..."), or "".
func (c *Command) Advice() string { return c.advice }

// Dirs are the directories, relative to the workspace, that the command
// runs its runner in: "." for one without go's -C flag, DIR for "go -C
// DIR test", each part's for a suite, each once, in order. The harness
// prepares Go modules there (go mod download).
func (c *Command) Dirs() []string {
	if len(c.parts) == 0 {
		if c.dir == "" || c.dirErr != nil {
			return []string{"."}
		}
		return []string{c.dir}
	}
	var out []string
	for _, p := range c.parts {
		for _, d := range p.Dirs() {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// NarrowingHelp describes, for the run_test tool's description, what
// narrowing this command takes.
func (c *Command) NarrowingHelp() string {
	if len(c.parts) > 0 && c.Narrowable() {
		return c.parts[0].NarrowingHelp() + " The command runs several commands in turn (" +
			strings.Join(c.dirs(), ", ") + "): test names go to each, a package to the one whose directory holds it."
	}
	switch {
	case !c.Narrowable() && c.advice != "":
		return "This test command cannot be narrowed: call run_test with no arguments. (To the maintainer: " + c.advice + ".)"
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

// detectRunner recognises the runner of argv w: the runner, how many words
// name it, and for go test the directory of its -C flag ("go -C DIR test",
// "go test -C DIR"; go takes -C only as the first flag, so both forms keep
// it in the prefix and anything added goes after it).
func detectRunner(w []string) (Runner, int, string) {
	at := func(i int) string {
		if i < len(w) {
			return w[i]
		}
		return ""
	}
	base := program(w[0])
	if base == "go" {
		switch {
		case at(1) == "test":
			if dir, n, ok := goDirFlag(w[2:]); ok {
				return Go, 2 + n, dir
			}
			return Go, 2, ""
		default:
			if dir, n, ok := goDirFlag(w[1:]); ok && at(1+n) == "test" {
				return Go, 2 + n, dir
			}
		}
		return Unknown, 0, ""
	}
	r, n := detectOther(base, at)
	return r, n, ""
}

// goDirFlag reads go's -C flag at the start of w ("-C DIR", "-C=DIR",
// also with "--"): the directory and the words it takes.
func goDirFlag(w []string) (dir string, words int, ok bool) {
	if len(w) == 0 {
		return "", 0, false
	}
	switch a := w[0]; {
	case a == "-C" || a == "--C":
		if len(w) > 1 && w[1] != "" {
			return w[1], 2, true
		}
	case strings.HasPrefix(a, "-C=") || strings.HasPrefix(a, "--C="):
		if _, v, _ := strings.Cut(a, "="); v != "" {
			return v, 1, true
		}
	}
	return "", 0, false
}

// cleanDir checks the directory of go's -C flag for mapping workspace
// paths: relative, inside the workspace. The command is trusted and runs
// as configured whatever it is; only paths cannot be mapped into a
// directory that is not one of the workspace's.
func cleanDir(dir string) (string, error) {
	d := path.Clean(strings.ReplaceAll(dir, `\`, "/"))
	switch {
	case path.IsAbs(d) || filepath.IsAbs(dir):
		return d, fmt.Errorf("the test command's -C directory %s is absolute, not a directory of the workspace", quoteName(dir))
	case d == ".." || strings.HasPrefix(d, "../"):
		return d, fmt.Errorf("the test command's -C directory %s is outside the workspace", quoteName(dir))
	}
	return d, nil
}

func detectOther(base string, at func(int) string) (Runner, int) {
	switch {
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
