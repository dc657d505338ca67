//go:build linux

package snapshot

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// journalled asserts that every gate check since the fixture came from
// the journal: no pass lstat()ed every entry, no journal was armed whole
// again.
func journalled(t *testing.T, s *Snapshot, what string) {
	t.Helper()
	if s.statPasses != 0 || s.arms != 1 || !s.journal.ok() {
		t.Errorf("%s: %d full stat passes, %d whole armings (journal healthy %v, %q), want 0 and 1",
			what, s.statPasses, s.arms, s.journal.ok(), s.journal.why)
	}
}

// A clean step is answered by the journal: no git, and no lstat of every
// entry.
func TestJournalAnswersACleanStep(t *testing.T) {
	t.Parallel()
	dir, s := gateFixture(t)
	os.ReadFile(filepath.Join(dir, "a.go"))
	write(t, dir, "ign/more.log", "x\n", 0o644) // ignored: neither git nor the gate looks
	for range 3 {
		if undone, err := s.Restore(context.Background()); err != nil || undone != nil {
			t.Fatalf("clean Restore: %v %v", undone, err)
		}
	}
	if seen(s) != 1 || s.journalChecks != 3 {
		t.Errorf("%d full checks, %d journal checks; want 1 and 3", seen(s), s.journalChecks)
	}
	journalled(t, s, "clean steps")
}

// Every way of changing a recorded entry is an event the journal sees,
// including those no directory watch reports: a write through a hard link
// outside the work tree, a write through a shared mapping whose fd was
// closed before the write.
func TestJournalCatchesEveryChange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		check  string // a path whose recorded content must be back
	}{
		{"rename over", func(t *testing.T, dir string) {
			write(t, dir, "sub/tmp", "swapped in\n", 0o644)
			if err := os.Rename(filepath.Join(dir, "sub/tmp"), filepath.Join(dir, "sub/x.txt")); err != nil {
				t.Fatal(err)
			}
		}, "sub/x.txt"},
		{"chmod", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "run.sh"), 0o755) }, "run.sh"},
		{"truncate", func(t *testing.T, dir string) { os.Truncate(filepath.Join(dir, "a.go"), 0) }, "a.go"},
		{"new file in a new directory", func(t *testing.T, dir string) { write(t, dir, "sub/deep/n1/n2/f.txt", "n\n", 0o644) }, ""},
		{"deleted directory", func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, "sub")) }, "sub/deep/y.txt"},
		{"mmap write", func(t *testing.T, dir string) { mmapWrite(t, filepath.Join(dir, "sub/deep/y.txt"), "D") }, "sub/deep/y.txt"},
		{"times forged back", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "a.go")
			fi, _ := os.Stat(p)
			os.WriteFile(p, []byte("package a\n\nfunc A() int { return 5 }\n"), 0o644)
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, "a.go"},
		{"directory renamed away and replaced", func(t *testing.T, dir string) {
			// The copy's files are new inodes no watch stands for, and
			// the move sends no event about what sub held.
			if out, err := exec.Command("cp", "-a", filepath.Join(dir, "sub"), filepath.Join(dir, "sub2")).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			write(t, dir, "sub2/deep/y.txt", "DEEPER\n", 0o644)
			os.Rename(filepath.Join(dir, "sub"), filepath.Join(t.TempDir(), "moved"))
			os.Rename(filepath.Join(dir, "sub2"), filepath.Join(dir, "sub"))
		}, "sub/deep/y.txt"},
		{"another process", func(t *testing.T, dir string) {
			cmd := exec.Command("sh", "-c", `printf 'other\n' > sub/x.txt && touch -d @1 sub/x.txt`)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}, "sub/x.txt"},
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
			restoredOnce(t, s, dir, c.check, want)
			journalled(t, s, c.name)
		})
	}
}

// restoredOnce runs a changed step's Restore and the clean step after it.
func restoredOnce(t *testing.T, s *Snapshot, dir, check, want string) {
	t.Helper()
	ctx := context.Background()
	full := seen(s)
	undone, err := s.Restore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(undone) == 0 || seen(s) != full+1 {
		t.Fatalf("undone %+v after %d full checks: the change went unseen", undone, seen(s))
	}
	if check != "" {
		if got, err := os.ReadFile(filepath.Join(dir, check)); err != nil || string(got) != want {
			t.Errorf("%s = %q %v, want %q back", check, got, err, want)
		}
	}
	if d, ch, err := s.Diff(ctx); err != nil || d != "" || ch != nil {
		t.Fatalf("after Restore the diff is %q %v %v", d, ch, err)
	}
	if undone, err := s.Restore(ctx); err != nil || undone != nil || seen(s) != full+1 {
		t.Errorf("next clean step: %v %v, %d full checks", undone, err, seen(s))
	}
}

// mmapWrite maps name shared, closes the fd, then writes the first byte
// through the mapping: no write(2), no IN_MODIFY; the open file goes when
// the mapping does (IN_CLOSE_WRITE).
func mmapWrite(t *testing.T, name, b string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	m, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	copy(m, b)
	if err := syscall.Munmap(m); err != nil {
		t.Fatal(err)
	}
}

// A hard link made outside the work tree before the journal was armed,
// then written through: the directory watches see nothing, the file's own
// inode watch does. Twice, so the watch survives the restore.
func TestJournalCatchesWritesThroughAnOutsideLink(t *testing.T) {
	t.Parallel()
	dir := setup(t, true)
	outside := t.TempDir()
	link := filepath.Join(outside, "a-link")
	if err := os.Link(filepath.Join(dir, "a.go"), link); err != nil {
		t.Skipf("no hard links between temp dirs here: %v", err)
	}
	s, err := Take(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ignoreOthersMounts(s)
	if _, err := s.Restore(context.Background()); err != nil { // records the gate, arms the journal
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "a.go"))
	for i := range 2 {
		// The link still names the recorded inode only the first time:
		// Restore writes a new file, so write the new one's link again.
		if i == 1 {
			os.Remove(link)
			if err := os.Link(filepath.Join(dir, "a.go"), link); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Restore(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		age(s) // so that only an event can tell
		f, err := os.OpenFile(link, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte("PACKAGE"), 0)
		f.Close()
		undone, err := s.Restore(context.Background())
		if err != nil || len(undone) != 1 || undone[0].Path != "a.go" {
			t.Fatalf("write %d through the outside link: undone %+v, %v", i, undone, err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(got) != string(want) {
			t.Fatalf("a.go = %q, want %q back", got, want)
		}
	}
	if s.statPasses != 0 {
		t.Errorf("%d full stat passes: the journal did not answer (%q)", s.statPasses, s.journal.why)
	}
}

// An unhealthy journal (here a simulated queue overflow) sends the check
// to the full stat pass, which still sees the change; the journal is then
// armed again and answers the next step.
func TestJournalFallsBackWhenUnhealthy(t *testing.T) {
	t.Parallel()
	for _, changed := range []bool{false, true} {
		t.Run(fmt.Sprint("changed=", changed), func(t *testing.T) {
			t.Parallel()
			dir, s := gateFixture(t)
			once := true
			s.journal.testOverflow = func() bool { o := once; once = false; return o }
			want, _ := os.ReadFile(filepath.Join(dir, "a.go"))
			if changed {
				os.Truncate(filepath.Join(dir, "a.go"), 3)
			}
			undone, err := s.Restore(context.Background())
			if err != nil || (len(undone) == 1) != changed {
				t.Fatalf("Restore after an overflow: %+v %v", undone, err)
			}
			if s.statPasses != 1 {
				t.Errorf("%d full stat passes, want 1", s.statPasses)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(got) != string(want) {
				t.Errorf("a.go = %q, want %q", got, want)
			}
			if !s.journal.ok() || s.arms != 2 {
				t.Fatalf("not armed again: %d armings, healthy %v", s.arms, s.journal.ok())
			}
			os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
			if undone, err := s.Restore(context.Background()); err != nil || len(undone) != 1 {
				t.Fatalf("the re-armed journal missed a change: %+v %v", undone, err)
			}
			if s.statPasses != 1 {
				t.Errorf("the re-armed journal did not answer: %d full stat passes", s.statPasses)
			}
		})
	}
}

// A change the journal has no event for (made before the watch, in the
// same clock tick as the gate's stat: simulated by discarding its events
// and recording its key) is still caught while its entry is racy: the
// first check after arming compares racy entries by content.
func TestJournalComparesRacyEntriesOnceAfterArming(t *testing.T) {
	t.Parallel()
	dir, s := gateFixture(t)
	write(t, dir, "a.go", "package a\n\nfunc A() int { return 2 }\n", 0o644) // restored: a.go racy and pending
	if _, err := s.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !s.journal.pending[jref{"a.go", false}] {
		t.Fatal("the restored a.go is not pending comparison")
	}
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc A() int { return 8 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.journal.drain()
	clear(s.journal.dirty)
	i := s.gate.fileAt["a.go"]
	s.gate.files[i].key, _ = lstatKey(dir, "a.go")
	undone, err := s.Restore(context.Background())
	if err != nil || len(undone) != 1 {
		t.Fatalf("a change before the watch went unseen: %+v %v", undone, err)
	}
	journalled(t, s, "racy")
}

// A write between refresh's stat and the watch (here from a hook) is not
// vouched for: arming sees the key moved and the next check is the full
// stat pass, which catches it.
func TestJournalRefusesAChangeWhileArming(t *testing.T) {
	t.Parallel()
	dir, s := gateFixture(t)
	write(t, dir, "a.go", "package a\n\nfunc A() int { return 2 }\n", 0o644)
	s.testBeforeArm = func() {
		s.testBeforeArm = nil
		os.Chmod(filepath.Join(dir, "a.go"), 0o755)
	}
	if _, err := s.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.journal.ok() {
		t.Fatal("the journal vouches for an entry that changed while it was armed")
	}
	undone, err := s.Restore(context.Background())
	if err != nil || len(undone) != 1 || s.statPasses != 1 {
		t.Fatalf("the change while arming: undone %+v, %v, %d stat passes", undone, err, s.statPasses)
	}
}

// Random steps: the journal answers every one (no full stat pass), and
// Restore undoes what a second, ungated snapshot's full diff says.
func TestJournalAgreesWithTheFullCheck(t *testing.T) {
	t.Parallel()
	dir, s := gateFixture(t)
	ref, err := Take(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	r := rand.New(rand.NewPCG(5, 7)) // 30 random seeds passed too

	names := []string{"a.go", "gone.txt", "run.sh", "sub/x.txt", "sub/deep/y.txt", "sub/deep/z.txt", "n/e/w.txt", "ign/x.log"}
	for step := range 30 {
		for range r.IntN(3) {
			p := filepath.Join(dir, filepath.FromSlash(names[r.IntN(len(names))]))
			switch r.IntN(6) {
			case 0:
				os.Remove(p)
			case 1:
				os.Chmod(p, 0o700)
			case 2:
				if d := filepath.Dir(p); d != dir {
					os.RemoveAll(d)
				}
			case 3: // a directory moved aside, and another put in its place
				if d := filepath.Dir(p); d != dir {
					os.Rename(d, filepath.Join(dir, fmt.Sprintf("aside%d", step)))
					os.MkdirAll(d, 0o755)
					os.WriteFile(p, []byte("in its place\n"), 0o644)
				}
			default:
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, fmt.Appendf(nil, "step %d\n", step), 0o644)
			}
		}
		restoreAgrees(t, step, s, ref)
	}
	if s.statPasses != 0 {
		t.Errorf("%d full stat passes (%q)", s.statPasses, s.journal.why)
	}
}

// A mount placed over a directory of the tree sends no inotify event: the
// mount table's change makes the journal refuse, and the full stat pass
// sees the mount point's new inode. Needs root (CAP_SYS_ADMIN). Not
// parallel: a mount makes every journal of the process refuse once.
func TestJournalRefusesAfterAMount(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting needs root")
	}
	dir, s := gateFixture(t)
	s.testIgnoreMounts, s.journal.ignoreMounts = false, false // the mount table is what this test is about
	target := filepath.Join(dir, "sub")
	if err := syscall.Mount("tmpfs", target, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(target, syscall.MNT_DETACH) })
	if _, err := s.Restore(context.Background()); err == nil && seen(s) == 1 {
		t.Fatal("a mount over sub went unseen")
	}
	if s.statPasses != 1 {
		t.Errorf("%d full stat passes, want 1 (the journal must refuse)", s.statPasses)
	}
}

// A directory above the work tree renamed away and replaced by a changed
// copy: no watch gets an event, but the top's path leads to another
// inode, which the check compares every time.
func TestJournalSeesTheTreeSwappedFromAbove(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "p", "ws")
	os.MkdirAll(filepath.Dir(dir), 0o755)
	if err := os.Rename(setup(t, true), dir); err != nil {
		t.Fatalf("cannot move the fixture: %v", err)
	}
	s := armedSnapshot(t, dir)
	if err := os.Rename(filepath.Join(base, "p"), filepath.Join(base, "old")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(base, "old"), filepath.Join(base, "p")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	write(t, dir, "a.go", "package a\n\nfunc A() int { return 3 }\n", 0o644)
	undone, err := s.Restore(context.Background())
	if err != nil || len(undone) == 0 {
		t.Fatalf("the swapped tree went unseen: %+v %v", undone, err)
	}
}

// A dangling symlink in the tree does not keep the journal off.
func TestJournalArmsBesideADanglingSymlink(t *testing.T) {
	t.Parallel()
	dir := setup(t, true)
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "git", "add", "dangling")
	run(t, dir, "git", "commit", "-qm", "link")
	if s := armedSnapshot(t, dir); !s.journal.ok() {
		t.Fatalf("not armed: %q", s.journal.why)
	}
}

// Close releases the inotify instance: no watch outlives its Snapshot.
// Not parallel: it counts the process's inotify descriptors.
func TestJournalClosesWithTheSnapshot(t *testing.T) {
	before := inotifyFDs(t)
	dir := setup(t, true)
	s, err := Take(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		write(t, dir, "a.go", "package a\n", 0o644)
		if _, err := s.Restore(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := inotifyFDs(t); n != before+1 {
		t.Errorf("%d inotify instances with one Snapshot, %d before", n, before)
	}
	s.Close()
	if n := inotifyFDs(t); n != before {
		t.Errorf("%d inotify instances after Close, %d before", n, before)
	}
}

func inotifyFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.Contains(l, "inotify") {
			n++
		}
	}
	return n
}
