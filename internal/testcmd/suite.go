package testcmd

import (
	"fmt"
	"slices"
	"strings"
)

// A suite is a test command made of several simple commands joined by
// "&&", the way a maintainer writes "run these in turn" and the way
// Detect proposes the tests of several modules:
//
//	go test ./... && go -C gopls test ./...
//
// Each part must be a simple command (words and quotes, no other shell
// syntax, not a shell builtin such as cd); then the suite runs without a
// shell, as a list of argvs, each part while the one before passed, as "&&"
// means (proc.Spec.Then). When every part is the same runner that can be
// narrowed, a narrowing goes to each part: test names to all of them, a
// package to the part whose directory (go -C DIR) holds it, parts left
// without a package skipped. Anything else in the line makes it shell
// syntax, run whole through sh -c as before.

// maxSuiteParts bounds the commands of one suite.
const maxSuiteParts = 32

// shellBuiltins are programs only a shell has: a part naming one needs the
// shell (cd changes the shell's directory, export its environment...).
var shellBuiltins = flagSet("cd", "pushd", "popd", "export", "unset", "set", "source", ".", "eval", "exec",
	"alias", "unalias", "ulimit", "umask", "shift", "trap", "wait", "read", "readonly", "local", "declare",
	"typeset", "builtin", "command", "hash", "type", "exit", "return", "shopt", "setopt", "enable", ":")

// splitAnd splits line at each "&&" outside quotes and escapes. ok is false
// when there is none.
func splitAnd(line string) (parts []string, ok bool) {
	start := 0
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case quote == '"':
			if c == '\\' {
				i++
			} else if c == '"' {
				quote = 0
			}
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			quote = c
		case c == '&' && i+1 < len(line) && line[i+1] == '&':
			parts = append(parts, line[start:i])
			i++
			start = i + 1
		}
	}
	if len(parts) == 0 {
		return nil, false
	}
	return append(parts, line[start:]), true
}

// parseSuite reads line as a suite; ok is false when it is not one (no
// "&&", a part with other shell syntax, an empty part, a shell builtin).
func parseSuite(line string) (*Command, bool) {
	texts, ok := splitAnd(line)
	if !ok || len(texts) > maxSuiteParts {
		return nil, false
	}
	c := &Command{line: line}
	for _, t := range texts {
		t = strings.TrimSpace(t)
		words, needShell, err := splitCommand(t)
		if err != nil || needShell || len(words) == 0 || shellBuiltins[program(words[0])] {
			return nil, false
		}
		p := simple(t, words)
		c.parts = append(c.parts, p)
		if len(c.argv) > 0 {
			c.argv = append(c.argv, "&&")
		}
		c.argv = append(c.argv, words...)
	}
	c.runner = c.parts[0].runner
	for _, p := range c.parts[1:] {
		if p.runner != c.runner {
			c.runner = Unknown
		}
	}
	return c, true
}

// cdAdvice is what to write instead of "cd DIR && go test ...", which
// needs a shell: "go -C DIR test ...", which does not (and can be
// narrowed). It is "" for any other line.
func cdAdvice(line string) string {
	texts, ok := splitAnd(line)
	if !ok || len(texts) != 2 {
		return ""
	}
	cd, _, err1 := splitCommand(strings.TrimSpace(texts[0]))
	rest, shell, err2 := splitCommand(strings.TrimSpace(texts[1]))
	if err1 != nil || err2 != nil || shell || len(cd) != 2 || cd[0] != "cd" || len(rest) < 2 ||
		program(rest[0]) != "go" || rest[1] != "test" || strings.ContainsAny(cd[1], " \t") {
		return ""
	}
	suggestion := strings.Join(slices.Concat([]string{rest[0], "-C", cd[1]}, rest[1:]), " ")
	return fmt.Sprintf("write it as `%s` (go's -C flag runs go test in %s without a shell) and it can be narrowed", suggestion, cd[1])
}

// suiteArgv is Argv for a suite: each part's invocation, joined.
func (c *Command) suiteArgv(ws Workspace, sel Selection, form Form) (*Invocation, error) {
	if !sel.Empty() && !c.Narrowable() {
		return nil, fmt.Errorf("%w: the test command %q runs several commands that are not all %s, so it cannot be narrowed; call run_test with no arguments to run it in full", ErrNarrowing, c.line, "one runner that can be narrowed ("+supportedRunners+")")
	}
	sels, err := c.route(ws, sel)
	if err != nil {
		return nil, err
	}
	build := func(form Form) ([]*Invocation, error) {
		var invs []*Invocation
		for i, p := range c.parts {
			if sels[i] == nil {
				continue
			}
			inv, err := p.Argv(ws, *sels[i], form)
			if err != nil {
				return nil, err
			}
			invs = append(invs, inv)
		}
		return invs, nil
	}
	parts, err := build(form)
	if err != nil {
		return nil, err
	}
	if form != Plain && slices.ContainsFunc(parts, func(inv *Invocation) bool { return inv.Form != form }) {
		// One form for the whole output, or none.
		if parts, err = build(Plain); err != nil {
			return nil, err
		}
	}
	return joinInvocations(parts, c.runner), nil
}

// route gives each part of the suite its selection: the test names, and
// the packages under its directory (the part with the longest directory
// holding a package gets it; a part without -C holds every path). nil
// means the part does not run: packages were asked for and it holds none.
func (c *Command) route(ws Workspace, sel Selection) ([]*Selection, error) {
	out := make([]*Selection, len(c.parts))
	if len(sel.Packages) == 0 {
		for i := range out {
			out[i] = &Selection{Tests: sel.Tests}
		}
		return out, nil
	}
	if len(sel.Packages) > MaxNarrowItems {
		return nil, fmt.Errorf("%w: at most %d tests and %d packages per call", ErrNarrowing, MaxNarrowItems, MaxNarrowItems)
	}
	for k, p := range sel.Packages {
		real, err := checkNarrowPath(ws, p)
		if err != nil {
			return nil, fmt.Errorf("%w: packages[%d]: %w", ErrNarrowing, k, err)
		}
		// The parts whose directory holds it, the deepest ones (every
		// part for "./...": each runs its own packages).
		var best []int
		bestLen := -1
		for i, part := range c.parts {
			d := part.dir
			if d == "." {
				d = ""
			}
			if part.dirErr != nil || !(real == "..." || d == "" || real == d || strings.HasPrefix(real, d+"/")) {
				continue
			}
			switch n := len(d); {
			case real == "...":
				best = append(best, i)
			case n > bestLen:
				best, bestLen = []int{i}, n
			case n == bestLen:
				best = append(best, i)
			}
		}
		if len(best) == 0 {
			return nil, fmt.Errorf("%w: packages[%d]: %q is in none of the directories the test command runs in (%s)", ErrNarrowing, k, p, strings.Join(c.dirs(), ", "))
		}
		for _, i := range best {
			if out[i] == nil {
				out[i] = &Selection{Tests: sel.Tests}
			}
			out[i].Packages = append(out[i].Packages, p)
		}
	}
	return out, nil
}

// dirs lists the directories the parts run in ("." for the workspace).
func (c *Command) dirs() []string {
	var out []string
	for _, p := range c.parts {
		d := p.dir
		if d == "" {
			d = "."
		}
		if !slices.Contains(out, d) {
			out = append(out, quoteName(d))
		}
	}
	return out
}

// joinInvocations is the invocation that runs parts in turn.
func joinInvocations(parts []*Invocation, runner Runner) *Invocation {
	if len(parts) == 1 {
		return parts[0]
	}
	inv := &Invocation{runner: runner, Form: parts[0].Form, parts: parts}
	for i, p := range parts {
		if i > 0 {
			inv.Argv = append(inv.Argv, "&&")
		}
		inv.Argv = append(inv.Argv, p.Argv...)
		for _, n := range p.Notes {
			if !slices.Contains(inv.Notes, n) {
				inv.Notes = append(inv.Notes, n)
			}
		}
		for _, t := range p.Tests {
			if !slices.Contains(inv.Tests, t) {
				inv.Tests = append(inv.Tests, t)
			}
		}
	}
	return inv
}

// mapParts applies f to each part of a suite's invocation and joins the
// results again.
func (inv *Invocation) mapParts(f func(*Invocation) (*Invocation, error)) (*Invocation, error) {
	parts := make([]*Invocation, len(inv.parts))
	for i, p := range inv.parts {
		q, err := f(p)
		if err != nil {
			return nil, err
		}
		parts[i] = q
	}
	return joinInvocations(parts, inv.runner), nil
}

// Steps are the argvs to run one after another, each while the one before
// passed: Argv alone for one command, each part's for a suite (whose Argv
// joins them with "&&" words, to show).
func (inv *Invocation) Steps() [][]string {
	if len(inv.parts) == 0 {
		return [][]string{inv.Argv}
	}
	out := make([][]string, len(inv.parts))
	for i, p := range inv.parts {
		out[i] = p.Argv
	}
	return out
}
