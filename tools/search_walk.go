package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/safefile"
)

// Limits of file listing.
const (
	// gitListTimeout bounds `git ls-files`; past it the search falls back
	// to its own walk rather than hang the loop.
	gitListTimeout = 20 * time.Second
	// maxGitignoreBytes caps one .gitignore file read by the fallback walker.
	maxGitignoreBytes = 256 << 10
	// maxListedFiles bounds how many paths one listing collects.
	maxListedFiles = 500_000
)

// errListCapped is returned by walkTree's callback chain when a walk has
// visited as many entries as it was allowed to.
var errListCapped = errors.New("listing capped")

// listFiles returns the workspace's searchable files (tracked plus untracked
// but not ignored), slash-separated, sorted and without duplicates. It asks
// git when the workspace is a work tree and otherwise walks the tree itself,
// honouring .gitignore files. Paths under any `.git` are never returned.
func (w *Workspace) listFiles(ctx context.Context) ([]string, error) {
	files, gitErr := w.gitListFiles(ctx)
	if gitErr != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		files = nil
		err := walkTree(ctx.Done(), w.root, maxListedFiles, func(rel string, d fs.DirEntry) error {
			if d.Type().IsRegular() {
				files = append(files, rel)
			}
			return nil
		})
		if err != nil && !errors.Is(err, errListCapped) {
			return nil, fmt.Errorf("list files: %w", err)
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)
	files = slices.DeleteFunc(files, isGitPath)
	return files, nil
}

// gitListFiles runs `git ls-files` in the workspace. Any failure (git
// missing, not a work tree, a repository git refuses to trust, an input git
// would block on) is returned so the caller can fall back to walking the
// tree. git runs through gitexec: the binary resolved at start-up, an
// allow-listed environment (no token or API key for a left-behind process
// to read from /proc/PID/environ), no hook or fsmonitor, a deadline.
func (w *Workspace) gitListFiles(ctx context.Context) ([]string, error) {
	// git opens every .gitignore and the repository's files with a
	// blocking open: a FIFO left there by test code would stall it.
	if err := gitexec.CheckRepoInputs(w.dir); err != nil {
		return nil, fmt.Errorf("git ls-files not trusted: %w", err)
	}
	files, err := w.onePassList(ctx)
	if !errors.Is(err, errListUnsure) {
		if errors.Is(err, errUntrustedIgnore) {
			err = fmt.Errorf("git ls-files not trusted: %w", err)
		}
		return files, err
	}
	if err := checkIgnoreFiles(ctx.Done(), w.root); err != nil {
		return nil, fmt.Errorf("git ls-files not trusted: %w", err)
	}
	out, err := gitexec.Run(ctx, gitexec.Options{Dir: w.dir, Timeout: gitListTimeout},
		"ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	// --others lists a nested repository as "dir/"; it holds no file of
	// this work tree: splitNUL drops it.
	return splitNUL(out), nil
}

// errUntrustedIgnore is returned by checkIgnoreFiles.
var errUntrustedIgnore = errors.New("a .gitignore is not a regular file")

// checkIgnoreFiles walks the directories of the tree as git's listing
// would (ignored directories and .git are not entered), reading directories
// and .gitignore files only, and refuses when a .gitignore entry is
// anything but a regular file or a symlink (which git does not follow).
func checkIgnoreFiles(done <-chan struct{}, root *os.Root) error {
	seen := 0
	// Each directory is opened relative to its parent's descriptor: one
	// system call, no symlink followed, no FIFO waited on.
	var visit func(d *os.File, dir string, stack []*ignoreFile) error
	visit = func(d *os.File, dir string, stack []*ignoreFile) error {
		select {
		case <-done:
			return context.Canceled
		default:
		}
		if seen++; seen > maxListedFiles {
			return errListCapped
		}
		ents, err := d.ReadDir(-1)
		if err != nil {
			return nil
		}
		for _, e := range ents {
			if e.Name() == ".gitignore" {
				if t := e.Type(); !t.IsRegular() && t&fs.ModeSymlink == 0 {
					return fmt.Errorf("%w: %s (%s)", errUntrustedIgnore, path.Join(dir, ".gitignore"), t.Type())
				}
				if ig := readIgnoreFile(root, dir); ig != nil {
					stack = append(stack[:len(stack):len(stack)], ig)
				}
			}
		}
		for _, e := range ents {
			if !e.IsDir() || strings.EqualFold(e.Name(), ".git") {
				continue
			}
			rel := path.Join(dir, e.Name())
			if ignored(stack, rel, true) {
				continue
			}
			sub, err := safefile.OpenDirAt(d, e.Name())
			if err != nil {
				continue // gone or swapped: git would not list it either
			}
			err = visit(sub, rel, stack)
			sub.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	top, fi, err := safefile.OpenFileOrDir(root, ".")
	if err != nil {
		return err
	}
	defer top.Close()
	if !fi.IsDir() {
		return nil
	}
	err = visit(top, ".", nil)
	if errors.Is(err, errListCapped) {
		return nil
	}
	return err
}

// gitEnv is the environment the harness's git calls get (see gitexec.Env):
// allow-listed variables only, so neither a secret nor an inherited GIT_DIR
// or GIT_INDEX_FILE reaches git.
func gitEnv() []string { return gitexec.Env(nil) }

// walkTree walks root in lexical order without following symlinks, skipping
// `.git` entries and whatever the .gitignore files met on the way exclude.
// fn sees every kept entry (files, directories, symlinks) except the root.
// The walk stops with errListCapped after limit entries and with the done
// channel's closing (a nil channel never closes).
func walkTree(done <-chan struct{}, root *os.Root, limit int, fn func(rel string, d fs.DirEntry) error) error {
	fsys := safefile.FS(root) // a FIFO swapped in for a directory is refused, not waited on
	var stack []*ignoreFile   // .gitignore files of the current directory chain
	seen := 0
	return fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			if rel == "." {
				return err
			}
			return nil // unreadable entry: skip it, keep walking
		}
		select {
		case <-done:
			return context.Canceled
		default:
		}
		if rel != "." {
			if strings.EqualFold(d.Name(), ".git") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			for len(stack) > 0 && !isUnder(rel, stack[len(stack)-1].base) {
				stack = stack[:len(stack)-1]
			}
			if ignored(stack, rel, d.IsDir()) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			seen++
			if seen > limit {
				return errListCapped
			}
			if err := fn(rel, d); err != nil {
				return err
			}
		}
		if d.IsDir() {
			if ig := readIgnoreFile(root, rel); ig != nil {
				stack = append(stack, ig)
			}
		}
		return nil
	})
}

// isUnder reports whether rel lies inside directory base ("." holds all).
func isUnder(rel, base string) bool {
	return base == "." || strings.HasPrefix(rel, base+"/")
}

// readIgnoreFile parses dir/.gitignore, or returns nil when there is none.
func readIgnoreFile(root *os.Root, dir string) *ignoreFile {
	name := path.Join(dir, ".gitignore")
	// Opened non-blocking and checked on the descriptor: a FIFO named
	// .gitignore is skipped, never waited on.
	data, err := safefile.ReadFile(root, name, maxGitignoreBytes)
	if err != nil {
		return nil
	}
	ig := parseIgnore(data, dir)
	if len(ig.rules) == 0 {
		return nil
	}
	return ig
}
