package tools

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/gitexec"
)

// Names and pattern pieces for the generated trees: what wildmatch treats
// specially (classes, escapes, stars, "!", "#", spaces, tabs) appears in
// both.
var (
	listNames = []string{"a", "b", "ab", "ba", "abc", "x.go", "y.js", "a.log", "1", "9z", "#h", "!b", "sp ", "t\t",
		"[x]", "A", "B.GO", "build", "lib", "node_modules", "-", "]", "é", "a b", "a?", "*"}
	listPatternAtoms = []string{"a", "b", "ab", "*", "**", "?", "x.go", "*.go", "*.js", "*.log", "[a-c]", "[!a]", "[^b]",
		"[]a]", "[a-]", "[[:digit:]]", "[[:alpha:]]*", "[[:upper:]]", `\#h`, `\!b`, "#h", "build", "lib", "node_modules",
		"é", "a?", `\*`, `\?`, "[x]", `\[x]`, "sp ", `sp\ `, "t\t", "[", "[z-a]", "[[:bogus:]]", "a b", "-", "]", "[:alpha:]"}
)

// listPattern builds one .gitignore line.
func listPattern(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(5) == 0 {
		b.WriteString("!")
	}
	if r.IntN(4) == 0 {
		b.WriteString("/")
	}
	for i := range 1 + r.IntN(3) {
		if i > 0 {
			b.WriteString("/")
		}
		b.WriteString(listPatternAtoms[r.IntN(len(listPatternAtoms))])
	}
	if r.IntN(4) == 0 {
		b.WriteString("/")
	}
	switch r.IntN(12) {
	case 0:
		b.WriteString("  ")
	case 1:
		b.WriteString("\r")
	case 2:
		return "# " + b.String()
	}
	return b.String()
}

// genListTree writes a random tree under dir: files, directories, a few
// symlinks, .gitignore files at several levels, an info/exclude; some files
// are tracked, some of them force-added although ignored.
func genListTree(t *testing.T, r *rand.Rand, dir string) {
	t.Helper()
	runGit(t, dir, "init", "-q")
	var dirs = []string{"."}
	for range 3 + r.IntN(12) {
		parent := dirs[r.IntN(len(dirs))]
		d := filepath.Join(parent, listNames[r.IntN(len(listNames))])
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err == nil {
			dirs = append(dirs, d)
		}
	}
	var files []string
	for range 10 + r.IntN(40) {
		p := filepath.Join(dirs[r.IntN(len(dirs))], listNames[r.IntN(len(listNames))])
		full := filepath.Join(dir, p)
		if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
			continue
		}
		if r.IntN(15) == 0 {
			os.Symlink("x.go", full)
		} else if err := os.WriteFile(full, []byte("x\n"), 0o644); err != nil {
			continue
		}
		files = append(files, p)
	}
	// Track some files before the ignore rules exist, so that some tracked
	// files end up ignored.
	add := []string{"add", "-f", "--"}
	for _, f := range files {
		if r.IntN(3) == 0 {
			add = append(add, f)
		}
	}
	if len(add) > 3 {
		runGit(t, dir, add...)
	}
	for _, d := range dirs {
		if r.IntN(2) == 0 {
			continue
		}
		var lines []string
		for range 1 + r.IntN(6) {
			lines = append(lines, listPattern(r))
		}
		text := strings.Join(lines, "\n")
		if r.IntN(5) == 0 {
			text = "\xef\xbb\xbf" + text
		}
		if r.IntN(3) != 0 {
			text += "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, d, ".gitignore"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r.IntN(2) == 0 {
		excl := listPattern(r) + "\n" + listPattern(r) + "\n"
		if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte(excl), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitexec.Output(context.Background(), gitexec.Options{Dir: dir}, args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return out
}

// gitListing is the reference: git's own listing, as listFiles shapes it.
func gitListing(t *testing.T, dir string) []string {
	t.Helper()
	out, err := gitexec.Run(context.Background(), gitexec.Options{Dir: dir}, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		t.Fatal(err)
	}
	files := splitNUL(out)
	slices.Sort(files)
	files = slices.Compact(files)
	return slices.DeleteFunc(files, isGitPath)
}

// TestOnePassListAgreesWithGit compares the one-pass listing with `git
// ls-files --cached --others --exclude-standard` on generated trees with
// random ignore rules; most trees must take the one-pass way (not fall
// back to git), or the test proves nothing.
func TestOnePassListAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required")
	}
	t.Parallel()
	r := rand.New(rand.NewPCG(24, 7))
	trees := 120
	if s := os.Getenv("MINI_AGENT_LIST_TREES"); s != "" {
		fmt.Sscan(s, &trees)
		r = rand.New(rand.NewPCG(uint64(trees), 99))
	}
	if testing.Short() {
		trees = 30
	}
	fast := 0
	ctx := context.Background()
	for i := range trees {
		dir := t.TempDir()
		genListTree(t, r, dir)
		ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		want := gitListing(t, dir)
		got, err := ws.onePassList(ctx)
		switch {
		case errors.Is(err, errListUnsure):
		case err != nil:
			t.Fatalf("tree %d: %v", i, err)
		default:
			fast++
			got = slices.DeleteFunc(got, isGitPath)
			if !slices.Equal(got, want) {
				t.Errorf("tree %d: one-pass listing differs from git's\n%s", i, listDiff(got, want, dir))
			}
		}
		all, err := ws.listFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(all, want) {
			t.Errorf("tree %d: listFiles differs from git's\n%s", i, listDiff(all, want, dir))
		}
		ws.Close()
	}
	if fast < trees*2/3 {
		t.Errorf("only %d of %d trees took the one-pass listing", fast, trees)
	}
}

func listDiff(got, want []string, dir string) string {
	var b strings.Builder
	for _, f := range got {
		if !slices.Contains(want, f) {
			fmt.Fprintf(&b, "  only one-pass: %q\n", f)
		}
	}
	for _, f := range want {
		if !slices.Contains(got, f) {
			fmt.Fprintf(&b, "  only git:      %q\n", f)
		}
	}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Name() == ".gitignore" || strings.HasSuffix(p, "info/exclude") {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			fmt.Fprintf(&b, "  %s: %q\n", rel, data)
		}
		return nil
	})
	return b.String()
}

// TestOnePassListQuirks pins git's matching corners the walk must share,
// each in its own directory: a "/" inside a class, a "**" right after a
// literal prefix, trailing "/**", "**/" matching nothing, escaped and
// trailing spaces, tabs, classes with "]", "!", "^", POSIX names and bad
// ones, negation under an excluded directory, a CRLF file without a final
// newline, a BOM, a NUL.
func TestOnePassListQuirks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ignore string
		files  []string
	}{
		{"/[/[[:alpha:]]*/a b\n", []string{"[x]/a b", "a/a b", "x/y/a b"}},
		{"/foo**/bar\n", []string{"foo/x/bar", "foox/bar", "foo/bar", "fo/bar"}},
		{"/d/**\n", []string{"d/x", "d/y/z", "dd"}},
		{"**/m\n/n/**/o\n", []string{"m", "x/m", "n/o", "n/p/q/o", "no"}},
		{"sp\\ \nt\t\nu  \n", []string{"sp ", "t\t", "u", "u  "}},
		{"[]a]\n[!b]c\n[^d]e\n[[:digit:]]\n[[:bogus:]]\n[a-]z\n", []string{"]", "a", "bc", "xc", "de", "ye", "7", "b", "-z", "az", "bz"}},
		{"/ex/\n!/ex/keep\n", []string{"ex/keep", "ex/other"}},
		{"\xef\xbb\xbfbom\r\nlast\r", []string{"bom", "last", "last\r"}},
		{"nul\x00ignored\n*.o\n", []string{"nul", "nulx", "a.o"}},
		{"\\#h\n\\!b\n!\\!c\n#x\n", []string{"#h", "!b", "!c", "#x"}},
		{"a/**/b/\n", []string{"a/b/f", "a/x/y/b/f", "a/c/b"}},
	}
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	for i, c := range cases {
		base := filepath.Join(dir, fmt.Sprintf("c%d", i))
		for _, f := range c.files {
			p := filepath.Join(base, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(base, ".gitignore"), []byte(c.ignore), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	got, err := ws.onePassList(context.Background())
	if err != nil {
		t.Fatalf("one-pass listing refused: %v", err)
	}
	want := gitListing(t, dir)
	if !slices.Equal(got, want) {
		t.Errorf("one-pass listing differs from git's\n%s", listDiff(got, want, dir))
	}
	// Not all kept, not all dropped: the cases bite.
	if len(want) < 15 || len(want) > 45 {
		t.Errorf("git lists %d of the files: %q", len(want), want)
	}
}

// A configuration that changes matching (core.ignoreCase, even from an
// included file) or moves the work tree sends the listing back to git,
// whose answer stays the one given.
func TestOnePassListLeavesConfigChangesToGit(t *testing.T) {
	t.Parallel()
	for name, set := range map[string][][]string{
		"ignorecase":          {{"config", "core.ignorecase", "true"}},
		"included ignorecase": {{"config", "--file", "extra.cfg", "core.ignoreCase", "yes"}, {"config", "include.path", "extra.cfg"}},
		"ignorecase false":    {{"config", "core.ignorecase", "false"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			runGit(t, dir, "init", "-q")
			for _, f := range []string{"A.LOG", "b.txt", "sub/C.Log"} {
				p := filepath.Join(dir, f)
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte("x\n"), 0o644)
			}
			os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n"), 0o644)
			for _, args := range set {
				if args[1] == "--file" {
					args = append([]string{args[0], args[1], filepath.Join(dir, ".git", args[2])}, args[3:]...)
				}
				runGit(t, dir, args...)
			}
			ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			_, err = ws.onePassList(context.Background())
			if wantUnsure := name != "ignorecase false"; errors.Is(err, errListUnsure) != wantUnsure {
				t.Errorf("one-pass listing: %v, want unsure %v", err, wantUnsure)
			}
			got, err := ws.listFiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want := gitListing(t, dir); !slices.Equal(got, want) {
				t.Errorf("listFiles %q, git %q", got, want)
			}
		})
	}
}
