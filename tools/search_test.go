package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/org/mini-agent/agent"
)

// searchFixture builds a git work tree (tracked, untracked, ignored,
// binary, large and symlinked files) next to an outside directory.
func searchFixture(t *testing.T) *Workspace {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	fxWrite(t, base, map[string]string{"outside/secret.go": "needle outside\n"})
	var many strings.Builder
	for i := range 600 {
		fmt.Fprintf(&many, "many needle %d\n", i)
	}
	fxWrite(t, dir, map[string]string{
		".gitignore":           "ignored/\n*.log\n!keep.log\n",
		"a.go":                 "package a\n\n// needle one\nfunc Needle() {}\nvar x = \"needle\" // needle twice on a line\n",
		"sub/b.go":             "package sub\nfunc f() { needle() }\n",
		"sub/c.txt":            "a needle in text\nfoo bar\nfoo\nbar\n",
		"sub/deeper/d.go":      "package deeper // needle\n",
		"z/last.go":            "needle at the end\n",
		"ignored/x.go":         "needle ignored\n",
		"debug.log":            "needle in an ignored log\n",
		"keep.log":             "needle in a re-included log\n",
		"bin.dat":              "needle\x00binary\n",
		"big.txt":              "needle\n" + strings.Repeat("filler line\n", searchMaxFileBytes/12+1),
		"long.txt":             strings.Repeat("y", 1000) + " needle " + strings.Repeat("z", 1000) + "\n",
		"zz_many/m.txt":        many.String(),
		"crlf.txt":             "needle crlf\r\nnext\r\n",
		"nested/.git/config":   "needle in a nested git dir\n",
		"unicode.txt":          "Straße NEEDLE ſtraße \u212Aelvin\n",
		"sub/deeper/empty.txt": "",
	})
	fxGit(t, dir, "init", "-q")
	fxGit(t, dir, "add", ".gitignore", "a.go", "sub", "z", "bin.dat", "big.txt", "long.txt", "zz_many", "keep.log", "crlf.txt", "unicode.txt")
	// Untracked but not ignored: must be found.
	fxWrite(t, dir, map[string]string{"untracked.go": "needle untracked\n"})
	// A needle inside .git itself.
	fxWrite(t, dir, map[string]string{".git/needle.txt": "needle in .git\n"})
	fxSymlink(t, dir, "a.go", "link.go")
	fxSymlink(t, dir, "../outside/secret.go", "out.go")
	fxSymlink(t, dir, "../outside", "outdir")
	fxSymlink(t, dir, ".git/needle.txt", "gitlink.txt")
	fxGit(t, dir, "add", "link.go", "out.go", "outdir", "gitlink.txt")
	return fxWorkspace(t, dir)
}

// searchRun executes the search tool and returns its text (the message for
// an error result) and code.
func searchRun(t *testing.T, s *Search, args string) (string, string) {
	t.Helper()
	res, err := s.Execute(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("Execute(%s): Go error %v", args, err)
	}
	if !res.IsError {
		return res.Text, ""
	}
	var e struct{ Message string }
	if err := json.Unmarshal([]byte(res.Text), &e); err != nil {
		t.Fatalf("error result is not JSON: %v", err)
	}
	return e.Message, res.Code
}

// hitPaths returns the "path:line" prefixes of the hit lines of text.
func hitPaths(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "[") || strings.HasPrefix(line, "no matches") {
			continue
		}
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 {
			out = append(out, parts[0]+":"+parts[1])
		}
	}
	return out
}

func TestSearch(t *testing.T) {
	t.Parallel()
	s := NewSearch(searchFixture(t))
	cases := []struct {
		name   string
		args   string
		code   string
		exact  string   // whole text, when set
		hits   []string // exact "path:line" list, when set
		has    []string
		hasNot []string
	}{
		{name: "basic", args: `{"query":"needle","max_results":500}`,
			has:    []string{"a.go:3: // needle one\n", "untracked.go:1: needle untracked\n", "keep.log:1: needle in a re-included log\n", "crlf.txt:1: needle crlf\n", "[skipped 1 binary files and 1 files over 1 MiB]"},
			hasNot: []string{"ignored/x.go", "debug.log", "bin.dat:", "big.txt:", "link.go", "out.go", "outside", ".git", "gitlink", "\r"}},
		{name: "order and default cap", args: `{"query":"needle"}`,
			has: []string{"[", "more matches not shown"}},
		{name: "path folder", args: `{"query":"needle","path":"sub/"}`,
			hits: []string{"sub/b.go:2", "sub/c.txt:1", "sub/deeper/d.go:1"}},
		{name: "path folder no slash", args: `{"query":"needle","path":"./sub"}`,
			hits: []string{"sub/b.go:2", "sub/c.txt:1", "sub/deeper/d.go:1"}},
		{name: "path file", args: `{"query":"needle","path":"sub/b.go"}`, exact: "sub/b.go:2: func f() { needle() }\n"},
		{name: "path glob deep", args: `{"query":"needle","path":"**/*.go"}`,
			hits: []string{"a.go:3", "a.go:5", "sub/b.go:2", "sub/deeper/d.go:1", "untracked.go:1", "z/last.go:1"}},
		{name: "path glob base name", args: `{"query":"needle","path":"*.txt","max_results":3}`,
			hits: []string{"crlf.txt:1", "long.txt:1", "sub/c.txt:1"}},
		{name: "path glob in folder", args: `{"query":"needle","path":"sub/*.go"}`, hits: []string{"sub/b.go:2"}},
		{name: "path brace glob", args: `{"query":"needle","path":"{sub,z}/*.{go,txt}"}`, hits: []string{"sub/b.go:2", "sub/c.txt:1", "z/last.go:1"}},
		{name: "path bad braces", args: `{"query":"needle","path":"*.{go"}`, code: agent.CodeInvalidArgument, has: []string{"unbalanced braces"}},
		{name: "path ignored file named", args: `{"query":"needle","path":"ignored/x.go"}`, exact: "ignored/x.go:1: needle ignored\n"},
		{name: "path ignored folder", args: `{"query":"needle","path":"ignored/"}`, has: []string{"no matches", "in 0 files", "ignored by .gitignore"}},
		{name: "path backslash", args: `{"query":"needle","path":"sub\\deeper"}`, hits: []string{"sub/deeper/d.go:1"}},
		{name: "path symlink dir out", args: `{"query":"needle","path":"outdir"}`, code: agent.CodeDenied},
		{name: "path missing", args: `{"query":"needle","path":"subb/"}`, code: agent.CodeNotFound, has: []string{"does not exist"}},
		{name: "path dotdot", args: `{"query":"needle","path":"../outside"}`, code: agent.CodeDenied},
		{name: "path absolute", args: `{"query":"needle","path":"/etc"}`, code: agent.CodeDenied},
		{name: "path git", args: `{"query":"needle","path":".git"}`, code: agent.CodeDenied},
		{name: "path git glob", args: `{"query":"needle","path":".git/*"}`, code: agent.CodeDenied},
		{name: "path glob dotdot", args: `{"query":"needle","path":"../*"}`, code: agent.CodeDenied},
		{name: "path bad glob", args: `{"query":"needle","path":"sub/[a"}`, code: agent.CodeInvalidArgument, has: []string{"not a valid glob"}},
		{name: "max results", args: `{"query":"needle","path":"zz_many/","max_results":2}`,
			exact: "zz_many/m.txt:1: many needle 0\nzz_many/m.txt:2: many needle 1\n[598 more matches not shown: 600 matching lines in 1 files; narrow the query or path, or raise max_results (up to 500)]\n"},
		{name: "max results clamped", args: `{"query":"needle","path":"zz_many/","max_results":100000}`,
			has: []string{"zz_many/m.txt:500: many needle 499\n", "[100 more matches not shown"}, hasNot: []string{"many needle 500\n"}},
		{name: "max results string", args: `{"query":"needle","path":"zz_many","max_results":"1"}`, has: []string{"[599 more matches not shown"}},
		{name: "max results negative", args: `{"query":"needle","max_results":-1}`, code: agent.CodeInvalidArgument},
		{name: "no matches", args: `{"query":"nothing_like_this"}`, has: []string{`no matches for "nothing_like_this" in`}},
		{name: "no matches in path", args: `{"query":"nothing_like_this","path":"sub/"}`, has: []string{`in 4 files matching path "sub/"`}},
		{name: "invalid regex", args: `{"query":"needle("}`, code: agent.CodeInvalidArgument, has: []string{"missing closing )", `"needle("`}},
		{name: "lookahead is not RE2", args: `{"query":"foo(?=bar)"}`, code: agent.CodeInvalidArgument, has: []string{"invalid or unsupported Perl syntax"}},
		{name: "empty query", args: `{"query":""}`, code: agent.CodeInvalidArgument},
		{name: "unknown field", args: `{"query":"x","case":"i"}`, code: agent.CodeInvalidArgument, has: []string{`unknown field "case"`}},
		{name: "long line cut", args: `{"query":"needle","path":"long.txt"}`,
			exact: "long.txt:1: " + strings.Repeat("y", searchMaxLineBytes) + " [...]\n"},
		{name: "anchored", args: `{"query":"^func","path":"sub/"}`, exact: "sub/b.go:2: func f() { needle() }\n"},
		{name: "line end", args: `{"query":"^foo$","path":"sub/"}`, exact: "sub/c.txt:3: foo\n"},
		{name: "no cross-line match", args: `{"query":"foo\\sbar","path":"sub/"}`, exact: "sub/c.txt:2: foo bar\n"},
		{name: "newline never matches", args: `{"query":"foo\\nbar","path":"sub/"}`, has: []string{"no matches"}},
		{name: "begin text is line start", args: `{"query":"\\Abar","path":"sub/"}`, exact: "sub/c.txt:4: bar\n"},
		{name: "case insensitive", args: `{"query":"(?i)NEEDLE\\(\\)","path":"sub/"}`, exact: "sub/b.go:2: func f() { needle() }\n"},
		{name: "case insensitive mixed", args: `{"query":"(?i)func needle","path":"a.go"}`, exact: "a.go:4: func Needle() {}\n"},
		{name: "kelvin folds", args: `{"query":"(?i)kelvin","path":"unicode.txt"}`, has: []string{"unicode.txt:1:"}},
		{name: "long s folds", args: `{"query":"(?i)STRASSE|(?i)straße","path":"unicode.txt"}`, has: []string{"unicode.txt:1:"}},
		{name: "word boundary", args: `{"query":"\\bNeedle\\b","path":"a.go"}`, exact: "a.go:4: func Needle() {}\n"},
		{name: "alternation", args: `{"query":"package (sub|deeper)","path":"sub/"}`, hits: []string{"sub/b.go:1", "sub/deeper/d.go:1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			text, code := searchRun(t, s, c.args)
			if code != c.code {
				t.Fatalf("code %q, want %q: %s", code, c.code, text)
			}
			if c.exact != "" && text != c.exact {
				t.Errorf("text:\n%q\nwant:\n%q", text, c.exact)
			}
			if c.hits != nil {
				if got := hitPaths(text); !slices.Equal(got, c.hits) {
					t.Errorf("hits %q, want %q\n%s", got, c.hits, text)
				}
			}
			for _, h := range c.has {
				if !strings.Contains(text, h) {
					t.Errorf("text lacks %q:\n%.3000s", h, text)
				}
			}
			for _, h := range c.hasNot {
				if strings.Contains(text, h) {
					t.Errorf("text contains %q:\n%.3000s", h, text)
				}
			}
		})
	}
}

// TestSearchOrderDeterministic checks hits come sorted by path then line,
// identically on every run, whatever the scheduling of the workers.
func TestSearchOrderDeterministic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("d%02d/f%d.txt", i%7, i)] = strings.Repeat("hit\nmiss\n", i%4+1)
	}
	fxWrite(t, dir, files)
	fxGit(t, dir, "init", "-q")
	s := NewSearch(fxWorkspace(t, dir))
	var first string
	for run := range 8 {
		text, code := searchRun(t, s, `{"query":"hit","max_results":500}`)
		if code != "" {
			t.Fatal(text)
		}
		if run == 0 {
			first = text
			hits := hitPaths(text)
			sorted := slices.Clone(hits)
			slices.SortStableFunc(sorted, func(a, b string) int {
				pa, la, _ := strings.Cut(a, ":")
				pb, lb, _ := strings.Cut(b, ":")
				if c := strings.Compare(pa, pb); c != 0 {
					return c
				}
				return atoiTest(la) - atoiTest(lb)
			})
			if !slices.Equal(hits, sorted) {
				t.Fatalf("hits not sorted by path then line:\n%q", hits)
			}
			want := 0
			for i := range 60 {
				want += i%4 + 1
			}
			if len(hits) != want {
				t.Fatalf("%d hits, want %d", len(hits), want)
			}
			continue
		}
		if text != first {
			t.Fatalf("run %d differs from run 0", run)
		}
	}
	// With a cap, the shown hits are the first ones in that order.
	text, _ := searchRun(t, s, `{"query":"hit","max_results":5}`)
	if got, want := hitPaths(text), hitPaths(first)[:5]; !slices.Equal(got, want) {
		t.Errorf("capped hits %q, want %q", got, want)
	}
}

func atoiTest(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

// TestSearchWithoutGit checks the walking fallback: .gitignore files at the
// top and deeper are honoured, .git is skipped.
func TestSearchWithoutGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fxWrite(t, dir, map[string]string{
		".gitignore":          "# comment\n/build\n*.tmp\nvendor/\n!vendor/keep.go\n",
		"src/.gitignore":      "gen_*.go\n",
		"src/main.go":         "needle main\n",
		"src/gen_x.go":        "needle generated\n",
		"src/deep/gen_y.go":   "needle generated deeper\n",
		"build/out.txt":       "needle build\n",
		"src/build/ok.txt":    "needle not the top-level build\n",
		"x.tmp":               "needle tmp\n",
		"vendor/keep.go":      "needle vendor\n",
		".git/HEAD":           "needle in git\n",
		"lib/.git/objects/aa": "needle in nested git\n",
		"other/file.txt":      "needle other\n",
	})
	s := NewSearch(fxWorkspace(t, dir))
	text, code := searchRun(t, s, `{"query":"needle"}`)
	if code != "" {
		t.Fatal(text)
	}
	want := []string{"other/file.txt:1", "src/build/ok.txt:1", "src/main.go:1"}
	if got := hitPaths(text); !slices.Equal(got, want) {
		t.Errorf("hits %q, want %q\n%s", got, want, text)
	}
}

// TestSearchSymlinkSwappedDir replaces tracked directories, after they
// were indexed, with symlinks into .git and out of the workspace: the index
// still lists their files, and search must not follow the links.
func TestSearchSymlinkSwappedDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	fxWrite(t, base, map[string]string{"outside/secret.go": "needle outside\n"})
	fxWrite(t, dir, map[string]string{"d/config": "needle d\n", "e/secret.go": "needle e\n", "ok.go": "needle ok\n"})
	fxGit(t, dir, "init", "-q")
	fxGit(t, dir, "add", ".")
	for _, d := range []string{"d", "e"} {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	fxSymlink(t, dir, ".git", "d")
	fxSymlink(t, dir, "../outside", "e")
	s := NewSearch(fxWorkspace(t, dir))
	for _, q := range []string{"needle", "repositoryformatversion"} {
		text, code := searchRun(t, s, fmt.Sprintf(`{"query":%q}`, q))
		if code != "" {
			t.Fatal(text)
		}
		if q == "needle" && text != "ok.go:1: needle ok\n" {
			t.Errorf("search %q:\n%s", q, text)
		}
		if q != "needle" && !strings.HasPrefix(text, "no matches") {
			t.Errorf("search %q reached .git:\n%s", q, text)
		}
	}
}

// TestSearchWorkspaceInSubdir opens a sub-folder of a repository as the
// workspace: only its files are listed, with workspace-relative paths.
func TestSearchWorkspaceInSubdir(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	fxWrite(t, repo, map[string]string{"top.go": "needle top\n", "ws/in.go": "needle in\n", "ws/.gitignore": "*.gen\n", "ws/x.gen": "needle gen\n"})
	fxGit(t, repo, "init", "-q")
	fxGit(t, repo, "add", "top.go", "ws/in.go")
	s := NewSearch(fxWorkspace(t, filepath.Join(repo, "ws")))
	text, code := searchRun(t, s, `{"query":"needle"}`)
	if code != "" || text != "in.go:1: needle in\n" {
		t.Errorf("got %q (%s), want only in.go", text, code)
	}
}

// TestDirReaders runs the platform dirReader and the portable one over the
// same directory: both must skip the same things.
func TestDirReaders(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	fxWrite(t, base, map[string]string{"outside.txt": "secret\n"})
	fxWrite(t, dir, map[string]string{
		"d/text.txt": "hello\n", "d/bin.dat": "a\x00b", "d/empty.txt": "",
		"d/big.txt": strings.Repeat("x", searchMaxFileBytes+1), "d/sub/x.txt": "x\n",
	})
	fxSymlink(t, dir, "text.txt", "d/link.txt")
	fxSymlink(t, dir, "../../outside.txt", "d/out.txt")
	if err := syscall.Mkfifo(filepath.Join(dir, "d", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := fxWorkspace(t, dir)
	want := map[string]fileStatus{
		"text.txt": fileOK, "bin.dat": fileBinary, "empty.txt": fileSkipped, "big.txt": fileLarge,
		"sub": fileSkipped, "link.txt": fileSkipped, "out.txt": fileSkipped, "fifo": fileSkipped,
		"missing": fileSkipped, "..": fileSkipped, ".": fileSkipped,
	}
	for name, open := range map[string]func(*os.Root, string) (dirReader, error){
		"platform": openDirReader, "portable": openRootDirReader,
	} {
		d, err := open(ws.Root(), "d")
		if err != nil {
			t.Fatal(err)
		}
		for file, st := range want {
			data, got := d.read(file, nil)
			if got != st {
				t.Errorf("%s reader: %s: status %d, want %d", name, file, got, st)
			}
			if got == fileOK && string(data) != "hello\n" {
				t.Errorf("%s reader: %s: read %q", name, file, data)
			}
		}
		d.close()
	}
}

func TestSearchCancelled(t *testing.T) {
	t.Parallel()
	s := NewSearch(searchFixture(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Execute(ctx, json.RawMessage(`{"query":"needle"}`)); err == nil {
		t.Fatal("cancelled context: want a Go error")
	}
}

// TestMatcherAgreesWithRegexp compares the fast scan with the obvious
// per-line regexp loop on a corpus built to trip literal extraction, case
// folding and line handling.
func TestMatcherAgreesWithRegexp(t *testing.T) {
	t.Parallel()
	corpus := strings.Join([]string{
		"package main", "", "func main() {", "\tfmt.Println(\"Hello, World\")", "}",
		"FOO bar", "foo BAR", "fOo\tbar", "foobar", "barfoo", "foo", "bar", "foo\r", "x foo y",
		"\u212Aelvin kelvin KELVIN", "ſtraße STRASSE", "\u212Aelvin only", "ſtrange only", "Strange", "BAR", "Ünïcödé ünïcödé", "a.b.c", "a+b", "(paren)",
		"err != nil {", "if err != nil { return err }", "TODO: fix", "todo later", "ToDo", "", "tail without newline",
	}, "\n")
	queries := []string{
		"foo", "bar", "foo bar", "(?i)foo bar", "(?i)foo", "(?i)FOO", "(?i)kelvin", "(?i)strasse", "(?i)ünïcödé",
		"^foo$", "^foo", "foo$", "\\bfoo\\b", "\\Bfoo", "foo\\s*bar", "foo\\sbar", "foo\\nbar", "fo+", "f(o)o",
		"(foo|bar)", "foo|bar", "x?foo", "a\\.b", "a+b", "\\(paren\\)", "err != nil", "(?i)todo", "TODO:?",
		"", "^$", "^", "$", ".", "[^a-z]", "(?s)foo.bar", "\\Afoo", "foo\\z", "\\Atail", "newline\\z",
		"Println\\(\"[A-Z]", "(?i)hello, world", "(?m)^}$", "r{2}", "o{2,}", "(?U)f.*o", "[[:upper:]]{3}",
		"(?i)k", "(?i)s", "é", "(?i)É", "(?i)kelvin only", "(?i)strange only", "(?i)STRANGE ONLY",
		"\\A\\w{3}$", "\\w{3}\\z", "\\A[a-z]{3}\\z", "[fb][oa][or]", "\\s+\\S", "[^x]+y", "(?i)[a-z]{3}$",
		"foo|bar", "(?i)foo|BAR", "TODO|fix|later", "(?i)(todo|fixme)", "(foo|bar)baz|qux", "foo|\\n", "Println|Hello", "^(foo|bar)$",
		"err|", "(?i)kelvin|strange", "foo\\nbar|foo",
	}
	lines := strings.Split(corpus, "\n")
	for _, q := range queries {
		m, err := newMatcher(q)
		if err != nil {
			t.Fatalf("newMatcher(%q): %v", q, err)
		}
		re := regexp.MustCompile(q)
		var want []string
		for i, l := range lines {
			if re.MatchString(l) {
				want = append(want, fmt.Sprintf("%d:%s", i+1, l))
			}
		}
		var got []string
		res := searchBuffer(m, []byte(corpus), len(lines))
		for _, h := range res.hits {
			// searchBuffer drops a final \r from the shown text; compare
			// against the original line.
			got = append(got, fmt.Sprintf("%d:%s", h.line, lines[h.line-1]))
		}
		if !slices.Equal(got, want) || res.count != len(want) {
			t.Errorf("query %q (lits %v pure %v): got %q (count %d), want %q", q, m.lits, m.pure, got, res.count, want)
		}
	}
}

func TestRequiredLiterals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		query string
		lits  []string // compared ignoring case when fold
		fold  bool
		whole bool
	}{
		{"ErrUnexpectedEOF", []string{"ErrUnexpectedEOF"}, false, true},
		{`func \([a-z]+ \*[A-Z][a-zA-Z]*\) Close\(\)`, []string{") Close()"}, false, false},
		{`func \w+Handler\(`, []string{"Handler("}, false, false},
		{"^foo$", []string{"foo"}, false, false},
		{`\bfoo\b`, []string{"foo"}, false, false},
		{"(?i)foo", []string{"foo"}, true, false},
		{"(?i)task", []string{"ta"}, true, false}, // k folds to the Kelvin sign
		{"foo|bar", []string{"foo", "bar"}, false, false},
		{"ErrUnexpectedEOF|ErrShortWrite", []string{"UnexpectedEOF", "ShortWrite"}, false, false},
		{"TODO|FIXME|XXX", []string{"TODO", "FIXME", "XXX"}, false, false},
		{"foo|b", []string{"foo", "b"}, false, false}, // score 1: newMatcher ignores it
		{"foo|", nil, false, false},
		{"foo|[ab]", nil, false, false},
		{"(foo)+bar", []string{"foo"}, false, false},
		{"a.b", []string{"a"}, false, false},
		{"x{3}", []string{"xxx"}, false, true},
		{"(?i)ab(?-i)CDE", []string{"abCDE"}, true, false},
		{"", nil, false, false},
	}
	for _, c := range cases {
		re, err := syntax.Parse(c.query, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		got := requiredLiterals(re.Simplify())
		var texts []string
		fold := false
		for _, l := range got.lits {
			texts = append(texts, string(l.text))
			fold = fold || l.fold
		}
		same := len(texts) == len(c.lits)
		for i := 0; same && i < len(texts); i++ {
			same = texts[i] == c.lits[i] || (c.fold && strings.EqualFold(texts[i], c.lits[i]))
		}
		if !same || fold != c.fold || got.whole != c.whole {
			t.Errorf("requiredLiterals(%q) = %q fold=%v whole=%v; want %q fold=%v whole=%v",
				c.query, texts, fold, got.whole, c.lits, c.fold, c.whole)
		}
	}
}

func TestSearchSpec(t *testing.T) {
	t.Parallel()
	s := NewSearch(nil)
	var schema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(s.Spec().InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if s.Spec().Name != "search" || s.Mutates() || !slices.Equal(schema.Required, []string{"query"}) || len(schema.Properties) != 3 {
		t.Errorf("spec %+v", schema)
	}
	var _ agent.Tool = s
}

func TestGitEnvDropsGitVariables(t *testing.T) {
	t.Setenv("GIT_DIR", "/elsewhere")
	for _, kv := range gitEnv() {
		if strings.HasPrefix(kv, "GIT_DIR=") {
			t.Fatalf("gitEnv kept %s", kv)
		}
	}
	// And the listing is the workspace's own even with GIT_DIR set.
	dir := t.TempDir()
	fxWrite(t, dir, map[string]string{"mine.txt": "x\n"})
	fxGit(t, dir, "init", "-q")
	other := t.TempDir()
	fxGit(t, other, "init", "-q")
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	files, err := fxWorkspace(t, dir).listFiles(context.Background())
	if err != nil || !slices.Equal(files, []string{"mine.txt"}) {
		t.Fatalf("listFiles = %q, %v", files, err)
	}
}
