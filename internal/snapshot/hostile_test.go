package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/gitexec"
)

// plantFilter does what hostile test code can: define a filter in the
// repository's config and assign it through .git/info/attributes (and the
// tree's .gitattributes), plus content-changing attributes. The filter
// writes canary when it runs and upper-cases what it stores.
func plantFilter(t *testing.T, dir, canary string) {
	t.Helper()
	run(t, dir, "git", "config", "filter.hostile.clean", "touch '"+canary+"'; tr a-z A-Z")
	run(t, dir, "git", "config", "filter.hostile.smudge", "touch '"+canary+"'; cat")
	write(t, dir, ".git/info/attributes", "* filter=hostile\n", 0o644)
	write(t, dir, ".gitattributes", "*.go filter=hostile ident\n*.txt text eol=lf\n*.u16 working-tree-encoding=UTF-16LE\n", 0o644)
}

// No filter or content attribute the repository chooses changes what the
// snapshot records: the diff's new side is each file's bytes, and the
// filter never runs (its canary is never written).
func TestRepositoryFiltersNeverRun(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"before Take", "after Take"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, true)
			canary := filepath.Join(t.TempDir(), "filter-ran")
			if when == "before Take" {
				plantFilter(t, dir, canary)
			}
			s, err := Take(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if when == "after Take" {
				plantFilter(t, dir, canary)
			}
			write(t, dir, "a.go", "package a\n\n// $Id$\nfunc A() int { return 2 }\n", 0o644)
			write(t, dir, "crlf.txt", "one\r\ntwo\r\n", 0o644)
			write(t, dir, "x.u16", "h\x00i\x00\n\x00", 0o644)
			diff, changes, err := s.Diff(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(canary); err == nil {
				t.Fatal("the repository's filter ran inside the snapshot's git")
			}
			seen := 0
			for _, c := range changes {
				if c.Status == "deleted" {
					continue
				}
				data, err := os.ReadFile(filepath.Join(dir, c.Path))
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Verify(c, data); err != nil {
					t.Errorf("%v", err)
				}
				seen++
			}
			if seen < 3 {
				t.Fatalf("changes %+v, want a.go, crlf.txt and x.u16 among them", changes)
			}
			if !strings.Contains(diff, "+func A() int { return 2 }") || strings.Contains(diff, "FUNC A") {
				t.Fatalf("the diff is not the file's text:\n%s", diff)
			}
		})
	}
}

// A git planted earlier on PATH after start-up (test code writing
// ~/.local/bin/git) is never run: git was resolved once, at start-up.
func TestPlantedGitOnPathIsNeverRun(t *testing.T) {
	if err := gitexec.Init(); err != nil { // what main does first
		t.Fatal(err)
	}
	dir := setup(t, true)
	bin := t.TempDir()
	canary := filepath.Join(t.TempDir(), "planted-git-ran")
	write(t, bin, "git", "#!/bin/sh\nenv > '"+canary+"'\nexit 1\n", 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	s, err := Take(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write(t, dir, "a.go", "package a\n", 0o644)
	if _, _, err := s.Diff(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the git planted on PATH ran")
	}
}

// A huge file left in the workspace (a test's output) is refused by name
// before the diff and the contents are read into memory.
func TestDiffRefusesAHugeChangedFile(t *testing.T) {
	t.Parallel()
	dir := setup(t, true)
	s, err := Take(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := os.Create(filepath.Join(dir, "huge.out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, _, err = s.Diff(context.Background())
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Path != "huge.out" {
		t.Fatalf("err %v, want a TooLargeError for huge.out", err)
	}
}

func TestTakeExcludingLeavesOutTheGivenFiles(t *testing.T) {
	t.Parallel()
	for _, withGit := range []bool{true, false} {
		dir := setup(t, withGit)
		trace := filepath.Join(dir, "out", "trace.jsonl")
		s, err := TakeExcluding(context.Background(), dir, []string{"", trace})
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, "out/trace.jsonl", "{}\n", 0o644)
		write(t, dir, "a.go", "package a\n\nfunc A() int { return 3 }\n", 0o644)
		_, changes, err := s.Diff(context.Background())
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) != 1 || changes[0].Path != "a.go" {
			t.Errorf("git %v: changes %+v, want only a.go", withGit, changes)
		}
	}
}
