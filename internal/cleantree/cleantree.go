// Package cleantree makes the clean checkouts a fix is proven on: a commit
// of the user's repository, tracked files only (nothing untracked, ignored
// or uncommitted from the workspace), and that commit with the published
// change applied, whose tree id is the one GitHub's Git Data API returns
// for the same base tree and entries.
//
// The checkout is a new repository in a temporary directory, made without
// templates (no hook, no config but git's defaults) and without a
// transport: the commit, its tree and every object below it are packed
// out of the source and indexed into the checkout's own object store, so
// any commit the source has checks out, on a branch or not, from a shallow
// source or not, and the checkout's .git refers to the source nowhere (no
// alternates: git there cannot even touch a source object's file time).
// The commit is marked shallow there: history is not copied. Its
// info/attributes (the attribute source git ranks first) unsets every
// attribute that changes content, like internal/snapshot's shadow: each
// checked-out file is exactly its blob's bytes, no eol conversion, no
// ident, no filter (so no smudge, no LFS), and nothing the source's config
// chooses runs, because none of it is copied and every call goes through
// internal/gitexec. Nothing is written into the source repository.
//
// Test code runs in the checkout and may rewrite anything in it, its .git
// included; nothing here trusts that directory after Checkout returns: the
// commit's tree entries are kept in memory, Apply writes through an
// os.Root without following symbolic links, and Hash builds the tree from
// those entries and the changes' bytes in a private repository of its own.
//
// Leaf engine: imports nothing above it.
package cleantree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/safefile"
)

// neutralAttributes is the checkout's info/attributes: every file's bytes
// are its blob's bytes, whatever the tree's .gitattributes say.
const neutralAttributes = "* -text !eol !crlf -ident -filter !working-tree-encoding !diff !merge\n"

// gitTimeout bounds each git call but those copying and checking out the
// commit's files.
const gitTimeout = 2 * time.Minute

// checkoutTimeout bounds copying the objects of, and writing, a large work
// tree.
const checkoutTimeout = 15 * time.Minute

// Tree is a clean checkout of one commit. Its methods are not safe for
// concurrent use.
type Tree struct {
	dir    string // the work tree, absolute, symbolic links resolved
	commit string // full commit id
	tree   string // the commit's tree id
	format string // object format: "sha1" or "sha256"

	// entries maps every non-tree entry of the commit's tree (files,
	// symbolic links, gitlinks) to its mode and object, order lists them
	// in index order, dirs counts the entries below each directory. All
	// are read from the objects before any test code ran, never from the
	// work tree.
	entries map[string]entry
	order   []string
	dirs    map[string]int
	closed  bool
	// links are the dependency links LinkDependency made: no change may
	// write at or below one (it would write through it).
	links []string
}

// entry is one non-tree entry of the commit's tree.
type entry struct {
	mode string
	oid  string
}

// Checkout makes a clean checkout of commit (a full object id or anything
// rev-parse resolves to a commit) of the repository at repoDir in a new
// temporary directory (under os.TempDir(), name prefix
// "mini-agent-clean-"): the commit's tracked files, with a .git whose HEAD
// is detached at the commit and whose index matches it. A submodule
// (gitlink, mode 160000) is left as an empty directory, as git leaves an
// uninitialised submodule. Close removes the directory.
//
// repoDir may be a work tree (a linked worktree too), a subdirectory of
// one, or a bare repository, shallow or not. The commit is looked up and
// its objects read in the source; nothing is written there. The
// checkout's history is the commit alone (it is marked shallow).
func Checkout(ctx context.Context, repoDir, commit string) (*Tree, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cleantree: %w", err)
	}
	if commit == "" {
		return nil, errors.New("cleantree: no commit given")
	}
	src, err := filepath.Abs(repoDir)
	if err != nil {
		return nil, fmt.Errorf("cleantree: %w", err)
	}
	// git opens HEAD, config, index... with a blocking open.
	if err := gitexec.CheckRepoInputs(src); err != nil {
		return nil, fmt.Errorf("cleantree: %w", err)
	}
	format, err := git(ctx, src, nil, "rev-parse", "--show-object-format")
	if err != nil {
		return nil, fmt.Errorf("cleantree: %s is not a git repository: %w", repoDir, err)
	}
	if format != "sha1" && format != "sha256" {
		return nil, fmt.Errorf("cleantree: unknown object format %q", format)
	}
	id, err := git(ctx, src, nil, "rev-parse", "--verify", "--end-of-options", commit+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("cleantree: %q is not a commit of %s: %w", commit, repoDir, err)
	}
	tree, err := git(ctx, src, nil, "rev-parse", "--verify", "--end-of-options", id+"^{tree}")
	if err != nil {
		return nil, fmt.Errorf("cleantree: %w", err)
	}
	t := &Tree{commit: id, tree: tree, format: format}
	tmp, err := os.MkdirTemp("", "mini-agent-clean-")
	if err != nil {
		return nil, fmt.Errorf("cleantree: %w", err)
	}
	if t.dir, err = filepath.EvalSymlinks(tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("cleantree: %w", err)
	}
	if err := t.populate(ctx, src); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// populate makes the checkout's repository and writes its work tree.
func (t *Tree) populate(ctx context.Context, src string) error {
	gitDir := filepath.Join(t.dir, ".git")
	env := []string{"GIT_DIR=" + gitDir, "GIT_WORK_TREE=" + t.dir}
	// --template=: no sample hooks, no info/exclude, nothing but git's own
	// defaults.
	if _, err := git(ctx, t.dir, nil, "init", "-q", "--template=", "--object-format="+t.format, t.dir); err != nil {
		return fmt.Errorf("cleantree: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(gitDir, "info"), 0o755); err != nil {
		return fmt.Errorf("cleantree: %w", err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "info", "attributes"), []byte(neutralAttributes), 0o644); err != nil {
		return fmt.Errorf("cleantree: %w", err)
	}
	if err := t.copyObjects(ctx, src, env); err != nil {
		return err
	}
	// The commit's parents are not there: say so, and history walks
	// (git log, go build's VCS stamp) stop at the commit.
	if err := os.WriteFile(filepath.Join(gitDir, "shallow"), []byte(t.commit+"\n"), 0o644); err != nil {
		return fmt.Errorf("cleantree: %w", err)
	}
	if err := t.readEntries(ctx, env); err != nil {
		return err
	}
	_, err := gitexec.Run(ctx, gitexec.Options{Dir: t.dir, Env: env, Timeout: checkoutTimeout}, "checkout", "-q", "--detach", t.commit, "--")
	if err != nil {
		return fmt.Errorf("cleantree: checkout of %s: %w", t.commit, err)
	}
	return nil
}

// copyObjects packs the commit and every tree and blob below it in the
// source (pack-objects reads objects and writes only its standard output)
// and indexes the pack into the checkout's object store (index-pack
// verifies every object id).
func (t *Tree) copyObjects(ctx context.Context, src string, env []string) error {
	list, err := gitexec.Run(ctx, gitexec.Options{Dir: src, Timeout: checkoutTimeout}, "rev-list", "--objects", "--no-walk", t.commit)
	if err != nil {
		return fmt.Errorf("cleantree: listing the objects of %s: %w", t.commit, err)
	}
	pack, cancel, err := gitexec.Command(ctx, gitexec.Options{Dir: src, Stdin: bytes.NewReader(list), Timeout: checkoutTimeout},
		"pack-objects", "-q", "--stdout", "--window=0")
	if err != nil {
		return fmt.Errorf("cleantree: %w", err)
	}
	defer cancel()
	stderr := &boundedBuffer{left: 2 << 10}
	pack.Stderr = stderr
	out, err := pack.StdoutPipe()
	if err != nil {
		return fmt.Errorf("cleantree: %w", err)
	}
	if err := pack.Start(); err != nil {
		return fmt.Errorf("cleantree: git pack-objects: %w", err)
	}
	_, indexErr := gitexec.Run(ctx, gitexec.Options{Dir: t.dir, Env: env, Stdin: out, Timeout: checkoutTimeout}, "index-pack", "--stdin")
	// index-pack read the pack to its end, or stopped: pack-objects then
	// ends on a broken pipe.
	out.Close()
	packErr := pack.Wait()
	if packErr != nil {
		packErr = fmt.Errorf("git pack-objects: %w: %s", packErr, strings.TrimSpace(stderr.buf.String()))
	}
	if err := errors.Join(packErr, indexErr); err != nil {
		return fmt.Errorf("cleantree: copying the objects of %s: %w", t.commit, err)
	}
	return nil
}

// readEntries lists the commit's tree into entries and dirs.
func (t *Tree) readEntries(ctx context.Context, env []string) error {
	out, err := gitexec.Run(ctx, gitexec.Options{Dir: t.dir, Env: env, Timeout: gitTimeout},
		"ls-tree", "-r", "-z", "--full-tree", t.tree)
	if err != nil {
		return fmt.Errorf("cleantree: listing %s: %w", t.tree, err)
	}
	t.entries = map[string]entry{}
	t.dirs = map[string]int{}
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		// <mode> SP <type> SP <object> TAB <path>
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 3 || len(name) == 0 {
			return fmt.Errorf("cleantree: unexpected git ls-tree record %q", rec)
		}
		p := string(name)
		t.entries[p] = entry{mode: fields[0], oid: fields[2]}
		t.order = append(t.order, p)
		for d := parentDir(p); d != ""; d = parentDir(d) {
			t.dirs[d]++
		}
	}
	return nil
}

// parentDir is the directory of a slash path, "" at the top.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// Dir is the work tree: an absolute path with symbolic links resolved.
func (t *Tree) Dir() string { return t.dir }

// Commit is the full id of the checked-out commit.
func (t *Tree) Commit() string { return t.commit }

// BaseTree is the id of the commit's tree.
func (t *Tree) BaseTree() string { return t.tree }

// Tracked reports whether path (repository-relative, slash-separated) is a
// tracked file at the commit: a regular file, an executable or a symbolic
// link. Directories and submodules are not files. The answer comes from
// the commit's objects, not from the work tree.
func (t *Tree) Tracked(path string) bool {
	switch t.entries[path].mode {
	case "100644", "100755", "120000":
		return true
	}
	return false
}

// Close removes the temporary directory, whatever test code left in it:
// directories made read-only (chmod 0555, even 0000) are made writable
// as the removal walks them. A second call does nothing.
func (t *Tree) Close() error {
	if t.closed || t.dir == "" {
		return nil
	}
	t.closed = true
	if err := removeTree(t.dir); err != nil {
		return fmt.Errorf("cleantree: removing %s: %w", t.dir, err)
	}
	return nil
}

// removeTree removes dir, making its directories writable first if a plain
// removal fails.
func removeTree(dir string) error {
	if os.RemoveAll(dir) == nil {
		return nil
	}
	makeWritable(dir)
	return os.RemoveAll(dir)
}

// makeWritable gives dir and every directory below it mode 0700 (on
// Windows, every file 0600 too: a read-only file cannot be deleted there).
// It never follows a symbolic link: dir itself is checked with Lstat, and
// the walk below it goes through an os.Root, non-blocking (a FIFO swapped
// in for a directory is not waited on). Files are left alone on Unix: one
// may be a hard link to a file outside, whose mode is not ours to change.
func makeWritable(dir string) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return
	}
	os.Chmod(dir, 0o700)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return
	}
	defer root.Close()
	fs.WalkDir(safefile.FS(root), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || d == nil:
			// An unreadable directory: skip it, remove what can be.
			return nil
		case d.IsDir():
			if p != "." {
				root.Chmod(p, 0o700)
			}
		case d.Type().IsRegular() && os.PathSeparator == '\\':
			root.Chmod(p, 0o600)
		}
		return nil
	})
}

// boundedBuffer keeps the first left bytes written to it.
type boundedBuffer struct {
	buf  bytes.Buffer
	left int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if k := min(b.left, len(p)); k > 0 {
		b.buf.Write(p[:k])
		b.left -= k
	}
	return len(p), nil
}

// git runs one harness git command (internal/gitexec: one binary,
// allow-listed environment, no hook, fsmonitor or config-chosen program).
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return gitexec.Output(ctx, gitexec.Options{Dir: dir, Env: env, Timeout: gitTimeout}, args...)
}
