package diffcheck

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// gitDiff makes the real diff git produces between two trees: before is
// committed in a scratch repository, after replaces it in the index, and
// `git diff --cached -M --binary --full-index` gives the diff in the form a
// bundle stores (snapshot's diff-tree -p --binary -M --full-index). The Source reads a
// copy of before and the repository (after).
func gitDiff(t *testing.T, before, after map[string]string) (string, Dirs) {
	t.Helper()
	root := t.TempDir()
	repo, old := filepath.Join(root, "repo"), filepath.Join(root, "before")
	writeTree(t, repo, before)
	writeTree(t, old, before)
	git(t, repo, "init", "-q")
	git(t, repo, "add", "-A")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "before")
	for p := range before {
		if _, ok := after[p]; !ok {
			if err := os.Remove(filepath.Join(repo, filepath.FromSlash(p))); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeTree(t, repo, after)
	git(t, repo, "add", "-A")
	return git(t, repo, "diff", "--cached", "-M", "--binary", "--full-index", "--no-color", "HEAD"), Dirs{BeforeDir: old, AfterDir: repo}
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func checkNames(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Check)
	}
	slices.Sort(out)
	return out
}
