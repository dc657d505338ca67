//go:build linux

package snapshot

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// gateFixture is a committed tree with a recorded gate: Take, then a first
// Restore (the full check, which records the gate).
// ignoreOthersMounts keeps s's journals from refusing when another
// process of the machine mounts something in this namespace while the
// test runs (counters of which path answered would then be off by one).
func ignoreOthersMounts(s *Snapshot) {
	s.testIgnoreMounts = true
	if s.journal != nil {
		s.journal.ignoreMounts = true
	}
}

func gateFixture(t *testing.T) (string, *Snapshot) {
	t.Helper()
	dir := setup(t, true)
	write(t, dir, "sub/x.txt", "inside\n", 0o644)
	write(t, dir, "sub/deep/y.txt", "deeper\n", 0o644)
	write(t, dir, "ign/keep.log", "ignored dir content\n", 0o644)
	write(t, dir, "onlyign/a.log", "an ignored file in a directory git still looks in\n", 0o644)
	write(t, dir, ".gitignore", "*.log\n/ign/\n", 0o644)
	return dir, armedSnapshot(t, dir)
}

// armedSnapshot takes a snapshot of dir whose gate (and journal) the
// first Restore recorded, aged: the fixture was written a moment ago, so
// all of it is racy (checked by content); a real checkout is older, and
// the times are what the gate compares.
func armedSnapshot(t *testing.T, dir string) *Snapshot {
	t.Helper()
	s, err := Take(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ignoreOthersMounts(s)
	if undone, err := s.Restore(context.Background()); err != nil || undone != nil {
		t.Fatalf("first Restore: %v %v", undone, err)
	}
	if s.gate == nil {
		t.Fatal("the first Restore recorded no gate")
	}
	age(s)
	return s
}

// restoreAgrees restores s after a step and fails unless it undid what
// ref's full (ungated) diff says the step changed.
func restoreAgrees(t *testing.T, step int, s, ref *Snapshot) {
	t.Helper()
	_, want, err := ref.Diff(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	undone, err := s.Restore(context.Background())
	if err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	if changedPaths(undone) != changedPaths(want) {
		t.Fatalf("step %d: Restore undid %s, the full diff says %s", step, changedPaths(undone), changedPaths(want))
	}
}

// age makes every recorded entry old: not racy, and so not compared by
// content (nor, for the journal, pending its comparison after arming).
func age(s *Snapshot) {
	for _, list := range [][]gateEntry{s.gate.files, s.gate.dirs} {
		for i := range list {
			list[i].racy = false
		}
	}
	if s.journal.ok() {
		clear(s.journal.pending)
	}
}

// A clean step costs no git: the gate vouches for the tree.
func TestGateSkipsGitOnACleanStep(t *testing.T) {
	t.Parallel()
	dir, s := gateFixture(t)
	// Reading files, and a file in an ignored directory, change nothing
	// git looks at.
	os.ReadFile(filepath.Join(dir, "a.go"))
	write(t, dir, "ign/more.log", "x\n", 0o644)
	for range 3 {
		if undone, err := s.Restore(context.Background()); err != nil || undone != nil {
			t.Fatalf("clean Restore: %v %v", undone, err)
		}
	}
	if seen(s) != 1 {
		t.Errorf("%d full checks, want 1 (the first step only)", seen(s))
	}
}

// Every change git would see sends Restore the full way and is undone,
// however test code disguised it; what git ignores stays ignored, as before.
func TestGateCatchesEveryChange(t *testing.T) {
	t.Parallel()
	same := func(t *testing.T, dir, name, content string) { // same size, times forged back
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), fi.Mode()); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		check  string // a path whose recorded content must be back
	}{
		{"same size, mtime forged", func(t *testing.T, dir string) {
			same(t, dir, "a.go", "package b\n\nfunc A() int { return 1 }\n")
		}, "a.go"},
		{"deep file", func(t *testing.T, dir string) { same(t, dir, "sub/deep/y.txt", "DEEPER\n") }, "sub/deep/y.txt"},
		{"deleted", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "gone.txt")) }, "gone.txt"},
		{"created", func(t *testing.T, dir string) { write(t, dir, "sub/deep/new.txt", "n\n", 0o644) }, ""},
		{"created dir", func(t *testing.T, dir string) { write(t, dir, "newdir/a/b.txt", "n\n", 0o644) }, ""},
		{"created beside ignored files", func(t *testing.T, dir string) { write(t, dir, "onlyign/new.txt", "n\n", 0o644) }, ""},
		{"mode", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "run.sh"), 0o755) }, "run.sh"},
		{"symlink", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "sub/x.txt"))
			os.Symlink("../a.go", filepath.Join(dir, "sub/x.txt"))
		}, "sub/x.txt"},
		{"dir to symlink", func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "sub"))
			os.Symlink(t.TempDir(), filepath.Join(dir, "sub"))
		}, "sub/deep/y.txt"},
		{"swap", func(t *testing.T, dir string) {
			write(t, dir, "sw1.txt", "one\n", 0o644) // same size as sw2
			os.Rename(filepath.Join(dir, "gone.txt"), filepath.Join(dir, "tmp"))
			os.Rename(filepath.Join(dir, "run.sh"), filepath.Join(dir, "gone.txt"))
			os.Rename(filepath.Join(dir, "tmp"), filepath.Join(dir, "run.sh"))
		}, "run.sh"},
		{"ignore rules", func(t *testing.T, dir string) { same(t, dir, ".gitignore", "*.xyz\n/ign/\n") }, ".gitignore"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, s := gateFixture(t)
			want := ""
			if c.check != "" {
				data, err := os.ReadFile(filepath.Join(dir, c.check))
				if err != nil {
					t.Fatal(err)
				}
				want = string(data)
			}
			c.mutate(t, dir)
			undone, err := s.Restore(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(undone) == 0 || seen(s) != 2 {
				t.Fatalf("undone %+v after %d full checks: the change went unseen", undone, seen(s))
			}
			if c.check != "" {
				if got, err := os.ReadFile(filepath.Join(dir, c.check)); err != nil || string(got) != want {
					t.Errorf("%s = %q %v, want %q back", c.check, got, err, want)
				}
			}
			if d, ch, err := s.Diff(context.Background()); err != nil || d != "" || ch != nil {
				t.Fatalf("after Restore the diff is %q %v %v", d, ch, err)
			}
			// The gate is recorded again: the next clean step is cheap.
			if undone, err := s.Restore(context.Background()); err != nil || undone != nil || seen(s) != 2 {
				t.Errorf("next clean step: %v %v, %d full checks", undone, err, seen(s))
			}
		})
	}
}

// A hard link made outside the tree in one step, written through in the
// next: the file's ctime moves both times, and both steps are caught.
func TestGateCatchesWritesThroughAnOutsideLink(t *testing.T) {
	t.Parallel()
	dir, s := gateFixture(t)
	link := filepath.Join(filepath.Dir(dir), fmt.Sprintf("outside-link-%d", rand.Int()))
	if err := os.Link(filepath.Join(dir, "a.go"), link); err != nil {
		t.Skipf("no hard links here: %v", err) // a different filesystem for the temp dirs
	}
	defer os.Remove(link)
	if _, err := s.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	full := seen(s)
	if full != 2 {
		t.Errorf("the new link went unseen (%d full checks)", full)
	}
	fi, _ := os.Stat(link)
	if err := os.WriteFile(link, []byte("package a\n\nfunc A() int { return 9 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(link, fi.ModTime(), fi.ModTime())
	undone, err := s.Restore(context.Background())
	if err != nil || len(undone) != 1 || undone[0].Path != "a.go" {
		t.Fatalf("write through the outside link: undone %+v, %v", undone, err)
	}
}

// A racy entry (changed within the racy window of the recording) is
// compared by content, not by its times: a change the clock could not
// tell apart is still caught. The test makes the keys equal by hand, as a
// change in the same clock tick would.
func TestGateComparesRacyEntriesByContent(t *testing.T) {
	t.Parallel()
	dir, s := gateFixture(t)
	write(t, dir, "a.go", "package a\n\nfunc A() int { return 2 }\n", 0o644) // a change, restored:
	if _, err := s.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(s.gate.files, func(e gateEntry) bool { return e.path == "a.go" })
	if i < 0 || !s.gate.files[i].racy {
		t.Fatalf("a.go just restored is not racy: %+v", s.gate.files)
	}
	same := "package a\n\nfunc A() int { return 7 }\n"
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(same), 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := lstatKey(dir, "a.go")
	if err != nil {
		t.Fatal(err)
	}
	s.gate.files[i].key = k // the same tick: times equal
	if same, changed, _ := s.gate.check(context.Background(), s); same || !slices.Equal(changed, []string{"a.go"}) {
		t.Fatalf("the gate vouched for a racy file whose content changed (same %v, changed %q)", same, changed)
	}
	// A racy directory whose entries changed with its times equal.
	j := slices.IndexFunc(s.gate.dirs, func(e gateEntry) bool { return e.path == "sub" })
	s.gate.files[i].racy = false
	write(t, dir, "a.go", "package a\n\nfunc A() int { return 1 }\n", 0o644)
	s.gate.files[i].key, _ = lstatKey(dir, "a.go")
	write(t, dir, "sub/new.txt", "n\n", 0o644)
	s.gate.dirs[j].key, _ = lstatKey(dir, "sub")
	s.gate.dirs[j].racy = true
	if same, _, _ := s.gate.check(context.Background(), s); same {
		t.Fatal("the gate vouched for a racy directory whose entries changed")
	}
}

// A FIFO swapped in for a .gitignore is refused as before, never waited on.
func TestGateLetsAFIFOGitignoreBeRefused(t *testing.T) {
	t.Parallel()
	dir, s := gateFixture(t)
	p := filepath.Join(dir, "sub", ".gitignore")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	within(t, 20*time.Second, func() {
		if _, err := s.Restore(context.Background()); !errors.Is(err, ErrUntrustedInput) {
			t.Errorf("Restore with a FIFO .gitignore: %v, want ErrUntrustedInput", err)
		}
	})
}

// Random steps on a small tree: after each, the gated Restore undoes what
// a second, ungated snapshot's full diff says changed, and leaves nothing.
func TestGateAgreesWithTheFullCheck(t *testing.T) {
	t.Parallel()
	dir, s := gateFixture(t)
	ref, err := Take(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	r := rand.New(rand.NewPCG(11, 24))
	names := []string{"a.go", "gone.txt", "run.sh", "sub/x.txt", "sub/deep/y.txt", "sub/deep/z.txt", "n/e/w.txt", "ign/x.log", "x.log", "sub/.gitignore"}
	for step := range 40 {
		for range r.IntN(3) {
			name := names[r.IntN(len(names))]
			p := filepath.Join(dir, filepath.FromSlash(name))
			switch r.IntN(4) {
			case 0:
				os.Remove(p)
			case 1:
				os.Chmod(p, 0o700)
			default:
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, fmt.Appendf(nil, "step %d\n", step), 0o644)
			}
		}
		restoreAgrees(t, step, s, ref)
		if _, after, _ := ref.Diff(context.Background()); len(after) != 0 {
			t.Fatalf("step %d: still changed after Restore: %+v", step, after)
		}
		if s.gate == nil {
			t.Fatalf("step %d: no gate after Restore", step)
		}
	}
	// Most changed steps bring the gate up to date rather than record it
	// whole (a changed .gitignore does record it whole).
	if seen(s) < 20 || s.records > seen(s)/2 {
		t.Errorf("%d full checks, %d whole recordings", seen(s), s.records)
	}
}

// changedPaths lists changes' paths, renames as both sides, sorted.
func changedPaths(cs []Change) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Path)
		if c.OldPath != "" {
			out = append(out, c.OldPath)
		}
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}

// A directory the step created is watched from then on, unless git
// ignores it: a file created in it later is caught; a file in an ignored
// new directory costs no full check (as it costs git nothing).
func TestGateWatchesNewDirectoriesButIgnoredOnes(t *testing.T) {
	t.Parallel()
	dir, s := gateFixture(t)
	ctx := context.Background()
	write(t, dir, "sub/d.log/x.txt", "ignored: the directory matches *.log\n", 0o644)
	write(t, dir, "sub/newdir/a.log", "ignored file, watched directory\n", 0o644)
	if undone, err := s.Restore(ctx); err != nil || undone != nil || seen(s) != 2 {
		t.Fatalf("step 1: %v %v, %d full checks", undone, err, seen(s))
	}
	if s.records != 1 {
		t.Errorf("the gate was recorded whole again (%d recordings), not brought up to date", s.records)
	}
	write(t, dir, "sub/d.log/y.txt", "more ignored\n", 0o644)
	if undone, err := s.Restore(ctx); err != nil || undone != nil || seen(s) != 2 {
		t.Fatalf("step 2 (ignored directory): %v %v, %d full checks", undone, err, seen(s))
	}
	write(t, dir, "sub/newdir/new.txt", "seen\n", 0o644)
	undone, err := s.Restore(ctx)
	if err != nil || len(undone) != 1 || undone[0].Path != "sub/newdir/new.txt" {
		t.Fatalf("step 3 (new file in the new directory): %+v %v", undone, err)
	}
}

// seen counts the changed steps Restore undid: by git, or by the fast path.
func seen(s *Snapshot) int { return s.fullChecks + s.fastRestores }
