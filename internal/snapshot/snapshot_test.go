package snapshot

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, dir, name, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func setup(t *testing.T, withGit bool) string {
	dir := t.TempDir()
	write(t, dir, "a.go", "package a\n\nfunc A() int { return 1 }\n", 0o644)
	write(t, dir, "gone.txt", "bye\n", 0o644)
	write(t, dir, "old/name.txt", "moving file with enough content to be detected as a rename\nline two\nline three\n", 0o644)
	write(t, dir, "run.sh", "echo hi\n", 0o644)
	write(t, dir, ".gitignore", "*.log\n", 0o644)
	write(t, dir, "preexisting-untracked.txt", "was here before\n", 0o644)
	if withGit {
		run(t, dir, "git", "init", "-q")
		run(t, dir, "git", "add", "a.go", "gone.txt", "old/name.txt", "run.sh", ".gitignore")
		run(t, dir, "git", "commit", "-qm", "init")
	}
	return dir
}

func mutate(t *testing.T, dir string) {
	write(t, dir, "a.go", "package a\n\nfunc A() int { return 2 }\n", 0o644)
	write(t, dir, "new/b.go", "package new\n", 0o644)
	write(t, dir, "build.log", "ignored\n", 0o644)
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "old/name.txt"), filepath.Join(dir, "new/name.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestDiffRecordsOnlyTheRunsChanges(t *testing.T) {
	t.Parallel()
	for _, withGit := range []bool{true, false} {
		name := "shadow"
		if withGit {
			name = "git"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, withGit)
			var statusBefore string
			if withGit {
				statusBefore = run(t, dir, "git", "status", "--porcelain")
			}
			ctx := context.Background()
			s, err := Take(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if d, ch, err := s.Diff(ctx); err != nil || d != "" || ch != nil {
				t.Fatalf("diff before any change = %q %v %v", d, ch, err)
			}
			mutate(t, dir)
			diff, changes, err := s.Diff(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]Change{}
			for _, c := range changes {
				if c.Status != "deleted" {
					// The diff's new side is the file's bytes.
					data, err := os.ReadFile(filepath.Join(dir, c.Path))
					if err != nil {
						t.Fatal(err)
					}
					if err := s.Verify(c, data); err != nil {
						t.Error(err)
					}
					if err := s.Verify(c, append(data, 'x')); err == nil {
						t.Errorf("%s: Verify accepted other content", c.Path)
					}
				}
				c.Blob = ""
				got[c.Path] = c
			}
			want := map[string]Change{
				"a.go":         {Path: "a.go", Status: "modified", Mode: "100644"},
				"new/b.go":     {Path: "new/b.go", Status: "added", Mode: "100644"},
				"gone.txt":     {Path: "gone.txt", Status: "deleted", Mode: "100644"},
				"new/name.txt": {Path: "new/name.txt", OldPath: "old/name.txt", Status: "renamed", Mode: "100644"},
				"run.sh":       {Path: "run.sh", Status: "modified", Mode: "100755"},
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("changes = %+v\nwant %+v", got, want)
			}
			if strings.Contains(diff, "build.log") || strings.Contains(diff, "preexisting-untracked") {
				t.Fatalf("diff has ignored or pre-existing files:\n%s", diff)
			}
			files, _, err := gitdiff.Parse(strings.NewReader(diff))
			if err != nil {
				t.Fatalf("go-gitdiff cannot parse the diff: %v", err)
			}
			var names []string
			for _, f := range files {
				n := f.NewName
				if f.IsDelete {
					n = f.OldName
				}
				names = append(names, n)
			}
			sort.Strings(names)
			if !reflect.DeepEqual(names, []string{"a.go", "gone.txt", "new/b.go", "new/name.txt", "run.sh"}) {
				t.Fatalf("files in diff = %v", names)
			}
			if withGit {
				// The user's index is untouched: nothing staged by the snapshot.
				if staged := run(t, dir, "git", "diff", "--cached", "--name-only"); staged != "" {
					t.Fatalf("snapshot staged files: %q", staged)
				}
				if statusBefore == "" {
					t.Fatal("expected untracked file in status")
				}
			} else if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
				t.Fatal("shadow snapshot created .git in the workspace")
			}
		})
	}
}
