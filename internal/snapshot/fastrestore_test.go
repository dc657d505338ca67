//go:build linux

package snapshot

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// fastFixture is gateFixture with ignore rules worth testing: a negation,
// a directory-only pattern, a nested .gitignore.
func fastFixture(t *testing.T) (string, *Snapshot) {
	t.Helper()
	dir := setup(t, true)
	write(t, dir, "sub/x.txt", "inside\n", 0o644)
	write(t, dir, "sub/deep/y.txt", "deeper\n", 0o644)
	write(t, dir, "sub/.gitignore", "*.tmp\n!keep.log\n", 0o644)
	write(t, dir, "sub/keep.log", "seen: negated in sub\n", 0o644)
	write(t, dir, "link", "a.go", 0o644)
	os.Remove(filepath.Join(dir, "link"))
	if err := os.Symlink("a.go", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "ign/keep.log", "ignored dir content\n", 0o644)
	write(t, dir, ".gitignore", "*.log\n/ign/\nbuild/\n", 0o644)
	return dir, armedSnapshot(t, dir)
}

// gitPathSays is what the git path returns for the work tree as it is: a
// full diff of it (by another snapshot of the same tree) against the
// recorded tree.
func gitPathSays(t *testing.T, ref *Snapshot) string {
	t.Helper()
	ctx := context.Background()
	now, err := ref.writeTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if now == ref.tree {
		return fmt.Sprint([]Change(nil))
	}
	raw, err := git(ctx, ref.dir, ref.env, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", ref.tree, now)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := parseRawFull(raw)
	if err != nil {
		t.Fatal(err)
	}
	var out []Change
	for _, r := range recs {
		out = append(out, Change{Path: r.path, Status: r.status, Mode: r.oldMode})
	}
	return fmt.Sprint(out)
}

// Random steps, over many seeds: after every one, what Restore returns is
// what the git path returns, and the work tree is the recorded tree again.
func TestFastRestoreAgreesWithGit(t *testing.T) {
	t.Parallel()
	names := []string{"a.go", "gone.txt", "run.sh", "link", "sub/x.txt", "sub/deep/y.txt", "sub/deep/z.txt",
		"n/e/w.txt", "ign/x.log", "x.log", "sub/keep.log", "sub/other.log", "sub/a.tmp", "sub/deep/b.tmp",
		"build/out.txt", "build", "newd/f.txt", "newd/g.log"}
	fast := 0
	for seed := range uint64(12) { // 80 seeds passed too
		dir, s := fastFixture(t)
		ref, err := Take(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, 99))
		for step := range 20 {
			for range 1 + r.IntN(3) {
				name := names[r.IntN(len(names))]
				p := filepath.Join(dir, filepath.FromSlash(name))
				switch r.IntN(8) {
				case 7: // a directory moved aside, another put in its place
					// (not sub: its .gitignore moved aside is a new one, which
					// the git path removes, uncovering what it ignored; see
					// the check after Restore below)
					if d := filepath.Dir(p); d != dir && filepath.Base(d) != "sub" {
						os.Rename(d, filepath.Join(dir, fmt.Sprintf("aside%d", step)))
						os.MkdirAll(d, 0o755)
						os.WriteFile(p, []byte("in its place\n"), 0o644)
					}
				case 0:
					os.Remove(p)
				case 1:
					os.Chmod(p, 0o755)
				case 2:
					os.Remove(p)
					os.Symlink(fmt.Sprintf("target%d", step), p)
				case 3:
					if d := filepath.Dir(p); d != dir {
						os.RemoveAll(d)
					}
				default:
					os.MkdirAll(filepath.Dir(p), 0o755)
					os.WriteFile(p, fmt.Appendf(nil, "step %d\n", step), 0o644)
				}
			}
			want := gitPathSays(t, ref)
			before := s.fastRestores
			undone, err := s.Restore(context.Background())
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if got := fmt.Sprint(undone); got != want {
				t.Fatalf("seed %d step %d (fast %v): Restore returned %s, git says %s", seed, step, s.fastRestores > before, got, want)
			}
			// (The git path can leave a change behind: removing a new
			// .gitignore uncovers what it ignored. The fast path refuses
			// a new .gitignore, so after it nothing is left.)
			if after := gitPathSays(t, ref); s.fastRestores > before && after != fmt.Sprint([]Change(nil)) {
				t.Fatalf("seed %d step %d (fast %v): still changed after Restore: %s", seed, step, s.fastRestores > before, after)
			}
		}
		fast += s.fastRestores
		ref.Close()
	}
	if fast < 60 {
		t.Errorf("only %d fast restores over 240 steps", fast)
	}
}

// Each simple change is undone by the fast path, as git would; ignored
// new entries are left alone.
func TestFastRestoreTargeted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		fast   bool
		kept   []string // ignored paths that must survive
	}{
		{"content", func(t *testing.T, dir string) { write(t, dir, "a.go", "package b\n", 0o644) }, true, nil},
		{"chmod +x", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "run.sh"), 0o755) }, true, nil},
		{"symlink retargeted", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "link"))
			os.Symlink("run.sh", filepath.Join(dir, "link"))
		}, true, nil},
		{"file to symlink", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "a.go"))
			os.Symlink("run.sh", filepath.Join(dir, "a.go"))
		}, true, nil},
		{"deleted", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "sub/deep/y.txt")) }, true, nil},
		{"new file", func(t *testing.T, dir string) { write(t, dir, "sub/new.txt", "x\n", 0o644) }, true, nil},
		{"new ignored files", func(t *testing.T, dir string) {
			write(t, dir, "sub/n.tmp", "nested rule\n", 0o644)
			write(t, dir, "z.log", "top rule\n", 0o644)
			write(t, dir, "sub/keep.log", "negated: seen\n", 0o644)
			write(t, dir, "sub/deep/more.log", "ignored\n", 0o644)
		}, true, []string{"sub/n.tmp", "z.log", "sub/deep/more.log"}},
		{"new directory", func(t *testing.T, dir string) {
			write(t, dir, "nd/a.txt", "x\n", 0o644)
			write(t, dir, "nd/in/b.txt", "x\n", 0o644)
			write(t, dir, "nd/c.log", "ignored\n", 0o644)
			write(t, dir, "nd/build/d.txt", "ignored: build/\n", 0o644)
		}, true, []string{"nd/c.log", "nd/build/d.txt"}},
		{"new ignored directory", func(t *testing.T, dir string) {
			write(t, dir, "build/a.txt", "x\n", 0o644)
			write(t, dir, "sub/build/b/c.txt", "x\n", 0o644)
		}, true, []string{"build/a.txt", "sub/build/b/c.txt"}},
		{"a file named like a directory rule", func(t *testing.T, dir string) { write(t, dir, "build", "a file: build/ does not match\n", 0o644) }, true, nil},
		{".gitignore changed", func(t *testing.T, dir string) { write(t, dir, "sub/.gitignore", "\n", 0o644) }, false, nil},
		{"new .gitignore", func(t *testing.T, dir string) { write(t, dir, "sub/deep/.gitignore", "*\n", 0o644) }, false, nil},
		{"directory removed", func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, "sub/deep")) }, false, nil},
		{"file become directory", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "a.go"))
			write(t, dir, "a.go/x", "x\n", 0o644)
		}, false, nil},
		{"nested repository", func(t *testing.T, dir string) { write(t, dir, "nr/.git/HEAD", "ref: refs/heads/main\n", 0o644) }, false, nil},
		{"over the bound", func(t *testing.T, dir string) {
			for i := range fastBound + 1 {
				write(t, dir, fmt.Sprintf("many/f%d.txt", i), "x\n", 0o644)
			}
		}, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, s := fastFixture(t)
			ref, err := Take(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			c.mutate(t, dir)
			want := gitPathSays(t, ref)
			undone, err := s.Restore(context.Background())
			if err != nil && c.name != "nested repository" {
				t.Fatal(err)
			}
			if c.fast != (s.fastRestores == 1) {
				t.Errorf("%d fast restores, want fast %v", s.fastRestores, c.fast)
			}
			if err == nil {
				if got := fmt.Sprint(undone); got != want {
					t.Errorf("Restore returned %s, git says %s", got, want)
				}
				if after := gitPathSays(t, ref); after != fmt.Sprint([]Change(nil)) {
					t.Errorf("still changed after Restore: %s", after)
				}
			}
			for _, k := range c.kept {
				if _, err := os.Lstat(filepath.Join(dir, k)); err != nil {
					t.Errorf("ignored %s: %v", k, err)
				}
			}
			// The gate is up to date: a clean step after is clean, and a
			// later change is still caught.
			if err == nil {
				if u, err := s.Restore(context.Background()); err != nil || u != nil {
					t.Errorf("next clean step: %v %v", u, err)
				}
				write(t, dir, "sub/x.txt", "later\n", 0o644)
				if u, err := s.Restore(context.Background()); err != nil || len(u) != 1 {
					t.Errorf("a later change: %v %v", u, err)
				}
			}
		})
	}
}
