package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/org/mini-agent/internal/exitcode"
)

// command describes one subcommand: its help page and its usage errors.
type command struct {
	name  string // "fix", "eval merge"
	usage string // after "mini-agent ": "fix --workdir DIR --test-command CMD [flags]"
	about string // one paragraph
	// groups lists every flag, by topic (a test checks none is missing).
	groups []flagGroup
	// required flags are marked in the help.
	required []string
	// meta names a flag's value in the help ("DIR"); default: by type.
	meta     map[string]string
	examples []string
	// footer follows the examples (exit codes).
	footer string
	// define adds the command's flags to a flag set (nil: none).
	define func(fs *flag.FlagSet)
}

type flagGroup struct {
	title string
	names []string
}

// flagSet returns a flag set with the command's flags that prints nothing
// by itself: parse reports help and errors.
func (c *command) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if c.define != nil {
		c.define(fs)
	}
	return fs
}

// parse parses args. done is true when the command must stop: --help or
// -h printed the help on stdout (exit 0), or a bad flag printed one line on
// stderr (exit 2).
func (c *command) parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		c.printHelp(stdout, fs)
		return 0, true
	}
	return c.usageError(stderr, flagError(err, fs)), true
}

// usageError prints one line, the problem and where the help is, and
// returns the usage exit code.
func (c *command) usageError(w io.Writer, msg string) int {
	fmt.Fprintf(w, "mini-agent %s: %s (see 'mini-agent %s --help')\n", c.name, msg, c.name)
	return exitcode.Usage
}

var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	needsArg      = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	flagName      = regexp.MustCompile(` flag -+([A-Za-z0-9-]+)`)
)

// flagError rewrites the flag package's error as one line, with the
// nearest valid flag for an unknown one.
func flagError(err error, fs *flag.FlagSet) string {
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		out := fmt.Sprintf("unknown flag --%s", m[1])
		if near := nearestFlag(m[1], fs); near != "" {
			out += fmt.Sprintf("; did you mean --%s?", near)
		}
		return out
	}
	if m := needsArg.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs a value", m[1])
	}
	return flagName.ReplaceAllString(msg, " --$1")
}

// nearestFlag is the defined flag closest to name by edit distance
// (transpositions count once), or one that starts with name; "" when none
// is close enough to be a likely typo.
func nearestFlag(name string, fs *flag.FlagSet) string {
	name = strings.ToLower(name)
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	best, bestDist := "", -1
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(name, f.Name)
		if bestDist < 0 || d < bestDist || (d == bestDist && f.Name < best) {
			best, bestDist = f.Name, d
		}
	})
	if best != "" && bestDist <= max(2, len(name)/3) {
		return best
	}
	prefixed := ""
	fs.VisitAll(func(f *flag.Flag) {
		if prefixed == "" && len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			prefixed = f.Name
		}
	})
	return prefixed
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and adjacent transpositions each cost 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// printHelp writes the help page: usage line, paragraph, flags by group
// (required ones marked), examples.
func (c *command) printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: mini-agent %s\n\n%s\n", c.usage, wrap(c.about, 78))
	for _, g := range c.groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.names {
			f := fs.Lookup(name)
			if f == nil {
				continue
			}
			left := "  --" + name
			if len(name) == 1 {
				left = "  -" + name // -j, as people type it
			}
			if m := c.metaOf(f); m != "" {
				left += " " + m
			}
			text := f.Usage
			switch {
			case c.isRequired(name):
				text += " (required)"
			case !isZeroDefault(f.DefValue):
				text += fmt.Sprintf(" (default %s)", f.DefValue)
			}
			if len(left) > 24 {
				fmt.Fprintf(w, "%s\n%26s%s\n", left, "", text)
			} else {
				fmt.Fprintf(w, "%-26s%s\n", left, text)
			}
		}
	}
	if len(c.examples) > 0 {
		w.Write([]byte("\nExamples:\n"))
		for _, e := range c.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	if c.footer != "" {
		fmt.Fprintf(w, "\n%s\n", wrap(c.footer, 78))
	}
}

func (c *command) isRequired(name string) bool {
	for _, r := range c.required {
		if r == name {
			return true
		}
	}
	return false
}

// metaOf names a flag's value: the command's meta, else its type.
func (c *command) metaOf(f *flag.Flag) string {
	if m, ok := c.meta[f.Name]; ok {
		return m
	}
	kind, _ := flag.UnquoteUsage(f)
	switch kind {
	case "":
		return ""
	case "int", "uint":
		return "N"
	case "float":
		return "X"
	case "duration":
		return "D"
	}
	return "VALUE"
}

func isZeroDefault(v string) bool {
	switch v {
	case "", "0", "false", "0s":
		return true
	}
	return false
}

// wrap breaks text into lines of at most width bytes at spaces, keeping
// its own line breaks.
func wrap(text string, width int) string {
	var out []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			if line != "" && len(line)+1+len(word) > width {
				out = append(out, line)
				line = word
				continue
			}
			if line != "" {
				line += " "
			}
			line += word
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
