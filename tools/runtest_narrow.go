package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode"
)

// Bounds on the model's narrowing.
const (
	maxNarrowItems   = 32
	maxNarrowItemLen = 200
)

// ErrNarrowing is wrapped by RunCommand when tests or packages are invalid or
// the configured command cannot be narrowed. Its message tells the model
// what is allowed; the run_test tool answers it with INVALID_ARGUMENT.
var ErrNarrowing = errors.New("invalid narrowing")

// forbiddenNameChars are refused in test names even though argv never meets
// a shell: they have no business in a test name or pattern, and refusing
// them keeps the rule simple to state and to audit.
const forbiddenNameChars = ";&|<>$`\\\"'!(){}"

// runner is a test runner whose narrowing run_test knows how to map.
type runner int

const (
	runnerNone runner = iota
	runnerGo
	runnerPytest
	runnerJest // jest, npx jest
	runnerVitest
	runnerNpm // npm test / npm run test: narrowing goes after "--" to the script
	runnerCargo
)

var runnerNames = map[runner]string{
	runnerNone: "unrecognized", runnerGo: "go test", runnerPytest: "pytest", runnerJest: "jest",
	runnerVitest: "vitest", runnerNpm: "npm test", runnerCargo: "cargo test",
}

func (r runner) String() string { return runnerNames[r] }

// supportedRunners is quoted to the model when narrowing is refused.
const supportedRunners = "go test, pytest (or python -m pytest), jest, vitest, npm test and cargo test"

// testCommand is the maintainer's configured command, parsed once.
type testCommand struct {
	line   string
	argv   []string // the words, or [sh -c line] when shell syntax is used
	shell  bool
	runner runner
	prefix int // argv[:prefix] names the runner, e.g. "go test", "python -m pytest"
}

// parseTestCommand splits the configured command. Shell syntax (and a line
// that does not split cleanly) runs through `sh -c`, unnarrowable.
func parseTestCommand(line string) (testCommand, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return testCommand{}, errors.New("no test command is configured")
	}
	words, needShell, err := splitCommand(line)
	if needShell || err != nil {
		return testCommand{line: line, argv: []string{"sh", "-c", line}, shell: true}, nil
	}
	r, prefix := detectRunner(words)
	return testCommand{line: line, argv: words, runner: r, prefix: prefix}, nil
}

func detectRunner(w []string) (runner, int) {
	at := func(i int) string {
		if i < len(w) {
			return w[i]
		}
		return ""
	}
	base := strings.TrimSuffix(filepath.Base(strings.ReplaceAll(w[0], `\`, "/")), ".exe")
	switch {
	case base == "go" && at(1) == "test":
		return runnerGo, 2
	case base == "pytest" || base == "py.test":
		return runnerPytest, 1
	case strings.HasPrefix(base, "python") && at(1) == "-m" && at(2) == "pytest":
		return runnerPytest, 3
	case base == "jest":
		return runnerJest, 1
	case base == "vitest":
		return runnerVitest, 1
	case base == "npx" && at(1) == "jest":
		return runnerJest, 2
	case base == "npx" && at(1) == "vitest":
		return runnerVitest, 2
	case base == "npm" && (at(1) == "test" || at(1) == "t" || at(1) == "tst"):
		return runnerNpm, 2
	case base == "npm" && at(1) == "run" && at(2) == "test":
		return runnerNpm, 3
	case base == "cargo" && at(1) == "test":
		return runnerCargo, 2
	case base == "cargo" && strings.HasPrefix(at(1), "+") && at(2) == "test":
		return runnerCargo, 3
	}
	return runnerNone, 0
}

// narrowable reports whether tests and packages can be mapped onto the command.
func (c testCommand) narrowable() bool { return !c.shell && c.runner != runnerNone }

// narrowingHelp describes, for the tool spec, what narrowing this command takes.
func (c testCommand) narrowingHelp() string {
	switch {
	case !c.narrowable():
		return "This test command cannot be narrowed: call run_test with no arguments."
	case c.runner == runnerGo:
		return "tests: Go test names (TestFoo, TestFoo/subtest) or -run patterns; packages: directories or package patterns (./internal/x, ./pkg/...)."
	case c.runner == runnerPytest:
		return "tests: node ids (tests/test_x.py::test_y) or test names (combined into -k); packages: test files or directories."
	case c.runner == runnerCargo:
		return "tests: test name filters (module::test_name); packages: crate names (-p) or integration test files (tests/foo.rs)."
	}
	return "tests: test names or name patterns (-t); packages: test files or directories."
}

// buildArgv validates the narrowing and maps it onto the command. notes are
// remarks for the model (how the narrowing was interpreted).
func (c testCommand) buildArgv(ws *Workspace, tests, packages []string) (argv, notes []string, err error) {
	if len(tests) == 0 && len(packages) == 0 {
		return append([]string(nil), c.argv...), nil, nil
	}
	if c.shell {
		return nil, nil, fmt.Errorf("%w: the test command %q uses shell syntax, so it cannot be narrowed; call run_test with no arguments to run it in full", ErrNarrowing, c.line)
	}
	if c.runner == runnerNone {
		return nil, nil, fmt.Errorf("%w: narrowing is supported for %s; the test command %q is none of them, so call run_test with no arguments to run it in full", ErrNarrowing, supportedRunners, c.line)
	}
	if len(tests) > maxNarrowItems || len(packages) > maxNarrowItems {
		return nil, nil, fmt.Errorf("%w: at most %d tests and %d packages per call", ErrNarrowing, maxNarrowItems, maxNarrowItems)
	}
	for i, t := range tests {
		if tests[i], err = checkTestName(t); err != nil {
			return nil, nil, fmt.Errorf("%w: tests[%d]: %w", ErrNarrowing, i, err)
		}
	}
	for i, p := range packages {
		if packages[i], err = checkNarrowPath(ws, p); err != nil {
			return nil, nil, fmt.Errorf("%w: packages[%d]: %w", ErrNarrowing, i, err)
		}
	}
	switch c.runner {
	case runnerGo:
		argv, notes, err = c.goArgv(ws, tests, packages)
	case runnerPytest:
		argv, notes, err = c.pytestArgv(ws, tests, packages)
	case runnerJest, runnerVitest, runnerNpm:
		argv, notes, err = c.jsArgv(ws, tests, packages)
	case runnerCargo:
		argv, notes, err = c.cargoArgv(tests, packages)
	}
	if err == nil {
		err = checkFinalArgv(c.argv, argv)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrNarrowing, err)
	}
	return argv, notes, nil
}

// ownFlags are the flag words the mappings themselves add around the
// model's names (-run, -k, -t, -p, --test and the "--" separator).
var ownFlags = flagSet("-run", "-k", "-t", "-p", "--test", "--")

// checkFinalArgv is the last word on the argv a narrowing produced: every
// word that is not the maintainer's (a word of the configured command) nor
// a flag the mapping adds itself came from the model, and none of those may
// read as a flag ('-') or an argument file ('@'), whatever cleaning,
// symlink resolution or mapping made of the model's text.
func checkFinalArgv(configured, argv []string) error {
	trusted := flagSet(configured...)
	for _, a := range argv {
		if trusted[a] || ownFlags[a] {
			continue
		}
		if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "@") {
			return fmt.Errorf("the narrowing would reach the runner as %q, which it would read as a flag or an argument file; only names and workspace-relative paths are allowed", a)
		}
	}
	return nil
}

// checkTestName enforces "names and patterns only".
func checkTestName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if err := checkItem(s); err != nil {
		return "", err
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return "", fmt.Errorf("%q contains a control or invisible character; give test names only", s)
		}
		if strings.ContainsRune(forbiddenNameChars, r) {
			return "", fmt.Errorf("%q contains %q; give plain test names (several names are combined for you), without quotes, anchors or shell syntax; use . to match any character", s, r)
		}
	}
	return s, nil
}

// checkNarrowPath enforces "workspace-relative paths only" and returns the
// real (symlink-resolved) slash path.
func checkNarrowPath(ws *Workspace, s string) (string, error) {
	s = strings.TrimSpace(s)
	if err := checkItem(s); err != nil {
		return "", err
	}
	for _, r := range s {
		if !narrowPathRune(r) {
			return "", fmt.Errorf("%q contains %q; give workspace-relative paths or package patterns made of letters, digits and _-./@+,= only", s, r)
		}
	}
	clean, err := Clean(s)
	if err != nil {
		return "", err
	}
	real, err := ws.Resolve(clean)
	if err != nil {
		return "", err
	}
	// The checks above ran on the text as given; "./-exec=x" only becomes
	// a flag once cleaned, and a symlink can resolve to a name starting
	// with '-'. Check what will really be passed on.
	for _, p := range []string{clean, real} {
		if strings.ContainsFunc(p, func(r rune) bool { return !narrowPathRune(r) }) {
			return "", fmt.Errorf("%q resolves to %s, which contains a character other than letters, digits and _-./@+,=", s, quoteName(p))
		}
		if strings.HasPrefix(p, "-") {
			return "", fmt.Errorf("%q names %q, which starts with '-' and would be read as a flag; paths starting with '-' cannot be narrowed to (run the whole suite instead)", s, p)
		}
	}
	if strings.HasPrefix(real, "@") {
		real = "./" + real // never an argument file (see checkItem)
	}
	return real, nil
}

// narrowPathRune is the alphabet of narrowing paths.
func narrowPathRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-./@+,=", r)
}

func checkItem(s string) error {
	switch {
	case s == "":
		return errors.New("empty entry")
	case len(s) > maxNarrowItemLen:
		return fmt.Errorf("entry of %d bytes is too long (at most %d)", len(s), maxNarrowItemLen)
	case strings.HasPrefix(s, "-"):
		return fmt.Errorf("%q starts with '-': flags are not allowed, only names and paths", s)
	case strings.HasPrefix(s, "@"):
		// pytest (8.2+) and others read "@file" as more arguments, flags included.
		return fmt.Errorf("%q starts with '@', which some runners read as a file of more arguments; write the path as ./%s", s, s)
	}
	return nil
}

// mustExist refuses a path that is not in the workspace, so a typo gets a
// clear answer instead of a confusing runner error.
func mustExist(ws *Workspace, p string) error {
	_, err := statNarrowPath(ws, p)
	return err
}

// mustBeFile refuses a path that is not a regular file in the workspace.
func mustBeFile(ws *Workspace, p string) error {
	fi, err := statNarrowPath(ws, p)
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%q is not a regular file", p)
	}
	return err
}

// mustBeDir refuses a path that is not a directory in the workspace.
func mustBeDir(ws *Workspace, p string) error {
	fi, err := statNarrowPath(ws, p)
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("%q is not a directory", p)
	}
	return err
}

func statNarrowPath(ws *Workspace, p string) (fs.FileInfo, error) {
	fi, err := ws.Root().Stat(strings.TrimPrefix(p, "./"))
	if err != nil {
		return nil, fmt.Errorf("%q does not exist in the workspace", p)
	}
	return fi, nil
}

// splitFlags splits args into flags (with their values) and positionals.
// valueFlags take the next word as value; optValueFlags take it only when it
// does not look like a flag. "--" and everything after it is returned as rest.
func splitFlags(args []string, valueFlags, optValueFlags map[string]bool) (flags []flagArg, positional, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, positional, args[i:]
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		f := flagArg{words: []string{a}, name: a}
		if name, _, ok := strings.Cut(a, "="); ok {
			f.name = name
		} else if i+1 < len(args) && (valueFlags[a] || optValueFlags[a] && !strings.HasPrefix(args[i+1], "-")) {
			f.words = append(f.words, args[i+1])
			i++
		}
		flags = append(flags, f)
	}
	return flags, positional, nil
}

// flagArg is one flag as written: its words and its name without "=value".
type flagArg struct {
	name  string
	words []string
}

func (f flagArg) value() string {
	if len(f.words) > 1 {
		return f.words[1]
	}
	_, v, _ := strings.Cut(f.words[0], "=")
	return v
}

func joinFlags(flags []flagArg, drop func(name string) bool) []string {
	var out []string
	for _, f := range flags {
		if drop == nil || !drop(f.name) {
			out = append(out, f.words...)
		}
	}
	return out
}
