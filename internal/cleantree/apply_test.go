package cleantree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// gitTree commits changes with plain git in a scratch clone of src at
// commit and returns the commit's tree id and a fresh checkout of that
// commit made by git itself: what Apply and Hash must reproduce.
func gitTree(t testing.TB, src, commit string, changes []Change) (string, string) {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "scratch")
	run(t, "", "git", "clone", "-q", "--shared", "--no-checkout", src, scratch)
	run(t, scratch, "git", "checkout", "-q", "--detach", commit)
	// Removals first, as a set of changes is one state, not a sequence.
	for _, c := range changes {
		switch c.Status {
		case "deleted":
			run(t, scratch, "git", "rm", "-q", "--cached", "--", c.Path)
			os.Remove(filepath.Join(scratch, filepath.FromSlash(c.Path)))
		case "renamed":
			run(t, scratch, "git", "rm", "-q", "--cached", "--", c.OldPath)
			os.Remove(filepath.Join(scratch, filepath.FromSlash(c.OldPath)))
		}
	}
	for _, c := range changes {
		switch {
		case c.Status == "deleted":
			continue
		case c.Mode == "120000":
			symlink(t, scratch, c.Path, string(c.Content))
		default:
			mode := os.FileMode(0o644)
			if c.Mode == "100755" {
				mode = 0o755
			}
			put(t, scratch, c.Path, string(c.Content), mode)
		}
		run(t, scratch, "git", "add", "--", c.Path)
	}
	run(t, scratch, "git", "commit", "-q", "--allow-empty", "-m", "change")
	view := filepath.Join(t.TempDir(), "view")
	run(t, scratch, "git", "worktree", "add", "-q", "--detach", view, "HEAD")
	return run(t, scratch, "git", "rev-parse", "HEAD^{tree}"), view
}

// fix is a change set with every kind of change.
var fix = []Change{
	{Path: "a.go", Status: "modified", Content: []byte("package a\n\nfunc A() int { return 2 }\n")},
	{Path: "gone/only.txt", Status: "deleted"},
	{Path: "new/deeper/name.txt", OldPath: "old/name.txt", Status: "renamed", Content: []byte("a file that moves elsewhere\n")},
	{Path: "plain.sh", Status: "modified", Mode: "100755", Content: []byte("echo plain\n")},
	{Path: "run.sh", Status: "modified", Mode: "100644", Content: []byte("#!/bin/sh\necho hi\n")},
	{Path: "tolink.txt", Status: "type-changed", Mode: "120000", Content: []byte("a.go")},
	{Path: "link", Status: "modified", Mode: "120000", Content: []byte("dir/b.go")},
	{Path: "newlink", Status: "added", Mode: "120000", Content: []byte("../outside")},
	{Path: "new/bin.dat", Status: "added", Content: []byte("crlf\r\nnul\x00end")},
	{Path: "dir/copy.go", OldPath: "dir/b.go", Status: "copied", Content: []byte("package dir\n")},
}

func TestApplyAndHashMatchGit(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	tr := checkout(t, src, "HEAD")
	wantTree, view := gitTree(t, src, "HEAD", fix)
	got, err := tr.Hash(context.Background(), fix)
	if err != nil || got != wantTree {
		t.Fatalf("Hash before Apply = %q, %v; want git's %q", got, err, wantTree)
	}
	if err := tr.Apply(fix); err != nil {
		t.Fatal(err)
	}
	// Deleted and renamed sources are gone with their emptied directories,
	// modes and links are git's.
	sameListing(t, "after Apply", listing(t, tr.Dir()), listing(t, view))
	for p, x := range map[string]bool{"plain.sh": true, "run.sh": false} {
		fi, err := os.Stat(filepath.Join(tr.Dir(), p))
		if err != nil || (fi.Mode()&0o111 != 0) != x {
			t.Errorf("%s: %v, %v; executable want %v", p, fi.Mode(), err, x)
		}
	}
	if target, err := os.Readlink(filepath.Join(tr.Dir(), "tolink.txt")); err != nil || target != "a.go" {
		t.Errorf("tolink.txt: %q, %v", target, err)
	}
	// Test code edits the work tree and the checkout's .git: Hash is
	// unchanged.
	put(t, tr.Dir(), "a.go", "package a // edited by a test\n", 0o755)
	put(t, tr.Dir(), "extra.txt", "written by a test\n", 0o644)
	os.Remove(filepath.Join(tr.Dir(), "new/bin.dat"))
	if err := os.RemoveAll(filepath.Join(tr.Dir(), ".git")); err != nil {
		t.Fatal(err)
	}
	put(t, tr.Dir(), ".git/objects/info/alternates", "/nonexistent\n", 0o644)
	if got, err := tr.Hash(context.Background(), fix); err != nil || got != wantTree {
		t.Errorf("Hash after the work tree changed = %q, %v; want %q", got, err, wantTree)
	}
}

func TestApplyReplacesLinksWithoutFollowingThem(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	put(t, filepath.Dir(outside), "outside.txt", "outside\n", 0o644)
	symlink(t, src, "out", outside)
	run(t, src, "git", "add", "out")
	run(t, src, "git", "commit", "-qm", "link out")
	tr := checkout(t, src, "HEAD")
	changes := []Change{
		{Path: "out", Status: "modified", Content: []byte("now a file\n")},
		{Path: "link", Status: "type-changed", Content: []byte("now a file too\n")},
	}
	if err := tr.Apply(changes); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{outside: "outside\n", filepath.Join(tr.Dir(), "a.go"): "package a\n\nfunc A() int { return 1 }\n",
		filepath.Join(tr.Dir(), "out"): "now a file\n", filepath.Join(tr.Dir(), "link"): "now a file too\n"} {
		fi, err := os.Lstat(p)
		got, _ := os.ReadFile(p)
		if err != nil || !fi.Mode().IsRegular() || string(got) != want {
			t.Errorf("%s: %v %q, %v; want a file %q", p, fi.Mode(), got, err, want)
		}
	}
}

func TestApplyRefusesAndWritesNothing(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	tr := checkout(t, src, "HEAD")
	outside := t.TempDir()
	symlink(t, tr.Dir(), "evil", outside)
	symlink(t, tr.Dir(), "alias", "dir")
	symlink(t, tr.Dir(), "dir/sub/deep", outside)
	put(t, tr.Dir(), "dir/plain", "a planted file\n", 0o644)
	before := listing(t, tr.Dir())
	cases := []Change{
		{Path: "../x", Status: "added"},
		{Path: ".git/config", Status: "modified"},
		{Path: ".GIT/hooks/x", Status: "added"},
		{Path: "dir/.Git/x", Status: "added"},
		{Path: ".git", Status: "added"},
		{Path: ".git./x", Status: "added"},
		{Path: "GIT~1/x", Status: "added"},
		{Path: ".g\u200cit/x", Status: "added"},
		{Path: "a/../../b", Status: "added"},
		{Path: "a/../b", Status: "added"},
		{Path: "./a.go", Status: "modified"},
		{Path: "/etc/x", Status: "added"},
		{Path: filepath.Join(outside, "x"), Status: "added"},
		{Path: "a//b", Status: "added"},
		{Path: "dir/", Status: "added"},
		{Path: "", Status: "added"},
		{Path: "a\x00b", Status: "added"},
		{Path: `a\b`, Status: "added"},
		{Path: "x", Status: "added", Mode: "100664"},
		{Path: "x", Status: "added", Mode: "040000"},
		{Path: "x", Status: "added", Mode: "160000"},
		{Path: "x", Status: "added", Mode: "120000"},
		{Path: "x", Status: "bogus"},
		{Path: "x", Status: "renamed"},
		{Path: "x", Status: "renamed", OldPath: "../a.go"},
		{Path: "x", Status: "deleted", OldPath: ".git/HEAD"},
		{Path: "zz_ok.txt", Status: "added"}, // a second write of the same path
		{Path: "a.go/x", Status: "added"},    // below a file
		{Path: "link/x", Status: "added"},    // below a committed link
		{Path: "dir", Status: "added"},       // over a directory that stays
	}
	// Refused for what is in the work tree only: below a planted link (to
	// outside, or inside the tree) or a planted file.
	planted := []Change{
		{Path: "evil/x", Status: "added"},
		{Path: "alias/new.go", Status: "added"},
		{Path: "dir/sub/deep/x", Status: "added"},
		{Path: "dir/plain/x", Status: "added"},
		{Path: "evil/x", Status: "deleted"},
	}
	for i, bad := range append(cases, planted...) {
		onDisk := i >= len(cases)
		changes := []Change{
			{Path: "zz_ok.txt", Status: "added", Content: []byte("must not be written\n")},
			{Path: "plain.sh", Status: "deleted"},
			{Path: "dir/b.go", Status: "modified", Content: []byte("must not be written\n")},
			bad,
		}
		err := tr.Apply(changes)
		if !errors.Is(err, ErrRefused) {
			t.Errorf("Apply(%+v) = %v, want a refusal", bad, err)
		}
		sameListing(t, "after a refused Apply", listing(t, tr.Dir()), before)
		if entries, _ := os.ReadDir(outside); len(entries) > 0 {
			t.Fatalf("Apply(%+v) wrote outside: %v", bad, entries)
		}
		// Hash refuses the same, but for the work tree's own state, which
		// it never reads.
		id, err := tr.Hash(context.Background(), changes)
		if onDisk && err != nil {
			t.Errorf("Hash(%+v) = %v", bad, err)
		} else if !onDisk && !errors.Is(err, ErrRefused) {
			t.Errorf("Hash(%+v) = %q, %v; want a refusal", bad, id, err)
		}
	}
	// The same change without the bad one goes through.
	if err := tr.Apply([]Change{{Path: "zz_ok.txt", Status: "added", Content: []byte("ok\n")}}); err != nil {
		t.Fatal(err)
	}
}

func TestApplyAllowsWhatTheSetRemovesFirst(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	tr := checkout(t, src, "HEAD")
	changes := []Change{
		// A file and a link become directories; a directory becomes a file.
		{Path: "a.go/inner.go", OldPath: "a.go", Status: "renamed", Content: []byte("package inner\n")},
		{Path: "link", Status: "deleted"},
		{Path: "link/x", Status: "added", Content: []byte("x\n")},
		{Path: "gone/only.txt", Status: "deleted"},
		{Path: "gone", Status: "added", Content: []byte("a file now\n")},
		// Two files swap names.
		{Path: "dir/b.go", OldPath: "dir/sub/c.txt", Status: "renamed", Content: []byte("c\n")},
		{Path: "dir/sub/c.txt", OldPath: "dir/b.go", Status: "renamed", Content: []byte("package dir\n")},
	}
	want, view := gitTree(t, src, "HEAD", changes)
	if err := tr.Apply(changes); err != nil {
		t.Fatal(err)
	}
	sameListing(t, "after Apply", listing(t, tr.Dir()), listing(t, view))
	if got, err := tr.Hash(context.Background(), changes); err != nil || got != want {
		t.Errorf("Hash = %q, %v; want %q", got, err, want)
	}
}

func TestCheckPathNames(t *testing.T) {
	for _, p := range []string{"a.go", "dir/sub/x", ".github/workflows/ci.yml", ".gitignore", ".gitattributes", "git", "x.git", ".gitx/y", "...", "a b/c", "ünï/cødé"} {
		if err := checkPath(p); err != nil {
			t.Errorf("checkPath(%q) = %v", p, err)
		}
	}
	for _, p := range []string{".git", ".GIT", ".Git ", ".git..", ".git::$INDEX_ALLOCATION", "git~1", "x/.git\ufeff/y", "x/../y", "x/./y"} {
		if err := checkPath(p); !errors.Is(err, ErrRefused) {
			t.Errorf("checkPath(%q) = %v, want a refusal", p, err)
		}
	}
}
