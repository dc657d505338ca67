package testcmd

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNarrowItems bounds the tests, and the packages, of one selection.
const MaxNarrowItems = 32

// maxNarrowItemLen bounds one test name or path of a selection.
const maxNarrowItemLen = 200

// ErrNarrowing is wrapped by Argv when tests or packages are invalid or
// the configured command cannot be narrowed. Its message tells the model
// what is allowed; the run_test tool answers it with INVALID_ARGUMENT.
var ErrNarrowing = errors.New("invalid narrowing")

// forbiddenNameChars are refused in test names even though argv never meets
// a shell: they have no business in a test name or pattern, and refusing
// them keeps the rule simple to state and to audit.
const forbiddenNameChars = ";&|<>$`\\\"'!(){}"

// Workspace is what argv building needs from the directory the tests run
// in, to check the paths a narrowing names.
type Workspace interface {
	// Resolve cleans a workspace-relative path and follows symlinks inside
	// the workspace, returning the real slash path ("." for the root). It
	// refuses absolute paths, "..", links that leave the workspace and .git.
	Resolve(p string) (string, error)
	// Stat describes the file at a workspace-relative slash path, following
	// symlinks inside the workspace.
	Stat(p string) (fs.FileInfo, error)
}

// Selection is a narrowing: the tests and the packages (test files,
// directories, crates) to run instead of the whole suite. Both are
// untrusted (the model's, or names taken from a CI log).
type Selection struct {
	Tests    []string
	Packages []string
}

// Empty reports a selection of the whole suite.
func (s Selection) Empty() bool { return len(s.Tests) == 0 && len(s.Packages) == 0 }

// narrow validates the selection and maps it onto the command. notes are
// remarks for the model (how the narrowing was interpreted). ws may be nil
// for an empty selection.
func (c *Command) narrow(ws Workspace, sel Selection) (argv, notes []string, err error) {
	if sel.Empty() {
		return slices.Clone(c.argv), nil, nil
	}
	tests, packages := slices.Clone(sel.Tests), slices.Clone(sel.Packages)
	if c.shell {
		advice := ""
		if c.advice != "" {
			advice = " (to the maintainer: " + c.advice + ")"
		}
		return nil, nil, fmt.Errorf("%w: the test command %q uses shell syntax, so it cannot be narrowed; call run_test with no arguments to run it in full%s", ErrNarrowing, c.line, advice)
	}
	if c.runner == Unknown {
		return nil, nil, fmt.Errorf("%w: narrowing is supported for %s; the test command %q is none of them, so call run_test with no arguments to run it in full", ErrNarrowing, supportedRunners, c.line)
	}
	if len(tests) > MaxNarrowItems || len(packages) > MaxNarrowItems {
		return nil, nil, fmt.Errorf("%w: at most %d tests and %d packages per call", ErrNarrowing, MaxNarrowItems, MaxNarrowItems)
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
	case Go:
		argv, notes, err = c.goArgv(ws, tests, packages)
	case Pytest:
		argv, notes, err = c.pytestArgv(ws, tests, packages)
	case Jest, Vitest, Npm:
		argv, notes, err = c.jsArgv(ws, tests, packages)
	case Cargo:
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
func checkNarrowPath(ws Workspace, s string) (string, error) {
	s = strings.TrimSpace(s)
	if err := checkItem(s); err != nil {
		return "", err
	}
	for _, r := range s {
		if !narrowPathRune(r) {
			return "", fmt.Errorf("%q contains %q; give workspace-relative paths or package patterns made of letters, digits and _-./@+,= only", s, r)
		}
	}
	if ws == nil {
		return "", errors.New("paths cannot be checked here")
	}
	real, err := ws.Resolve(s)
	if err != nil {
		return "", err
	}
	if path.IsAbs(real) || real == ".." || strings.HasPrefix(real, "../") {
		// Resolve's contract; checked again because argv is built from it.
		return "", fmt.Errorf("%q resolves to %s, outside the workspace", s, quoteName(real))
	}
	// Resolve refused absolute paths and every ".." segment; what is left
	// is the text as the runner would read it once cleaned.
	clean := path.Clean(strings.TrimPrefix(s, "./"))
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
func mustExist(ws Workspace, p string) error {
	_, err := statNarrowPath(ws, p)
	return err
}

// mustBeFile refuses a path that is not a regular file in the workspace.
func mustBeFile(ws Workspace, p string) error {
	fi, err := statNarrowPath(ws, p)
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%q is not a regular file", p)
	}
	return err
}

// mustBeDir refuses a path that is not a directory in the workspace.
func mustBeDir(ws Workspace, p string) error {
	fi, err := statNarrowPath(ws, p)
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("%q is not a directory", p)
	}
	return err
}

func statNarrowPath(ws Workspace, p string) (fs.FileInfo, error) {
	fi, err := ws.Stat(strings.TrimPrefix(p, "./"))
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

// quoteName shows a resolved name in a message as is when every character
// prints as itself, Go-quoted otherwise, so a control character or bidi
// override in a file name cannot forge or hide text in the answer.
func quoteName(name string) string {
	if !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) || strings.HasPrefix(name, `"`) {
		return strconv.Quote(name)
	}
	return name
}
