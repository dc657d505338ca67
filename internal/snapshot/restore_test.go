//go:build unix

package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Restore undoes what a run did: modified, added, deleted files, a mode
// change, and a directory swapped for a symlink out of the work tree
// (never written through).
func TestRestorePutsTheWorkTreeBack(t *testing.T) {
	t.Parallel()
	for _, withGit := range []bool{true, false} {
		dir := setup(t, withGit)
		write(t, dir, "sub/x.txt", "inside\n", 0o644)
		ctx := context.Background()
		s, err := Take(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		outside := t.TempDir()
		mutate(t, dir)
		write(t, dir, ".git/hooks/ignored-by-snapshot", "x", 0o755) // .git is the guard's, not the snapshot's
		if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
			t.Fatal(err)
		}
		undone, err := s.Restore(ctx)
		if err != nil {
			t.Fatalf("git %v: %v", withGit, err)
		}
		if len(undone) < 6 {
			t.Errorf("git %v: undone %+v", withGit, undone)
		}
		if d, ch, err := s.Diff(ctx); err != nil || d != "" || ch != nil {
			t.Fatalf("git %v: after Restore the diff is %q %v %v", withGit, d, ch, err)
		}
		for name, want := range map[string]string{"a.go": "package a\n\nfunc A() int { return 1 }\n", "gone.txt": "bye\n", "sub/x.txt": "inside\n",
			"old/name.txt": "moving file with enough content to be detected as a rename\nline two\nline three\n"} {
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
				t.Errorf("git %v: %s = %q, %v", withGit, name, got, err)
			}
		}
		if fi, err := os.Lstat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("git %v: run.sh mode %v %v", withGit, fi.Mode(), err)
		}
		for _, gone := range []string{"new/b.go", "new/name.txt"} {
			if _, err := os.Lstat(filepath.Join(dir, gone)); err == nil {
				t.Errorf("git %v: %s is still there", withGit, gone)
			}
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("git %v: Restore wrote through the symlink, outside the work tree: %v", withGit, ents)
		}
		// build.log is ignored: not the snapshot's to undo.
		if _, err := os.Stat(filepath.Join(dir, "build.log")); err != nil {
			t.Errorf("git %v: an ignored file was touched: %v", withGit, err)
		}
	}
}

// A step hides files behind an ignore rule of its own: a new
// junk/.gitignore naming junk/x.txt, and a line added to the recorded
// .gitignore naming extra.txt. Undoing the rules makes the files visible
// to git, and they are the step's too: Restore removes them, whether the
// gate was recorded (a second step) or not, and the tree is as recorded.
func TestRestoreRemovesFilesAnUndoneIgnoreRuleHid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := setup(t, true)
	s, err := Take(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for step := range 3 {
		write(t, dir, "junk/.gitignore", "x.txt\n", 0o644)
		write(t, dir, "junk/x.txt", "hidden\n", 0o644)
		write(t, dir, ".gitignore", "*.log\nextra.txt\n", 0o644)
		write(t, dir, "extra.txt", "hidden too\n", 0o644)
		if _, err := s.Restore(ctx); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for _, gone := range []string{"junk/.gitignore", "junk/x.txt", "extra.txt"} {
			if _, err := os.Lstat(filepath.Join(dir, gone)); err == nil {
				t.Errorf("step %d: %s is still there", step, gone)
			}
		}
		if d, ch, err := s.Diff(ctx); err != nil || d != "" || ch != nil {
			t.Fatalf("step %d: after Restore the diff is %q %v %v", step, d, ch, err)
		}
		if undone, err := s.Restore(ctx); err != nil || undone != nil {
			t.Fatalf("step %d: a clean step after Restore undid %+v, %v", step, undone, err)
		}
	}
}
