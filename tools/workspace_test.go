package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/gitexec"
)

// fxWrite creates files (slash paths relative to dir) with their contents.
func fxWrite(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fxSymlink creates link (relative to dir) pointing at target, verbatim.
func fxSymlink(t *testing.T, dir, target, link string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(link))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// fxGit runs git in dir with a fixed identity and no user configuration.
func fxGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// fxWorkspace opens dir as a workspace with a private runs dir, closed at
// the end of the test.
func fxWorkspace(t *testing.T, dir string) *Workspace {
	t.Helper()
	ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// sandboxFixture builds a workspace next to an "outside" directory, with
// symlinks of every kind. It returns the workspace and the outside dir.
func sandboxFixture(t *testing.T) (*Workspace, string) {
	t.Helper()
	base := t.TempDir()
	dir, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	fxWrite(t, outside, map[string]string{"secret.txt": "TOP SECRET\n"})
	fxWrite(t, dir, map[string]string{
		"a.txt":                    "a\n",
		"sub/b.txt":                "b\n",
		".github/workflows/ci.yml": "on: push\n",
		".env":                     "X=1\n",
		"config/.env.local":        "Y=2\n",
		"nested/.git/config":       "[core]\n",
	})
	fxGit(t, dir, "init", "-q")
	for link, target := range map[string]string{
		"link_file":    "../outside/secret.txt",
		"link_dir":     "../outside",
		"abs_file":     filepath.Join(outside, "secret.txt"),
		"abs_dir":      outside,
		"git_dir_link": ".git",
		"git_cfg_link": ".git/config",
		"inner_link":   "sub/b.txt",
		"sub/up":       "..",
		"sub/up2":      "../..",
		"loop1":        "loop2",
		"loop2":        "loop1",
		"wf_link":      ".github/workflows/ci.yml",
		"sub/deep":     "../sub/../../outside/secret.txt",
	} {
		fxSymlink(t, dir, target, link)
	}
	return fxWorkspace(t, dir), outside
}

func TestSandboxResolveAndCheckWrite(t *testing.T) {
	t.Parallel()
	ws, _ := sandboxFixture(t)
	const (
		ok        = "ok"
		outside   = "outside"
		forbidden = "forbidden"
		invalid   = "invalid"
	)
	cases := []struct {
		path      string
		read      string // outcome of Resolve
		realPath  string // Resolve's answer when ok
		write     string // outcome of CheckWrite
		writeReal string
	}{
		{"a.txt", ok, "a.txt", ok, "a.txt"},
		{"./sub//b.txt", ok, "sub/b.txt", ok, "sub/b.txt"},
		{"new/file.go", ok, "new/file.go", ok, "new/file.go"},
		{"..", outside, "", outside, ""},
		{"../outside/secret.txt", outside, "", outside, ""},
		{"sub/../../outside/secret.txt", outside, "", outside, ""},
		{"sub/../a.txt", outside, "", outside, ""}, // '..' is refused even when it stays inside
		{"/etc/passwd", outside, "", outside, ""},
		{`C:\Windows\win.ini`, outside, "", outside, ""},
		{`..\outside\secret.txt`, outside, "", outside, ""},
		{"link_file", outside, "", outside, ""},
		{"link_dir/secret.txt", outside, "", outside, ""},
		{"link_dir", outside, "", outside, ""},
		{"abs_file", outside, "", outside, ""},
		{"abs_dir/secret.txt", outside, "", outside, ""},
		{"sub/up2/outside/secret.txt", outside, "", outside, ""},
		{"sub/deep", outside, "", outside, ""},
		{".git/config", forbidden, "", forbidden, ""},
		{".git", forbidden, "", forbidden, ""},
		{".GIT/config", forbidden, "", forbidden, ""},
		{"nested/.git/config", forbidden, "", forbidden, ""},
		{"git_dir_link/config", forbidden, "", forbidden, ""},
		{"git_cfg_link", forbidden, "", forbidden, ""},
		{"git_dir_link", forbidden, "", forbidden, ""},
		{"inner_link", ok, "sub/b.txt", ok, "sub/b.txt"},
		{"sub/up/a.txt", ok, "a.txt", ok, "a.txt"},
		{".github/workflows/ci.yml", ok, ".github/workflows/ci.yml", forbidden, ""},
		{"wf_link", ok, ".github/workflows/ci.yml", forbidden, ""},
		{".env", ok, ".env", forbidden, ""},
		{"config/.env.local", ok, "config/.env.local", forbidden, ""},
		{".", ok, ".", invalid, ""},
		{"", invalid, "", invalid, ""},
		{"a\x00b", invalid, "", invalid, ""},
		{"loop1", invalid, "", invalid, ""},
	}
	classify := func(err error) string {
		switch {
		case err == nil:
			return ok
		case errors.Is(err, ErrOutside):
			return outside
		case errors.Is(err, ErrForbidden):
			return forbidden
		default:
			return invalid
		}
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.path, "/", "|"), func(t *testing.T) {
			t.Parallel()
			real, err := ws.Resolve(c.path)
			if got := classify(err); got != c.read || (got == ok && real != c.realPath) {
				t.Errorf("Resolve(%q) = %q, %v (%s); want %s %q", c.path, real, err, got, c.read, c.realPath)
			}
			real, err = ws.CheckWrite(c.path)
			if got := classify(err); got != c.write || (got == ok && real != c.writeReal) {
				t.Errorf("CheckWrite(%q) = %q, %v (%s); want %s %q", c.path, real, err, got, c.write, c.writeReal)
			}
		})
	}
}

// TestSandboxRootRefusesEscapes checks the second line of defence: even a
// path Resolve was never asked about cannot leave the os.Root.
func TestSandboxRootRefusesEscapes(t *testing.T) {
	t.Parallel()
	ws, _ := sandboxFixture(t)
	for _, p := range []string{"link_file", "link_dir/secret.txt", "abs_file", "abs_dir/secret.txt", "../outside/secret.txt", "sub/deep"} {
		if f, err := ws.Root().Open(p); err == nil {
			f.Close()
			t.Errorf("Root().Open(%q) succeeded; want refusal", p)
		}
	}
}

func TestOpenWorkspaceRefusesRunsDirInside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: filepath.Join(dir, "runs")}); err == nil {
		ws.Close()
		t.Fatal("runs dir inside the workspace was accepted")
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"tools/read_file.go":        "",
		"tools/read_file_test.go":   "",
		"tools/search.go":           "",
		"agent/protocol.go":         "",
		"README.md":                 "",
		"internal/glob/glob.go":     "",
		"build/out.go":              "",
		".gitignore":                "build/\n",
		".git/config":               "",
		"cmd/mini-agent/main.go":    "",
		"docs/guide/install.md":     "",
		"docs/guide/installing.txt": "",
	}
	for i := range 8 {
		files[fmt.Sprintf("pkg%d/util.go", i)] = ""
	}
	fxWrite(t, dir, files)
	ws := fxWorkspace(t, dir)
	cases := []struct {
		path      string
		wantFirst string // "" means no suggestion at all
		wantIn    []string
		wantOut   []string
	}{
		{path: "read_file.go", wantFirst: "tools/read_file.go"},
		{path: "src/tools/read_file.go", wantFirst: "tools/read_file.go"},
		{path: "tools/readfile.go", wantFirst: "tools/read_file.go"},
		{path: "readme.md", wantFirst: "README.md"},
		{path: "agent/protocl.go", wantFirst: "agent/protocol.go"},
		{path: "cmd/miniagent/main.go", wantFirst: "cmd/mini-agent/main.go"},
		{path: "docs/guide/instal.md", wantFirst: "docs/guide/install.md"},
		{path: "zzzzqqqq.xyz", wantFirst: ""},
		{path: "out.go", wantOut: []string{"build/out.go"}}, // ignored
		{path: "config", wantOut: []string{".git/config"}},  // never .git
		{path: "util.go", wantIn: []string{"pkg0/util.go"}}, // 8 candidates, capped
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			got := ws.Suggest(c.path)
			if len(got) > maxSuggestions {
				t.Errorf("Suggest(%q) returned %d paths, more than %d", c.path, len(got), maxSuggestions)
			}
			if c.wantFirst == "" && c.wantIn == nil && c.wantOut == nil && len(got) != 0 {
				t.Errorf("Suggest(%q) = %q, want nothing", c.path, got)
			}
			if c.wantFirst != "" && (len(got) == 0 || got[0] != c.wantFirst) {
				t.Errorf("Suggest(%q) = %q, want %q first", c.path, got, c.wantFirst)
			}
			for _, w := range c.wantIn {
				if !slices.Contains(got, w) {
					t.Errorf("Suggest(%q) = %q, want it to contain %q", c.path, got, w)
				}
			}
			for _, w := range c.wantOut {
				if slices.Contains(got, w) {
					t.Errorf("Suggest(%q) = %q, must not contain %q", c.path, got, w)
				}
			}
		})
	}
	if got := ws.Suggest("util.go"); len(got) != maxSuggestions {
		t.Errorf("Suggest(util.go) gave %d paths, want the cap %d: %q", len(got), maxSuggestions, got)
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b  string
		limit int
		want  int
	}{
		{"", "", 3, 0},
		{"abc", "abc", 3, 0},
		{"kitten", "sitting", 5, 3},
		{"flaw", "lawn", 5, 2},
		{"abc", "", 5, 3},
		{"abcdef", "uvwxyz", 2, 3}, // over the limit: limit+1
		{"a", "abcdefgh", 2, 3},
	}
	for _, c := range cases {
		if got := editDistance(c.a, c.b, c.limit); got != c.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}

// A git planted earlier on PATH after start-up (test code writing
// ~/.local/bin/git) is never run by search: git was resolved once, and
// the planted one would have received the harness's environment.
func TestSearchNeverRunsAGitPlantedOnPath(t *testing.T) {
	if err := gitexec.Init(); err != nil { // what main does first
		t.Fatal(err)
	}
	dir := t.TempDir()
	fxWrite(t, dir, map[string]string{"a.txt": "needle\n"})
	fxGit(t, dir, "init", "-q")
	bin := t.TempDir()
	canary := filepath.Join(t.TempDir(), "planted-git-ran")
	fxWrite(t, bin, map[string]string{"git": "#!/bin/sh\nenv > '" + canary + "'\nexit 1\n"})
	if err := os.Chmod(filepath.Join(bin, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	res, err := NewSearch(fxWorkspace(t, dir)).Execute(context.Background(), json.RawMessage(`{"query":"needle"}`))
	if err != nil || !strings.Contains(res.Text, "a.txt:1:") {
		t.Fatalf("search: %+v %v", res, err)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("search ran the git planted on PATH")
	}
}
