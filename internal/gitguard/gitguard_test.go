//go:build unix

package gitguard

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q", "-b", "main")
	gitT(t, dir, "add", "a.txt")
	gitT(t, dir, "commit", "-qm", "init")
	return dir
}

// state is a listing of .git without objects/ and logs/: path, type, mode
// and content digest.
func state(t *testing.T, gitDir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(gitDir, p)
		if d.IsDir() && (rel == "logs" || rel == "objects") {
			if rel == "objects" {
				// objects/info is guarded.
				if fi, err := os.Lstat(filepath.Join(p, "info")); err == nil {
					lines = append(lines, fmt.Sprintf("objects/info %v", fi.Mode()))
				}
			}
			return fs.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		line := fmt.Sprintf("%s %v", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func write(t *testing.T, p, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// What hostile test code does to .git is found and undone, and the state
// afterwards is the recorded one, byte for byte.
func TestCheckUndoesEveryChange(t *testing.T) {
	dir := repo(t)
	gitDir := filepath.Join(dir, ".git")
	before := state(t, gitDir)
	g, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := g.Check(); err != nil || len(cs) != 0 {
		t.Fatalf("no change yet: %v %v", cs, err)
	}
	// A filter planted as test code would, a hook, attributes, HEAD moved,
	// a FIFO index, a new ref, a hooks subdirectory, alternates.
	gitT(t, dir, "config", "filter.x.clean", "touch /tmp/pwned; cat")
	gitT(t, dir, "config", "core.fsmonitor", "touch /tmp/pwned")
	write(t, filepath.Join(gitDir, "hooks", "pre-commit"), "#!/bin/sh\ntouch /tmp/pwned\n", 0o755)
	write(t, filepath.Join(gitDir, "hooks", "sub", "x"), "x", 0o755)
	write(t, filepath.Join(gitDir, "info", "attributes"), "* filter=x\n", 0o644)
	write(t, filepath.Join(gitDir, "HEAD"), "ref: refs/heads/evil\n", 0o644)
	write(t, filepath.Join(gitDir, "refs", "heads", "evil"), strings.Repeat("0", 40)+"\n", 0o644)
	write(t, filepath.Join(gitDir, "objects", "info", "alternates"), "/tmp/elsewhere\n", 0o644)
	os.Remove(filepath.Join(gitDir, "index"))
	if err := syscall.Mkfifo(filepath.Join(gitDir, "index"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(gitDir, "description")); err != nil {
		t.Fatal(err)
	}
	cs, err := g.Check()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Change{}
	for _, c := range cs {
		got[c.Path] = c
		if !c.Restored {
			t.Errorf("not undone: %v", c)
		}
	}
	for p, change := range map[string]string{".git/config": "modified", ".git/hooks/pre-commit": "added", ".git/hooks/sub": "added",
		".git/info/attributes": "added", ".git/HEAD": "modified", ".git/refs/heads/evil": "added", ".git/index": "type changed",
		".git/objects/info/alternates": "added", ".git/description": "removed"} {
		if got[p].Change != change {
			t.Errorf("%s: change %q, want %q (all: %v)", p, got[p].Change, change, cs)
		}
	}
	if after := state(t, gitDir); after != before {
		t.Fatalf(".git differs after Check:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// hooks replaced by a symlink to a directory of the attacker's.
	evil := t.TempDir()
	write(t, filepath.Join(evil, "pre-commit"), "#!/bin/sh\n", 0o755)
	os.RemoveAll(filepath.Join(gitDir, "hooks"))
	if err := os.Symlink(evil, filepath.Join(gitDir, "hooks")); err != nil {
		t.Fatal(err)
	}
	if cs, err := g.Check(); err != nil || len(cs) == 0 {
		t.Fatalf("hooks symlink: %v %v", cs, err)
	}
	if after := state(t, gitDir); after != before {
		t.Fatalf(".git differs after the hooks symlink was undone:\n%s\nwant\n%s", after, before)
	}
	if _, err := os.Stat(filepath.Join(evil, "pre-commit")); err != nil {
		t.Fatal("the guard deleted through the symlink, outside .git")
	}
}

// A workspace that had no repository gets none from test code.
func TestCheckRemovesAPlantedRepository(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	g, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ".git", "config"), "[core]\n\tfsmonitor = touch /tmp/pwned\n", 0o644)
	cs, err := g.Check()
	if err != nil || len(cs) != 1 || cs[0].Path != ".git" || !cs[0].Restored {
		t.Fatalf("changes %v, %v", cs, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		t.Fatal("the planted .git is still there")
	}
}
