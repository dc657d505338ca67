package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/org/mini-agent/internal/cleantree"
)

// maxDependencyDirs and maxDependencyEntries bound what the harness links
// into a clean checkout and fingerprints: a workspace may hold a great
// many node_modules directories (a monorepo's workspaces), and each may
// hold a great many files.
const (
	maxDependencyDirs    = 64
	maxDependencyEntries = 2_000_000
)

// rootDependencyDirs are the directories at the workspace's root that hold
// installed dependencies by convention (Python virtual environments);
// node_modules is one at any depth.
var rootDependencyDirs = []string{".venv", "venv"}

// dependencyDirs are the workspace's installed dependencies that a clean
// checkout of the commit lacks and a test command needs: every ignored
// node_modules directory git lists (its own nested ones are inside it) and
// an ignored virtual environment at the root. ignored is git's listing of
// ignored files, directories collapsed ("node_modules/"). Slash-separated,
// sorted, at most maxDependencyDirs.
func dependencyDirs(ignored map[string]bool) []string {
	var out []string
	for p := range ignored {
		dir, ok := strings.CutSuffix(p, "/")
		if !ok {
			continue
		}
		if path.Base(dir) == "node_modules" || slices.Contains(rootDependencyDirs, dir) {
			out = append(out, dir)
		}
	}
	slices.Sort(out)
	if len(out) > maxDependencyDirs {
		out = out[:maxDependencyDirs]
	}
	return out
}

// WorkspaceDependencies are the installed dependencies of the workspace at
// workdir that a clean checkout lacks (dependencyDirs of git's listing of
// its ignored files); none when git cannot list them.
func WorkspaceDependencies(ctx context.Context, workdir string) []string {
	ignored, err := ignoredFiles(ctx, workdir)
	if err != nil {
		return nil
	}
	return dependencyDirs(ignored)
}

// LinkDependencies gives the clean checkout t the workspace's installed
// dependencies deps (slash-separated, relative to workdir) read-only, as
// links (cleantree.LinkDependency). Call it before applying a change. The
// notes say which were linked and which could not be.
func LinkDependencies(t *cleantree.Tree, workdir string, deps []string) []string {
	var notes, linked []string
	for _, dep := range deps {
		if err := t.LinkDependency(dep, filepath.Join(workdir, filepath.FromSlash(dep))); err != nil {
			notes = append(notes, "the workspace's "+dep+" is not in the clean checkout: "+oneLine(err.Error()))
			continue
		}
		linked = append(linked, dep)
	}
	if len(linked) > 0 {
		notes = append(notes, "the workspace's installed dependencies are in the clean checkout, read-only: "+strings.Join(linked, ", "))
	}
	return notes
}

// fingerprintDirs hashes what lstat says of every entry below each of
// rels in root (path, type and mode; for files and links also size,
// modification and change times, inode; a link's target), never following
// a link: a dependency test
// code or the model changed during the run gives another fingerprint.
func fingerprintDirs(root string, rels []string) (string, error) {
	h := sha256.New()
	n := 0
	for _, rel := range rels {
		top := filepath.Join(root, filepath.FromSlash(rel))
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == top {
					fmt.Fprintf(h, "%s missing\n", rel)
					return nil
				}
				return err
			}
			if d.IsDir() && p != top && cacheDir(p, d.Name()) {
				return filepath.SkipDir
			}
			if n++; n > maxDependencyEntries {
				return fmt.Errorf("more than %d entries", maxDependencyEntries)
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			name, _ := filepath.Rel(root, p)
			if d.IsDir() {
				// Its entries are hashed one by one; its own times move
				// when a skipped cache directory is made in it.
				fmt.Fprintf(h, "%q %v\n", filepath.ToSlash(name), fi.Mode())
				return nil
			}
			fmt.Fprintf(h, "%q %v %d %d %s", filepath.ToSlash(name), fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), statExtra(fi))
			if fi.Mode()&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(p)
				fmt.Fprintf(h, " -> %q", target)
			}
			h.Write([]byte{'\n'})
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("fingerprint of %s: %w", rel, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// cacheDir reports whether the directory name at p holds caches that tools
// rewrite on every run, not dependencies: node_modules' own dot-directories
// (.cache, .vite, ...) but .bin and .pnpm (links to the packages and the
// packages themselves), and Python's __pycache__.
func cacheDir(p, name string) bool {
	if name == "__pycache__" {
		return true
	}
	return strings.HasPrefix(name, ".") && name != ".bin" && name != ".pnpm" && filepath.Base(filepath.Dir(p)) == "node_modules"
}
