package cleantree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// run runs a command the way a user's shell would: plain git, honouring
// the repository's config, attributes and hooks, with no global or system
// config and a fixed identity.
func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return runStdin(t, dir, nil, args...)
}

// runStdin is run with standard input.
func runStdin(t testing.TB, dir string, stdin io.Reader, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = stdin
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func put(t testing.TB, dir, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, dir, rel, target string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with one commit and returns its directory.
func newRepo(t testing.TB, initArgs ...string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	run(t, "", append(append([]string{"git", "init", "-q", "-b", "main"}, initArgs...), src)...)
	put(t, src, "a.go", "package a\n\nfunc A() int { return 1 }\n", 0o644)
	put(t, src, "dir/b.go", "package dir\n", 0o644)
	put(t, src, "dir/sub/c.txt", "c\n", 0o644)
	put(t, src, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
	put(t, src, ".gitignore", "zz_fix.go\ngo.work\n", 0o644)
	put(t, src, "gone/only.txt", "the only file of its directory\n", 0o644)
	put(t, src, "old/name.txt", "a file that moves elsewhere\n", 0o644)
	put(t, src, "tolink.txt", "becomes a link\n", 0o644)
	put(t, src, "plain.sh", "echo plain\n", 0o644)
	symlink(t, src, "link", "a.go")
	run(t, src, "git", "add", "-A")
	run(t, src, "git", "commit", "-qm", "init")
	return src
}

// listing maps every path below dir (but its top-level .git) to what it
// is: "dir", "link TARGET" or "file x|- CONTENT".
func listing(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".git" && d.IsDir():
			return fs.SkipDir
		case rel == ".git":
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "link " + target
			return err
		case d.IsDir():
			out[rel] = "dir"
		default:
			fi, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			x := "-"
			if fi.Mode()&0o100 != 0 {
				x = "x"
			}
			out[rel] = "file " + x + " " + string(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameListing fails t with the differences between two listings.
func sameListing(t testing.TB, what string, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("missing %s (%q)", k, v))
		} else if g != v {
			diffs = append(diffs, fmt.Sprintf("%s: got %q, want %q", k, g, v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("unexpected %s (%q)", k, v))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Fatalf("%s:\n%s", what, strings.Join(diffs, "\n"))
	}
}

func checkout(t testing.TB, src, commit string) *Tree {
	t.Helper()
	tr, err := Checkout(context.Background(), src, commit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestCheckoutHasTheCommitsTrackedFilesOnly(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	want := listing(t, src)
	head := run(t, src, "git", "rev-parse", "HEAD")
	// The workspace: ignored and untracked files, staged and unstaged
	// edits, a tracked file deleted.
	put(t, src, "zz_fix.go", "package a // ignored\n", 0o644)
	put(t, src, "go.work", "go 1.26\nuse .\n", 0o644)
	put(t, src, "untracked.txt", "untracked\n", 0o644)
	put(t, src, "a.go", "package a // unstaged edit\n", 0o644)
	put(t, src, "dir/b.go", "package dir // staged edit\n", 0o644)
	run(t, src, "git", "add", "dir/b.go")
	os.Remove(filepath.Join(src, "dir/sub/c.txt"))

	tr := checkout(t, src, "HEAD")
	sameListing(t, "checkout", listing(t, tr.Dir()), want)
	if tr.Commit() != head {
		t.Errorf("Commit() = %q, want %q", tr.Commit(), head)
	}
	if want := run(t, src, "git", "rev-parse", "HEAD^{tree}"); tr.BaseTree() != want {
		t.Errorf("BaseTree() = %q, want %q", tr.BaseTree(), want)
	}
	if !filepath.IsAbs(tr.Dir()) || !strings.HasPrefix(filepath.Base(tr.Dir()), "mini-agent-clean-") {
		t.Errorf("Dir() = %q", tr.Dir())
	}
	for p, want := range map[string]bool{"a.go": true, "run.sh": true, "link": true, "dir/sub/c.txt": true,
		"go.work": false, "zz_fix.go": false, "untracked.txt": false, "dir": false, "dir/sub": false, "nope": false} {
		if got := tr.Tracked(p); got != want {
			t.Errorf("Tracked(%q) = %v, want %v", p, got, want)
		}
	}
	// The checkout is a repository of its own, clean, HEAD at the commit.
	if got := run(t, tr.Dir(), "git", "status", "--porcelain", "--ignored"); got != "" {
		t.Errorf("git status in the checkout:\n%s", got)
	}
	if got := run(t, tr.Dir(), "git", "rev-parse", "HEAD"); got != head {
		t.Errorf("the checkout's HEAD = %q, want %q", got, head)
	}
	for _, name := range []string{"hooks", "info/exclude", "description"} {
		if _, err := os.Lstat(filepath.Join(tr.Dir(), ".git", name)); err == nil {
			t.Errorf("the checkout's .git has %s: templates were used", name)
		}
	}
	// Other names of the commit, and from a subdirectory of the source.
	for _, c := range []struct{ dir, rev string }{{src, "main"}, {src, head[:10]}, {src, head}, {filepath.Join(src, "dir"), "HEAD"}} {
		if got := checkout(t, c.dir, c.rev); got.Commit() != head {
			t.Errorf("Checkout(%s, %s).Commit() = %q, want %q", c.dir, c.rev, got.Commit(), head)
		}
	}
}

func TestCheckoutWritesBlobBytesAndRunsNothing(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	files := map[string]string{"lf.txt": "one\ntwo\n", "crlf.txt": "one\r\ntwo\r\n", "data.dat": "secret\n", "id.txt": "$Id$\n"}
	for name, content := range files {
		put(t, src, name, content, 0o644)
	}
	run(t, src, "git", "add", "-A")
	run(t, src, "git", "commit", "-qm", "files")
	put(t, src, ".gitattributes", "* text eol=crlf\n*.dat filter=evil\n*.txt ident\n", 0o644)
	run(t, src, "git", "add", ".gitattributes")
	run(t, src, "git", "commit", "-qm", "attributes")
	marks := t.TempDir()
	for _, kind := range []string{"smudge", "clean"} {
		run(t, src, "git", "config", "filter.evil."+kind, fmt.Sprintf("sh -c 'touch %s/%s; cat'", marks, kind))
	}
	run(t, src, "git", "config", "filter.evil.required", "true")
	put(t, src, ".git/hooks/post-checkout", fmt.Sprintf("#!/bin/sh\ntouch %s/hook\n", marks), 0o755)

	tr := checkout(t, src, "HEAD")
	for name, content := range files {
		got, err := os.ReadFile(filepath.Join(tr.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("%s = %q, want the blob's bytes %q", name, got, content)
		}
	}
	if entries, _ := os.ReadDir(marks); len(entries) > 0 {
		t.Fatalf("a filter or hook ran: %v", entries)
	}
	// Control: a plain git checkout of the same files does convert them
	// and runs the filter and the hook, so the setup above is effective.
	for _, name := range []string{"lf.txt", "data.dat"} {
		os.Remove(filepath.Join(src, name))
	}
	run(t, src, "git", "checkout", "--", "lf.txt", "data.dat")
	if got, _ := os.ReadFile(filepath.Join(src, "lf.txt")); string(got) != "one\r\ntwo\r\n" {
		t.Errorf("control: plain git wrote lf.txt as %q, expected CRLF", got)
	}
	for _, mark := range []string{"smudge", "hook"} {
		if _, err := os.Stat(filepath.Join(marks, mark)); err != nil {
			t.Errorf("control: plain git did not run the %s: %v", mark, err)
		}
	}
}

func TestCheckoutOfAShallowSource(t *testing.T) {
	t.Parallel()
	full := newRepo(t)
	put(t, full, "a.go", "package a // second\n", 0o644)
	run(t, full, "git", "commit", "-qam", "second")
	shallow := filepath.Join(t.TempDir(), "shallow")
	run(t, "", "git", "clone", "-q", "--depth", "1", "file://"+filepath.ToSlash(full), shallow)
	if got := run(t, shallow, "git", "rev-parse", "--is-shallow-repository"); got != "true" {
		t.Fatalf("the source is not shallow: %s", got)
	}
	tr := checkout(t, shallow, "HEAD")
	sameListing(t, "checkout of a shallow source", listing(t, tr.Dir()), listing(t, shallow))
	// History in the checkout stops where the source's does.
	if got := run(t, tr.Dir(), "git", "log", "--format=%H"); got != tr.Commit() {
		t.Errorf("git log in the checkout = %q, want only %s", got, tr.Commit())
	}
	changes := []Change{{Path: "a.go", Status: "modified", Content: []byte("package a // fixed\n")}}
	want, _ := gitTree(t, full, tr.Commit(), changes)
	if got, err := tr.Hash(context.Background(), changes); err != nil || got != want {
		t.Errorf("Hash = %q, %v; want %q", got, err, want)
	}
}

func TestCheckoutOfACommitOnNoBranch(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	run(t, src, "git", "checkout", "-q", "--detach")
	put(t, src, "detached.txt", "on no branch\n", 0o644)
	run(t, src, "git", "add", "detached.txt")
	run(t, src, "git", "commit", "-qm", "detached")
	id := run(t, src, "git", "rev-parse", "HEAD")
	run(t, src, "git", "checkout", "-q", "main")
	if got := run(t, src, "git", "branch", "-a", "--contains", id); got != "" {
		t.Fatalf("the commit is on a branch: %s", got)
	}
	tr := checkout(t, src, id)
	if got, err := os.ReadFile(filepath.Join(tr.Dir(), "detached.txt")); err != nil || string(got) != "on no branch\n" {
		t.Fatalf("detached.txt = %q, %v", got, err)
	}
	changes := []Change{{Path: "detached.txt", Status: "deleted"}}
	want, _ := gitTree(t, src, id, changes)
	if got, err := tr.Hash(context.Background(), changes); err != nil || got != want {
		t.Errorf("Hash = %q, %v; want %q", got, err, want)
	}
}

func TestCheckoutOfWorktreeSharedAndSHA256Sources(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	run(t, src, "git", "worktree", "add", "-q", "-b", "feature", wt)
	put(t, wt, "feature.txt", "feature\n", 0o644)
	run(t, wt, "git", "add", "feature.txt")
	run(t, wt, "git", "commit", "-qm", "feature")
	if tr := checkout(t, wt, "HEAD"); !tr.Tracked("feature.txt") {
		t.Errorf("the linked worktree's commit lacks feature.txt")
	}
	// A --shared clone's base objects are in src: found through its
	// alternates.
	shared := filepath.Join(t.TempDir(), "shared")
	run(t, "", "git", "clone", "-q", "--shared", src, shared)
	put(t, shared, "more.txt", "more\n", 0o644)
	run(t, shared, "git", "add", "more.txt")
	run(t, shared, "git", "commit", "-qm", "more")
	tr := checkout(t, shared, "HEAD")
	sameListing(t, "checkout of a shared clone", listing(t, tr.Dir()), listing(t, shared))
	if got, err := tr.Hash(context.Background(), nil); err != nil || got != tr.BaseTree() {
		t.Errorf("Hash(no changes) = %q, %v; want the base tree %q", got, err, tr.BaseTree())
	}
	// sha256 objects.
	src256 := newRepo(t, "--object-format=sha256")
	tr = checkout(t, src256, "HEAD")
	changes := []Change{{Path: "new/x.go", Status: "added", Content: []byte("package x\n")}}
	want, _ := gitTree(t, src256, tr.Commit(), changes)
	if got, err := tr.Hash(context.Background(), changes); err != nil || got != want || len(got) != 64 {
		t.Errorf("sha256 Hash = %q, %v; want %q", got, err, want)
	}
}

func TestCheckoutLeavesASubmoduleEmpty(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	other := run(t, src, "git", "rev-parse", "HEAD")
	run(t, src, "git", "update-index", "--add", "--cacheinfo", "160000,"+other+",vendor/sub")
	run(t, src, "git", "commit", "-qm", "submodule")
	tr := checkout(t, src, "HEAD")
	entries, err := os.ReadDir(filepath.Join(tr.Dir(), "vendor/sub"))
	if err != nil || len(entries) != 0 {
		t.Errorf("vendor/sub: %v, %v; want an empty directory", entries, err)
	}
	if tr.Tracked("vendor/sub") {
		t.Errorf("a submodule reported as a tracked file")
	}
	changes := []Change{{Path: "a.go", Status: "modified", Content: []byte("package a\n")}}
	want, _ := gitTree(t, src, tr.Commit(), changes)
	if got, err := tr.Hash(context.Background(), changes); err != nil || got != want {
		t.Errorf("Hash = %q, %v; want %q", got, err, want)
	}
	// Writing below the submodule is not a tree.
	if err := tr.Apply([]Change{{Path: "vendor/sub/x", Status: "added"}}); err == nil {
		t.Errorf("Apply wrote below a submodule")
	}
}

// gitState records every entry of a .git directory: mode, size, time and
// content hash.
func gitState(t testing.TB, gitDir string) map[string]string {
	t.Helper()
	state := map[string]string{}
	err := filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sum := ""
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(data)
			sum = hex.EncodeToString(h[:])
		}
		state[p] = fmt.Sprintf("%v %d %d %s", fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return state
}

func TestSourceRepositoryIsNotWritten(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	put(t, src, "a.go", "package a // second version\n", 0o644)
	run(t, src, "git", "commit", "-qam", "second")
	put(t, src, "a.go", "package a // workspace edit\n", 0o644)
	// Changes whose blobs and trees the source already has (a rename keeps
	// its blob; a.go back to its first version makes the first commit's
	// tree): writing those objects with the source as an alternate would
	// "freshen" (touch) the source's files.
	changes := []Change{
		{Path: "moved/name.txt", OldPath: "old/name.txt", Status: "renamed", Content: []byte("a file that moves elsewhere\n")},
		{Path: "a.go", Status: "modified", Content: []byte("package a\n\nfunc A() int { return 1 }\n")},
	}
	want, _ := gitTree(t, src, "HEAD", changes)
	inspect := func() string {
		return run(t, src, "git", "count-objects", "-v") + "\n" + run(t, src, "git", "for-each-ref") + "\n" +
			run(t, src, "git", "config", "--list", "--local") + "\n" + run(t, src, "git", "stash", "list")
	}
	before, beforeInfo := gitState(t, filepath.Join(src, ".git")), inspect()

	tr, err := Checkout(context.Background(), src, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	sameListing(t, "the source's .git after Checkout", gitState(t, filepath.Join(src, ".git")), before)
	// The checkout's .git names the source nowhere (no alternates): git
	// there cannot reach the source's files.
	for p := range gitState(t, filepath.Join(tr.Dir(), ".git")) {
		if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), src) {
			t.Errorf("%s names the source", p)
		}
	}
	run(t, tr.Dir(), "git", "fsck", "--no-dangling")
	if err := tr.Apply(changes); err != nil {
		t.Fatal(err)
	}
	sameListing(t, "the source's .git after Apply", gitState(t, filepath.Join(src, ".git")), before)
	if got, err := tr.Hash(context.Background(), changes); err != nil || got != want {
		t.Errorf("Hash = %q, %v; want %q", got, err, want)
	}
	sameListing(t, "the source's .git after Hash", gitState(t, filepath.Join(src, ".git")), before)
	// What test code in the checkout might do through git there.
	run(t, tr.Dir(), "git", "add", "-A")
	run(t, tr.Dir(), "git", "commit", "-qm", "by a test")
	run(t, tr.Dir(), "git", "gc", "-q")
	run(t, tr.Dir(), "git", "log", "--oneline")
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	sameListing(t, "the source's .git", gitState(t, filepath.Join(src, ".git")), before)
	if got := inspect(); got != beforeInfo {
		t.Errorf("the source changed:\n%s\nwant\n%s", got, beforeInfo)
	}
}

func TestCloseRemovesReadOnlyDirectories(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	outside := t.TempDir()
	tr, err := Checkout(context.Background(), src, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	dir := tr.Dir()
	put(t, dir, "ro/deep/f.txt", "x", 0o444)
	put(t, dir, "locked/f.txt", "x", 0o644)
	symlink(t, dir, "out", outside)
	for p, mode := range map[string]os.FileMode{"ro/deep": 0o555, "ro": 0o555, "locked": 0, ".git/objects": 0o555, ".": 0o555} {
		if err := os.Chmod(filepath.Join(dir, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(outside, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(outside, 0o755)
	// The walk itself: observable even when the test runs as root, who
	// could remove the tree without it.
	makeWritable(dir)
	for _, p := range []string{".", "ro", "ro/deep", "locked", ".git/objects"} {
		if fi, err := os.Lstat(filepath.Join(dir, p)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("after makeWritable %s: %v, %v; want 0700", p, fi.Mode(), err)
		}
	}
	if fi, _ := os.Stat(outside); fi.Mode().Perm() != 0o555 {
		t.Errorf("makeWritable changed a directory outside through a link: %v", fi.Mode())
	}
	for p, mode := range map[string]os.FileMode{"ro/deep": 0o555, "ro": 0o555, "locked": 0, ".": 0o555} {
		os.Chmod(filepath.Join(dir, p), mode)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("after Close: %v", err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCancelledContextAndBadCommit(t *testing.T) {
	src := newRepo(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if tr, err := Checkout(ctx, src, "HEAD"); err == nil {
		tr.Close()
		t.Errorf("Checkout with a cancelled context succeeded")
	}
	for _, rev := range []string{"", "nope", "--output=x", strings.Repeat("1", 40), "HEAD^{tree}"} {
		if tr, err := Checkout(context.Background(), src, rev); err == nil {
			tr.Close()
			t.Errorf("Checkout(%q) succeeded", rev)
		}
	}
	if _, err := Checkout(context.Background(), t.TempDir(), "HEAD"); err == nil {
		t.Errorf("Checkout of a directory that is no repository succeeded")
	}
	tr, err := Checkout(context.Background(), src, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Hash(ctx, []Change{{Path: "a.go", Status: "deleted"}}); err == nil {
		t.Errorf("Hash with a cancelled context succeeded")
	}
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 1 || entries[0].Name() != filepath.Base(tr.Dir()) {
		t.Errorf("temporary directories left: %v", entries)
	}
}
