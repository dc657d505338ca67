package testcmd

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// patternChars mark a test name the model wrote as a pattern: it is passed
// on as written instead of being quoted and anchored.
const patternChars = "*?[]^"

func flagSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// goValueFlags are the go test/build flags that take a separate value; the
// go command also accepts them with "--" and (test flags) as -test.NAME.
var goValueFlags = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range []string{
		"run", "skip", "bench", "benchtime", "count", "covermode", "coverpkg", "coverprofile", "cpu",
		"fuzz", "fuzztime", "fuzzminimizetime", "list", "parallel", "timeout", "shuffle",
		"blockprofile", "blockprofilerate", "cpuprofile", "memprofile", "memprofilerate",
		"mutexprofile", "mutexprofilefraction", "outputdir", "trace", "o", "exec", "vet", "p",
		"tags", "mod", "modfile", "overlay", "pgo", "asmflags", "buildmode", "compiler",
		"gccgoflags", "gcflags", "installsuffix", "ldflags", "pkgdir", "toolexec", "C",
	} {
		m["-"+n], m["--"+n], m["-test."+n], m["--test."+n] = true, true, true, true
	}
	return m
}()

func isGoRunFlag(name string) bool {
	return name == "-run" || name == "--run" || name == "-test.run" || name == "--test.run"
}

// goArgv maps tests onto one -run pattern (replacing the command's own) and
// packages onto the package list (replacing the command's patterns).
func (c *Command) goArgv(ws Workspace, tests, packages []string) (argv, notes []string, err error) {
	args := c.argv[c.prefix:]
	var tail []string // -args and what follows belongs to the test binary
	for i, a := range args {
		if a == "-args" || a == "--args" {
			args, tail = args[:i], args[i:]
			break
		}
	}
	flags, positional, rest := splitFlags(args, goValueFlags, nil)
	argv = append([]string(nil), c.argv[:c.prefix]...)
	if len(tests) > 0 {
		pat, err := goRunPattern(tests)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range flags {
			if isGoRunFlag(f.name) {
				notes = append(notes, fmt.Sprintf("the command's own -run %s was replaced", f.value()))
			}
		}
		argv = append(append(argv, joinFlags(flags, isGoRunFlag)...), "-run", pat)
	} else {
		argv = append(argv, joinFlags(flags, nil)...)
	}
	if len(packages) > 0 {
		for _, p := range packages {
			gp, err := goPackage(ws, p)
			if err == nil && c.dir != "" {
				gp, err = c.inGoDir(gp, p)
			}
			if err != nil {
				return nil, nil, err
			}
			argv = append(argv, gp)
		}
		if c.dir != "" && c.dir != "." {
			notes = append(notes, fmt.Sprintf("packages are given to go relative to %s, the directory the command's -C flag runs it in", quoteName(c.dir)))
		}
	} else {
		argv = append(argv, positional...)
	}
	return append(append(argv, rest...), tail...), notes, nil
}

// goRunPattern builds a -run value matching exactly the named tests. Plain
// top-level names become ^(A|B)$; a subtest name becomes one anchored
// element per level (^TestA$/^case$), alternatives joined with the top-level
// '|' go test splits on; names that look like patterns are kept as written.
func goRunPattern(names []string) (string, error) {
	var plain, alts []string
	for _, n := range names {
		if strings.ContainsAny(n, patternChars) {
			alts = append(alts, n)
			continue
		}
		levels := strings.Split(n, "/")
		if len(levels) == 1 {
			plain = append(plain, regexp.QuoteMeta(n))
			continue
		}
		for i, l := range levels {
			// go test matches subtests by their printed name, spaces as '_'.
			levels[i] = "^" + regexp.QuoteMeta(strings.ReplaceAll(l, " ", "_")) + "$"
		}
		alts = append(alts, strings.Join(levels, "/"))
	}
	for _, alt := range alts {
		for _, level := range strings.Split(alt, "/") {
			if _, err := regexp.Compile(level); err != nil {
				return "", fmt.Errorf("test pattern %q is not a valid regular expression: %v", alt, err)
			}
		}
	}
	if len(plain) > 0 {
		alts = append([]string{"^(" + strings.Join(plain, "|") + ")$"}, alts...)
	}
	return strings.Join(alts, "|"), nil
}

// goPackage turns a checked path into a go package argument, always
// starting with "./" (or "." itself) so the go command can only read it as
// a directory: an existing directory inside the workspace, such a
// directory followed by "/..." (or "./..." for all), or a .go file, which
// names its directory. Import paths are refused: they may name code outside
// the workspace, and their text is not tied to a directory we checked.
func goPackage(ws Workspace, p string) (string, error) {
	if p == "..." {
		return "./...", nil // Clean turned "./..." into "...", which means all of std
	}
	if p == "." {
		return ".", nil
	}
	base, recursive := strings.CutSuffix(p, "/...")
	if strings.Contains(base, "...") {
		return "", fmt.Errorf("%q: the only pattern allowed is a directory followed by /... (for example ./internal/...)", p)
	}
	if strings.HasSuffix(base, ".go") && !recursive {
		if err := mustBeFile(ws, base); err != nil {
			return "", err
		}
		if d := path.Dir(base); d != "." {
			return "./" + d, nil
		}
		return ".", nil
	}
	if err := mustBeDir(ws, base); err != nil {
		if first, _, _ := strings.Cut(base, "/"); strings.Contains(first, ".") {
			return "", fmt.Errorf("%q looks like an import path, which is not a directory in the workspace; give the package's directory relative to the workspace root (./internal/x) or a pattern such as ./internal/... instead", p)
		}
		return "", err
	}
	if strings.HasPrefix(p, "./") { // "./@x" from checkNarrowPath
		return p, nil
	}
	return "./" + p, nil
}

// inGoDir turns gp, a go package argument relative to the workspace root
// ("./x", "./x/...", ".", "./..."), into the same relative to the
// directory of the command's -C flag, which go runs in. "./..." (every
// package) stays every package of that directory's module; a package
// outside the directory is refused: go would not find it there.
func (c *Command) inGoDir(gp, asked string) (string, error) {
	if c.dirErr != nil {
		return "", fmt.Errorf("%q cannot be given to this test command: %w; narrow by test names only", asked, c.dirErr)
	}
	if c.dir == "." || gp == "./..." {
		return gp, nil
	}
	rel := strings.TrimPrefix(gp, "./")
	if rel == c.dir {
		return ".", nil
	}
	if rest, ok := strings.CutPrefix(rel, c.dir+"/"); ok {
		return "./" + rest, nil
	}
	return "", fmt.Errorf("%q is outside %s, the directory the test command runs go test in (go -C %s): its packages are the only ones it can run; give a package under %s/ (for example ./%s/...)", asked, quoteName(c.dir), quoteName(c.dir), quoteName(c.dir), quoteName(c.dir))
}

var (
	pytestValueFlags = flagSet("-k", "-m", "-p", "-c", "-o", "-W", "-n", "-r",
		"--rootdir", "--confcutdir", "--basetemp", "--junitxml", "--junit-xml", "--junit-prefix",
		"--ignore", "--ignore-glob", "--deselect", "--maxfail", "--tb", "--durations",
		"--import-mode", "--log-level", "--log-file", "--log-cli-level", "--override-ini",
		"--capture", "--color", "--dist", "--numprocesses", "--timeout", "--reruns",
		"--cov-config", "--cov-fail-under")
	// pytestOptValueFlags take the next word only when it is not a flag (argparse nargs='?').
	pytestOptValueFlags = flagSet("--cov", "--cov-report")
	pytestKeyword       = regexp.MustCompile(`^[A-Za-z0-9_.+/\[\]-]+$`)
)

// pytestArgv maps node ids (path::name) and files onto positionals
// (replacing the command's own) and bare names onto a -k expression
// (combined with the command's own -k by "and").
func (c *Command) pytestArgv(ws Workspace, tests, packages []string) (argv, notes []string, err error) {
	var keywords, nodeIDs []string
	for _, t := range tests {
		if file, name, ok := strings.Cut(t, "::"); ok {
			real, err := checkNarrowPath(ws, file)
			if err == nil {
				err = mustBeFile(ws, real)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("node id %q: %w", t, err)
			}
			if name == "" {
				return nil, nil, fmt.Errorf("node id %q has no test name after '::'", t)
			}
			nodeIDs = append(nodeIDs, real+"::"+name)
			continue
		}
		if !pytestKeyword.MatchString(t) || t == "and" || t == "or" || t == "not" {
			return nil, nil, fmt.Errorf("%q cannot be a pytest -k keyword (letters, digits and _.+-/[] only); give a node id such as tests/test_x.py::test_name", t)
		}
		keywords = append(keywords, t)
	}
	for _, p := range packages {
		if err := mustExist(ws, p); err != nil {
			return nil, nil, err
		}
	}
	flags, positional, rest := splitFlags(c.argv[c.prefix:], pytestValueFlags, pytestOptValueFlags)
	isK := func(name string) bool { return name == "-k" }
	argv = append([]string(nil), c.argv[:c.prefix]...)
	if len(keywords) > 0 {
		expr := strings.Join(keywords, " or ")
		for _, f := range flags {
			if isK(f.name) {
				expr = "(" + f.value() + ") and (" + expr + ")"
				notes = append(notes, "combined with the command's own -k "+f.value())
			}
		}
		argv = append(append(argv, joinFlags(flags, isK)...), "-k", expr)
	} else {
		argv = append(argv, joinFlags(flags, nil)...)
	}
	if len(packages)+len(nodeIDs) > 0 {
		argv = append(append(argv, packages...), nodeIDs...)
	} else {
		argv = append(argv, positional...)
	}
	return append(argv, rest...), notes, nil
}

// jsArgv appends -t PATTERN (replacing the command's own) and the test
// files; for npm the narrowing goes after "--" so npm hands it to the script.
func (c *Command) jsArgv(ws Workspace, tests, packages []string) (argv, notes []string, err error) {
	for _, p := range packages {
		if err := mustExist(ws, p); err != nil {
			return nil, nil, err
		}
	}
	args := c.argv[c.prefix:]
	argv = append([]string(nil), c.argv[:c.prefix]...)
	if c.runner == Npm {
		i := 0
		for i < len(args) && args[i] != "--" {
			i++
		}
		argv = append(append(argv, args[:i]...), "--")
		args = args[min(i+1, len(args)):]
	}
	if len(tests) > 0 {
		var dropped []string
		args, dropped = dropFlag(args, "-t", "--testNamePattern")
		if len(dropped) > 0 {
			notes = append(notes, "the command's own "+strings.Join(dropped, " ")+" was replaced")
		}
		pats := make([]string, len(tests))
		for i, t := range tests {
			pats[i] = t
			if !strings.ContainsAny(t, patternChars) {
				pats[i] = regexp.QuoteMeta(t)
			}
		}
		args = append(args, "-t", strings.Join(pats, "|"))
	}
	return append(append(argv, args...), packages...), notes, nil
}

// dropFlag removes the named flags (with a separate or "=" value) in place
// of order, returning what was removed.
func dropFlag(args []string, names ...string) (kept, dropped []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "-") || !flagSet(names...)[name] {
			kept = append(kept, a)
			continue
		}
		dropped = append(dropped, a)
		if !hasValue && i+1 < len(args) {
			dropped = append(dropped, args[i+1])
			i++
		}
	}
	return kept, dropped
}

var (
	cargoValueFlags = flagSet("-p", "--package", "-F", "--features", "--target", "--target-dir",
		"--manifest-path", "-j", "--jobs", "--test", "--bench", "--example", "--bin", "--profile",
		"--color", "--message-format", "--config", "-Z", "--exclude")
	cargoFilter = regexp.MustCompile(`^[A-Za-z0-9_:]+$`)
	cargoCrate  = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)
)

// cargoArgv maps one test name onto cargo's filter positional; several go
// to the test binary after "--" (libtest takes several filters). Packages
// are crate names (-p) or integration test files tests/NAME.rs (--test NAME).
func (c *Command) cargoArgv(tests, packages []string) (argv, notes []string, err error) {
	for _, t := range tests {
		if !cargoFilter.MatchString(t) {
			return nil, nil, fmt.Errorf("%q: cargo test filters are plain names such as module::test_name (letters, digits, _ and ::)", t)
		}
	}
	var pkgFlags []string
	for _, p := range packages {
		switch {
		case cargoCrate.MatchString(p):
			pkgFlags = append(pkgFlags, "-p", p)
		case path.Dir(p) == "tests" && path.Ext(p) == ".rs" && cargoCrate.MatchString(strings.TrimSuffix(path.Base(p), ".rs")):
			pkgFlags = append(pkgFlags, "--test", strings.TrimSuffix(path.Base(p), ".rs"))
		default:
			return nil, nil, fmt.Errorf("%q: for cargo test give crate names (-p) or integration test files tests/NAME.rs", p)
		}
	}
	flags, positional, rest := splitFlags(c.argv[c.prefix:], cargoValueFlags, nil)
	argv = append([]string(nil), c.argv[:c.prefix]...)
	var dropPkg func(string) bool
	if len(packages) > 0 {
		dropPkg = func(name string) bool {
			return name == "-p" || name == "--package" || name == "--workspace" || name == "--all"
		}
	}
	argv = append(append(argv, joinFlags(flags, dropPkg)...), pkgFlags...)
	switch len(tests) {
	case 0:
		argv = append(argv, positional...)
	case 1:
		argv = append(argv, tests[0])
	default:
		if len(rest) == 0 {
			rest = []string{"--"}
		}
		rest = append(append([]string(nil), rest...), tests...)
	}
	return append(argv, rest...), notes, nil
}
