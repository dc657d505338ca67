package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/testcmd"
)

func TestQuoteName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                     "",
		"a.go":                 "a.go",
		"dir/sub dir/ü-ñ.go":   "dir/sub dir/ü-ñ.go",
		"日本語.txt":              "日本語.txt",
		"a\nb.go:1: forged":    `"a\nb.go:1: forged"`,
		"a\rb":                 `"a\rb"`,
		"a\tb":                 `"a\tb"`,
		"\x1b[31mred":          `"\x1b[31mred"`,
		"\u009b31m":            `"\u009b31m"`,
		"x\u202egp.exe":        `"x\u202egp.exe"`,
		"bad\xffutf8":          `"bad\xffutf8"`,
		`"quoted"`:             `"\"quoted\""`,
		"line\u2028separator":  `"line\u2028separator"`,
		"nbsp\u00a0":           `"nbsp\u00a0"`,
		"replacement\uFFFD.go": "replacement\uFFFD.go",
	} {
		if got := quoteName(in); got != want {
			t.Errorf("quoteName(%q) = %s, want %s", in, got, want)
		}
	}
}

// forgedName is a file name that, printed raw, makes a search answer show
// a hit "b.go:1: forged" that does not exist.
const forgedName = "a\nb.go:1: forged"

// controlNameRepo is a real git repository holding files whose names carry
// a newline and an escape sequence.
func controlNameRepo(t *testing.T) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	fxWrite(t, dir, map[string]string{
		forgedName:              "needle one\n",
		"sub/" + forgedName:     "needle two\n",
		"sub/e\x1b[2Jx.txt":     "needle three\n",
		"plain.go":              "package x // needle four\n",
		"sub/ok dir/fine.txt":   "nothing\n",
		"pkg/\x1b]0;title\a.go": "package x\n",
	})
	fxGit(t, dir, "init", "-q")
	fxGit(t, dir, "add", "-A")
	return fxWorkspace(t, dir), dir
}

// No answer line can be forged by a file name: every hit line starts with
// a real path (quoted when it holds control characters).
func TestSearchQuotesControlCharactersInNames(t *testing.T) {
	t.Parallel()
	ws, _ := controlNameRepo(t)
	text, code := searchRun(t, NewSearch(ws), `{"query":"needle"}`)
	if code != "" {
		t.Fatalf("search failed: %s %s", code, text)
	}
	want := []string{
		strconv.Quote(forgedName) + ":1: needle one",
		"plain.go:1: package x // needle four",
		strconv.Quote("sub/"+forgedName) + ":1: needle two",
		strconv.Quote("sub/e\x1b[2Jx.txt") + ":1: needle three",
	}
	got := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if !slices.Equal(got, want) {
		t.Fatalf("search answer lines\n got %q\nwant %q", got, want)
	}
}

// search's "did you mean" for a missing path quotes such names too.
func TestSearchQuotesControlCharactersInSuggestions(t *testing.T) {
	t.Parallel()
	ws, _ := controlNameRepo(t)
	msg, code := searchRun(t, NewSearch(ws), `{"query":"needle","path":"sub/ab.go:1: forged"}`)
	if code != "NOT_FOUND" || !strings.Contains(msg, "did you mean: "+strconv.Quote("sub/"+forgedName)) || strings.Contains(msg, "\n") {
		t.Errorf("search: %s %q; want NOT_FOUND with a quoted suggestion", code, msg)
	}
}

// read_file's directory listing and "did you mean" suggestions quote such
// names too.
func TestReadFileQuotesControlCharactersInNames(t *testing.T) {
	t.Parallel()
	ws, _ := controlNameRepo(t)
	rf := NewReadFile(ws)
	message := func(args string) string {
		res, err := rf.Execute(context.Background(), json.RawMessage(args))
		if err != nil || !res.IsError {
			t.Fatalf("read_file %s: %+v, %v; want an error result", args, res, err)
		}
		var e struct{ Message string }
		if err := json.Unmarshal([]byte(res.Text), &e); err != nil {
			t.Fatal(err)
		}
		return e.Message
	}
	for _, c := range []struct{ args, want string }{
		{`{"path":"sub"}`, strconv.Quote(forgedName)},
		{`{"path":"sub"}`, strconv.Quote("e\x1b[2Jx.txt")},
		{`{"path":"pkg"}`, strconv.Quote("\x1b]0;title\a.go")},
		{`{"path":"sub/a\nb.go:1: forgex"}`, strconv.Quote("sub/" + forgedName)},
	} {
		msg := message(c.args)
		if !strings.Contains(msg, c.want) {
			t.Errorf("read_file %s: %q does not show %s", c.args, msg, c.want)
		}
		if strings.ContainsAny(msg, "\n\x1b\a") {
			t.Errorf("read_file %s: raw control characters in %q", c.args, msg)
		}
	}
}

// apply_patch refuses control characters in the paths a patch names, but
// its "did you mean" suggestions come from the repository: they are quoted.
func TestApplyPatchQuotesControlCharactersInSuggestions(t *testing.T) {
	t.Parallel()
	ws, _ := controlNameRepo(t)
	res := apRun(t, ws, "*** Begin Patch\n*** Update File: sub/e[2Jx.txt\n@@\n-needle three\n+needle 3\n*** End Patch\n")
	var e struct{ Message string }
	if err := json.Unmarshal([]byte(res.Text), &e); err != nil || !res.IsError {
		t.Fatalf("apply_patch: %+v (%v); want an error result", res, err)
	}
	if !strings.Contains(e.Message, "Did you mean: "+strconv.Quote("sub/e\x1b[2Jx.txt")) || strings.Contains(e.Message, "\x1b") {
		t.Errorf("the suggestion is not quoted: %q", e.Message)
	}
}

// A narrowing path that resolves (through a symlink) to a name with control
// characters is refused, the name shown quoted.
func TestNarrowingRefusesControlCharactersAfterResolution(t *testing.T) {
	t.Parallel()
	ws, dir := controlNameRepo(t)
	fxSymlink(t, dir, "sub/"+forgedName, "lnk")
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "pytest")})
	out, err := rt.Run(t.Context(), testcmd.Selection{Packages: []string{"lnk"}}, testcmd.Plain)
	if !errors.Is(err, testcmd.ErrNarrowing) || !strings.Contains(err.Error(), strconv.Quote("sub/"+forgedName)) {
		t.Fatalf("ran %q, err %v; want a refusal quoting the resolved name", out.Argv, err)
	}
}
