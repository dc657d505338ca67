package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/safefile"
)

// The one-pass listing. `git ls-files --cached --others --exclude-standard`
// walks the whole tree to find untracked files, and before it may run, a
// second walk had to check that no .gitignore git would open is a FIFO (git
// opens them with a blocking open). Here one parallel walk does both: it
// applies the ignore rules as it goes (search_ignore.go, git's semantics),
// checks each .gitignore's type where git would read it, and collects the
// untracked files; git only reads the index (`ls-files --cached`, no file
// of the work tree opened), concurrently. The union is what the full
// listing says. Wherever the walk cannot be sure it agrees with git — a
// nested repository or a gitlink, a symlinked or oversized .gitignore,
// core.ignoreCase or core.worktree set, a
// workspace below its repository's top — it answers errListUnsure and the
// caller runs the old way (checkIgnoreFiles, then git's own listing).

// errListUnsure says the one-pass listing cannot vouch for its answer.
var errListUnsure = errors.New("one-pass listing unsure")

// maxWalkWorkers bounds the goroutines of the walk.
const maxWalkWorkers = 8

// onePassList lists the workspace's files in one walk plus an index read.
func (w *Workspace) onePassList(ctx context.Context) ([]string, error) {
	exclude, err := w.listRepoRules()
	if err != nil {
		return nil, err
	}
	type cachedOut struct {
		files []string
		err   error
	}
	cached := make(chan cachedOut, 1)
	go func() {
		if err := w.checkListConfig(ctx); err != nil {
			cached <- cachedOut{nil, err}
			return
		}
		out, err := gitexec.Run(ctx, gitexec.Options{Dir: w.dir, Timeout: gitListTimeout}, "ls-files", "-z", "--cached")
		cached <- cachedOut{splitNUL(out), err}
	}()
	walked, werr := walkUntracked(ctx, w.root, exclude)
	c := <-cached
	switch {
	case werr != nil:
		return nil, werr
	case c.err != nil:
		return nil, c.err
	}
	tracked := c.files
	slices.Sort(tracked) // git's order already; sorting is what the search below relies on
	// A directory git would treat as a nested repository (a .git entry,
	// nothing tracked below) or a gitlink: git decides by reading it.
	for _, d := range walked.gitDirs {
		if !hasUnder(tracked, d) {
			return nil, errListUnsure
		}
	}
	for _, d := range walked.dirs {
		if _, found := slices.BinarySearch(tracked, d); found {
			return nil, errListUnsure
		}
	}
	slices.Sort(walked.files)
	return mergeSorted(tracked, walked.files), nil
}

// listRepoRules checks that the workspace is a repository's top directory
// and returns the rules of its info/exclude (git reads it before any
// .gitignore; core.excludesFile is /dev/null for the harness's git).
func (w *Workspace) listRepoRules() (*ignoreFile, error) {
	if fi, err := os.Lstat(filepath.Join(w.dir, ".git")); err != nil || !(fi.IsDir() || fi.Mode().IsRegular()) {
		return nil, errListUnsure // not the top of a work tree (or no repository)
	}
	dirs, err := gitexec.GitDirs(w.dir)
	if err != nil || dirs == nil {
		return nil, errListUnsure
	}
	common := dirs[len(dirs)-1]
	data, err := safefile.ReadPath(filepath.Join(common, "info", "exclude"), maxGitignoreBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, errListUnsure
	}
	return parseIgnore(data, "."), nil
}

// checkListConfig asks git (which reads included files too) whether the
// repository's configuration changes what the walk models: case-folded
// matching (core.ignoreCase) or a work tree elsewhere (core.worktree).
func (w *Workspace) checkListConfig(ctx context.Context) error {
	out, err := gitexec.Run(ctx, gitexec.Options{Dir: w.dir, Timeout: gitListTimeout},
		"config", "-z", "--get-regexp", `^core\.(ignorecase|worktree)$`)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil // neither is set
	}
	if err != nil {
		return errListUnsure
	}
	for _, kv := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		key, value, _ := bytes.Cut(kv, []byte{'\n'})
		switch v := strings.ToLower(string(value)); {
		case strings.EqualFold(string(key), "core.ignorecase") && (v == "false" || v == "no" || v == "off" || v == "0"):
		default:
			return errListUnsure
		}
	}
	return nil
}

// walkResult is what walkUntracked found.
type walkResult struct {
	files   []string // regular files and symlinks, not ignored
	dirs    []string // directories entered, the root excluded
	gitDirs []string // entered directories holding a ".git" entry
}

// walkUntracked walks root as git's untracked-file search would: ignored
// directories are not entered, `.git` entries are skipped, and each
// .gitignore met is checked and applied. A .gitignore that is not a
// regular file or a symlink fails the walk with errUntrustedIgnore.
func walkUntracked(ctx context.Context, root *os.Root, exclude *ignoreFile) (walkResult, error) {
	lister := newDirLister(root)
	defer lister.close()
	var base []*ignoreFile
	if exclude != nil && len(exclude.rules) > 0 {
		base = []*ignoreFile{exclude}
	}
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		queue   = []walkTask{{".", base}}
		busy    int
		out     walkResult
		failure error
		seen    int
	)
	fail := func(err error) {
		if failure == nil {
			failure = err
		}
		cond.Broadcast()
	}
	worker := func() {
		var files, dirs, gitDirs []string
		defer func() {
			mu.Lock()
			out.files = append(out.files, files...)
			out.dirs = append(out.dirs, dirs...)
			out.gitDirs = append(out.gitDirs, gitDirs...)
			mu.Unlock()
		}()
		for {
			mu.Lock()
			for len(queue) == 0 && busy > 0 && failure == nil {
				cond.Wait()
			}
			if len(queue) == 0 || failure != nil {
				cond.Broadcast()
				mu.Unlock()
				return
			}
			t := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			busy++
			mu.Unlock()

			var subs []walkTask
			err := ctx.Err()
			if err == nil {
				subs, err = walkOneDir(root, lister, t.dir, t.stack, &files, &gitDirs)
			}
			mu.Lock()
			busy--
			seen += len(subs)
			switch {
			case err != nil:
				fail(err)
			case seen+len(files) > maxListedFiles:
				fail(errListUnsure) // the old way caps the listing
			default:
				for _, s := range subs {
					dirs = append(dirs, s.dir)
					queue = append(queue, s)
				}
				cond.Broadcast()
			}
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0)*2, maxWalkWorkers) {
		wg.Go(worker)
	}
	wg.Wait()
	if failure != nil {
		return walkResult{}, failure
	}
	return out, nil
}

// walkTask is a directory still to walk, with the ignore files that apply
// to its entries.
type walkTask struct {
	dir   string
	stack []*ignoreFile
}

// walkOneDir lists dir, reads its .gitignore, appends its files and
// returns its subdirectories to walk.
func walkOneDir(root *os.Root, lister *dirLister, dir string, stack []*ignoreFile, files, gitDirs *[]string) ([]walkTask, error) {
	ents, err := lister.list(dir)
	if err != nil {
		if dir == "." {
			return nil, err
		}
		return nil, nil // gone or swapped since its parent was read: git would not list it either
	}
	for _, e := range ents {
		if e.name != ".gitignore" {
			continue
		}
		rel := path.Join(dir, ".gitignore")
		switch {
		case e.typ.IsRegular():
		case e.typ&fs.ModeSymlink != 0:
			return nil, errListUnsure // git (2.32+) ignores it; older git follows it
		default:
			return nil, fmt.Errorf("%w: %s (%s)", errUntrustedIgnore, rel, e.typ.Type())
		}
		data, err := safefile.ReadFile(root, rel, maxGitignoreBytes)
		if err != nil {
			return nil, errListUnsure // swapped since listed, or too large for the walk's reading
		}
		if ig := parseIgnore(data, dir); len(ig.rules) > 0 {
			stack = append(stack[:len(stack):len(stack)], ig)
		}
	}
	var subs []walkTask
	for _, e := range ents {
		if strings.EqualFold(e.name, ".git") {
			if e.name == ".git" && dir != "." {
				*gitDirs = append(*gitDirs, dir)
			}
			continue
		}
		rel := e.name
		if dir != "." {
			rel = dir + "/" + e.name
		}
		switch {
		case e.typ.IsDir():
			if !ignored(stack, rel, true) {
				subs = append(subs, walkTask{rel, stack})
			}
		case e.typ.IsRegular() || e.typ&fs.ModeSymlink != 0:
			if !ignored(stack, rel, false) {
				*files = append(*files, rel)
			}
		}
	}
	return subs, nil
}

// hasUnder reports whether sorted holds a path inside directory dir.
func hasUnder(sorted []string, dir string) bool {
	prefix := dir + "/"
	i, _ := slices.BinarySearch(sorted, prefix)
	return i < len(sorted) && strings.HasPrefix(sorted[i], prefix)
}

// mergeSorted returns the sorted union of two sorted lists.
func mergeSorted(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return slices.Compact(out)
}

// splitNUL splits NUL-terminated git output, dropping "dir/" entries.
func splitNUL(out []byte) []string {
	var files []string
	for len(out) > 0 && len(files) < maxListedFiles {
		var name []byte
		name, out, _ = bytes.Cut(out, []byte{0})
		if len(name) > 0 && name[len(name)-1] != '/' {
			files = append(files, string(name))
		}
	}
	return files
}
