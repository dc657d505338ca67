package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/protect"
)

// run calls Main in-process.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// commandsWithHelp are every command's help invocations and usage lines.
var commandsWithHelp = []struct {
	args  []string
	usage string
}{
	{[]string{"fix"}, "Usage: mini-agent fix --workdir DIR --test-command CMD [flags]"},
	{[]string{"explain"}, "Usage: mini-agent explain --workdir DIR --test-command CMD [flags]"},
	{[]string{"demo"}, "Usage: mini-agent demo [--keep]"},
	{[]string{"tool"}, "Usage: mini-agent tool NAME --workdir DIR [--test-command CMD] 'JSON-ARGS'"},
	{[]string{"tool", "read_file"}, "Usage: mini-agent tool NAME"},
	{[]string{"action"}, "Usage: mini-agent action"},
	{[]string{"publish"}, "Usage: mini-agent publish [--config PATH] BUNDLE"},
	{[]string{"eval"}, "Usage: mini-agent eval [--tasks LIST]"},
	{[]string{"eval", "merge"}, "Usage: mini-agent eval merge [--json OUT] REPORT.json..."},
	{[]string{"version"}, "Usage: mini-agent version"},
}

func TestHelpExitsZeroOnStdout(t *testing.T) {
	t.Parallel()
	for _, c := range commandsWithHelp {
		for _, h := range []string{"--help", "-h", "-help"} {
			args := append(slices.Clone(c.args), h)
			code, out, errOut := run(t, args...)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, c.usage) {
				t.Errorf("%q: exit %d, stderr %q, stdout starts %.80q; want exit 0 and %q on stdout", args, code, errOut, out, c.usage)
				continue
			}
			// A paragraph, then two examples.
			parts := strings.SplitN(out, "\n\n", 3)
			if len(parts) < 2 || len(strings.Fields(parts[1])) < 20 {
				t.Errorf("%q: no description paragraph after the usage line:\n%s", args, out)
			}
			_, ex, ok := strings.Cut(out, "\nExamples:\n")
			if !ok {
				t.Errorf("%q: no examples:\n%s", args, out)
				continue
			}
			ex, _, _ = strings.Cut(ex, "\n\n")
			if n := len(strings.Split(strings.TrimRight(ex, "\n"), "\n")); n != 2 {
				t.Errorf("%q: %d examples, want 2:\n%s", args, n, ex)
			}
		}
	}
	// help COMMAND is COMMAND --help.
	if code, out, _ := run(t, "help", "fix"); code != 0 || !strings.HasPrefix(out, "Usage: mini-agent fix") {
		t.Errorf("help fix: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, "--help"); code != 0 || !strings.Contains(out, "mini-agent version") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

// TestToolHelpNamesTheProtectedSet: the tool command's help names exactly
// the paths its write policy protects, from the protect package (the help
// sentence was a literal that had drifted: it lacked **/.git/** and
// **/.env.*), and the --protected flag's default is the default globs.
func TestToolHelpNamesTheProtectedSet(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, "tool", "--help")
	if code != 0 {
		t.Fatalf("tool --help: exit %d\n%s", code, out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	if want := "(paths matching " + strings.Join(protect.Default().List(), ", ") + " are never written)"; !strings.Contains(flat, want) {
		t.Errorf("tool --help lacks %q:\n%s", want, out)
	}
	for _, g := range []string{".git/**", "**/.git/**", ".github/**", "**/.env", "**/.env.*"} {
		if !slices.Contains(strings.FieldsFunc(flat, func(r rune) bool { return r == ' ' || r == ',' || r == '(' }), g) {
			t.Errorf("tool --help does not name the protected glob %s:\n%s", g, out)
		}
	}
	_, out, _ = run(t, "fix", "--help")
	flat = strings.Join(strings.Fields(out), " ")
	if want := "(default " + strings.Join(protect.Defaults(), ",") + ")"; !strings.Contains(flat, want) {
		t.Errorf("fix --help: the --protected default is not %q:\n%s", want, out)
	}
}

// TestHelpListsEveryFlagOnce: the groups of each command's help name every
// flag it defines exactly once, and the required ones are marked.
func TestHelpListsEveryFlagOnce(t *testing.T) {
	t.Parallel()
	fixCmd, _ := jobCommand(agent.ModeFix)
	explainCmd, _ := jobCommand(agent.ModeExplain)
	toolCmd, _ := toolCommand()
	evalCmd, _ := evalCommand()
	publishCmd, _ := publishCommand()
	for _, c := range []*command{fixCmd, explainCmd, toolCmd, evalCmd, publishCmd, versionCommand} {
		fs := c.flagSet()
		seen := map[string]int{}
		for _, g := range c.groups {
			for _, n := range g.names {
				seen[n]++
				if fs.Lookup(n) == nil {
					t.Errorf("%s: group %q lists %s, which is no flag", c.name, g.title, n)
				}
			}
		}
		fs.VisitAll(func(f *flag.Flag) {
			if seen[f.Name] != 1 {
				t.Errorf("%s: flag --%s is listed %d times in the help groups", c.name, f.Name, seen[f.Name])
			}
		})
		var help bytes.Buffer
		c.printHelp(&help, fs)
		for _, r := range c.required {
			if !regexp.MustCompile(`(?m)^  --` + r + ` .*\(required\)$`).MatchString(help.String()) {
				t.Errorf("%s: --%s is not marked required:\n%s", c.name, r, help.String())
			}
		}
	}
	var help bytes.Buffer
	fixCmd.printHelp(&help, fixCmd.flagSet())
	for _, want := range []string{"Workspace and tests:\n", "Budgets", "  --test-command CMD      the test command", "(required)",
		"--price-in USD", "MINI_AGENT_MODEL", "required with --base-url"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("fix help lacks %q", want)
		}
	}
}

// TestUnknownFlagSuggestsNearest: one line, the nearest flag, a pointer to
// --help, exit 2, nothing on stdout.
func TestUnknownFlagSuggestsNearest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string // "" means no suggestion
	}{
		{[]string{"fix", "-workdri", "x"}, "--workdir"},
		{[]string{"explain", "--modle", "x"}, "--model"},
		{[]string{"fix", "--max-cost", "1"}, "--max-cost-usd"},
		{[]string{"fix", "--test-comand=go test"}, "--test-command"},
		{[]string{"tool", "read_file", "--workdri", "."}, "--workdir"},
		{[]string{"eval", "--shrad", "1/2"}, "--shard"},
		{[]string{"eval", "merge", "--jsno", "x"}, "--json"},
		{[]string{"publish", "--confg", "x", "b.json"}, "--config"},
		{[]string{"demo", "--kepe"}, "--keep"},
		{[]string{"fix", "--zzzzzzzzzz"}, ""},
	} {
		code, out, errOut := run(t, c.args...)
		name := c.args[0]
		if c.args[0] == "eval" && c.args[1] == "merge" {
			name = "eval merge"
		}
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q: want exit 2 and one line on stderr", c.args, code, out, errOut)
			continue
		}
		if !strings.HasPrefix(errOut, "mini-agent "+name+": unknown flag --") || !strings.Contains(errOut, "(see 'mini-agent "+name+" --help')") {
			t.Errorf("%q: %q", c.args, errOut)
		}
		switch {
		case c.want == "" && strings.Contains(errOut, "did you mean"):
			t.Errorf("%q: a suggestion for a flag like no other: %q", c.args, errOut)
		case c.want != "" && !strings.Contains(errOut, "did you mean "+c.want+"?"):
			t.Errorf("%q: %q does not suggest %s", c.args, errOut, c.want)
		}
	}
	if code, _, errOut := run(t, "fxi"); code != 2 || errOut != "mini-agent: unknown command \"fxi\"; did you mean \"fix\"? (see 'mini-agent --help')\n" {
		t.Errorf("unknown command: exit %d %q", code, errOut)
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{{"workdri", "workdir", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"model", "model", 0}, {"ab", "ba", 1}} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestUsageErrorMessages: each usage error is one clear line, exit 2.
func TestUsageErrorMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"fix", "."}, []string{`unexpected arguments ["."]`, "--workdir ."}, nil},
		{[]string{"fix", "--workdir", dir}, []string{"mini-agent fix: --test-command is required (see 'mini-agent fix --help')"}, []string{"usage:"}},
		{[]string{"fix", "--workdir"}, []string{"--workdir needs a value"}, nil},
		{[]string{"fix", "--max-steps", "many"}, []string{`invalid value "many" for --max-steps`}, nil},
		{[]string{"fix", "--price-in", "1", "--test-command", "true"}, []string{"--price-in and --price-out go together"}, nil},
		{[]string{"fix", "--price-in", "-1", "--price-out", "1", "--test-command", "true"}, []string{"between 0 and"}, nil},
		{[]string{"fix", "--test-command", "true", "--protected", "src/**,["}, []string{`--protected: protected path "[": syntax error in pattern`}, nil},
		{[]string{"fix", "--workdir", dir, "--test-command", "true", "--failure-log", filepath.Join(dir, "none.log")}, []string{"mini-agent fix: --failure-log: ", "none.log"}, []string{"failure-log input"}},
		{[]string{"explain", "--workdir", filepath.Join(dir, "nodir"), "--test-command", "true"}, []string{"--workdir " + filepath.Join(dir, "nodir") + " is not a directory"}, nil},
		{[]string{"fix", "--test-command", "true", "--max-cost-usd", "-1"}, []string{"--max-cost-usd -1 is not a positive amount"}, nil},
		{[]string{"tool"}, []string{"give a tool name"}, nil},
		{[]string{"tool", "read_file", `{"path":"a.go"}`, "--workdir", dir}, []string{"the flags go before the JSON arguments (--workdir came after them)"}, []string{"one argument"}},
		{[]string{"tool", "--workdir", dir, "read_file"}, []string{"the tool name comes first"}, []string{"unknown tool"}},
		{[]string{"tool", "read_fiel", "--workdir", dir}, []string{`unknown tool "read_fiel"`}, nil},
		{[]string{"tool", "read_file", "--workdir", dir, "{", "}"}, []string{"give the JSON arguments as one argument"}, nil},
		{[]string{"eval", "--shard", "3/2"}, []string{`mini-agent eval: shard "3/2"`}, []string{"eval: eval", "eval: shard \"3/2\": want i/n with 1 <= i <= n, e.g. 2/4: "}},
		{[]string{"eval", "--tasks", "no-such-task-anywhere"}, []string{"matches no task"}, []string{"eval: eval"}},
		{[]string{"eval", "merge", filepath.Join(dir, "none.json")}, []string{"mini-agent eval merge: read report"}, []string{"eval: read", "merge: merge"}},
		{[]string{"eval", "--max-cost-usd", "1"}, []string{"--max-cost-usd needs a real, priced model"}, nil},
		{[]string{"eval", "--provider", "openai", "--model", "llama3", "--max-cost-usd", "1"}, []string{`model "llama3" has no known price`}, nil},
		{[]string{"publish"}, []string{"Usage: mini-agent publish [--config PATH] BUNDLE"}, nil},
		{[]string{"action", "extra"}, []string{"takes no arguments"}, nil},
		{[]string{"version", "extra"}, []string{"takes no arguments"}, nil},
	} {
		code, _, errOut := run(t, c.args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q: want exit 2 and one line", c.args, code, errOut)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%q: %q lacks %q", c.args, errOut, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(errOut, n) {
				t.Errorf("%q: %q has %q", c.args, errOut, n)
			}
		}
	}
}

// TestCostCapOnUnpricedModelRefused: --max-cost-usd with a model that has
// no known price is a usage error before anything runs (no model request,
// no test run); with --price-in/--price-out the run goes ahead.
func TestCostCapOnUnpricedModelRefused(t *testing.T) {
	// Not parallel: the OpenAI key comes from the process environment.
	srv := newOutage(t)
	ws := t.TempDir()
	marker := filepath.Join(ws, "tests-ran")
	args := []string{"fix", "--workdir", ws, "--test-command", "touch " + marker, "--provider", "openai",
		"--base-url", srv.BaseURL(), "--model", "llama3.1:8b", "--max-cost-usd", "0.01"}
	t.Setenv("OPENAI_API_KEY", "sk-test")
	code, out, errOut := run(t, args...)
	if code != 2 || out != "" || !strings.Contains(errOut, `--max-cost-usd 0.01: model "llama3.1:8b" has no known price`) ||
		!strings.Contains(errOut, "--price-in and --price-out") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if n := srv.Requests(); n != 0 {
		t.Errorf("%d model requests before the refusal", n)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the test command ran before the refusal")
	}

	// A price lets the budget be enforced: the run starts (the tests run;
	// this test command passes, so there is nothing to fix).
	code, out, errOut = run(t, append(slices.Clone(args), "--price-in", "0.1", "--price-out", "0.2")...)
	if code != 0 || !strings.Contains(out, "nothing to fix") {
		t.Errorf("with a price: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("with a price, the test command did not run")
	}
	// A priced model needs nothing more.
	code, _, errOut = run(t, "fix", "--workdir", t.TempDir(), "--test-command", "true", "--provider", "openai",
		"--base-url", srv.BaseURL(), "--model", "gpt-4.1-mini", "--max-cost-usd", "0.01")
	if code != 0 {
		t.Errorf("priced model: exit %d %s", code, errOut)
	}
}
