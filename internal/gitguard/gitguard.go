// Package gitguard keeps a repository's .git the harness's: it records the
// state the harness relies on before code under test runs and, after each
// run, reports and undoes every change to it.
//
// Guarded, in the git directory (and the common directory of a linked
// worktree): every top-level file (HEAD, config, index, packed-refs,
// commondir, ...), and everything under hooks/, info/, refs/ and
// objects/info/. That is what decides which programs git runs (config:
// filters, fsmonitor, hooksPath, includes; hooks; info/attributes), what
// it reads (index, info/exclude, alternates) and what HEAD and the refs
// name. The index is guarded too: search lists tracked files from it, and a
// FIFO or a rewritten index would stall or skew it. Objects are not: they
// are content-addressed and adding one changes nothing the harness reads;
// logs/ (reflogs) are not read by the harness either.
//
// Leaf engine: imports nothing above it.
package gitguard

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/safefile"
)

// guardedDirs are the directories of a git directory guarded recursively.
var guardedDirs = []string{"hooks", "info", "refs", "objects/info"}

// Limits: the saved copies live in memory.
const (
	maxSavedBytes   = 256 << 20 // all files together; past it only digests are kept
	maxGuardEntries = 200_000
)

// Change is one difference found (and undone, if Restored) in .git.
type Change struct {
	Path     string // slash path under the worktree's .git (".git/config")
	Change   string // added, modified, removed, type changed
	Restored bool
	Err      string // why it could not be undone
}

func (c Change) String() string {
	s := c.Path + " " + c.Change
	if c.Restored {
		return s + " (undone)"
	}
	return s + " (NOT undone: " + c.Err + ")"
}

type kind int

const (
	kindFile kind = iota + 1
	kindDir
	kindLink
	kindOther
)

type entry struct {
	kind   kind
	perm   fs.FileMode
	data   []byte // file content or link target; nil when only the digest is kept
	digest [32]byte
	size   int64
}

// area is one guarded git directory.
type area struct {
	dir   string // absolute
	label string // how paths are shown: ".git" or the directory
	saved map[string]entry
	info  fs.FileInfo // identity of the directory itself
}

// Guard is the recorded state of one repository's .git.
type Guard struct {
	dotGit  string // the worktree's .git entry
	dotKind kind
	dotData []byte // content of a .git file ("gitdir: ...")
	dotInfo fs.FileInfo
	areas   []*area
	budget  int64
}

// New records the .git state of the repository holding dir. A workspace
// with no repository is guarded too: a .git created later is removed.
func New(dir string) (*Guard, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	g := &Guard{budget: maxSavedBytes}
	gitDir, err := gitexec.GitDir(abs)
	if err != nil {
		return nil, fmt.Errorf("git guard: %w", err)
	}
	if gitDir == "" {
		g.dotGit = filepath.Join(abs, ".git")
		return g, nil
	}
	g.dotGit = dotGitOf(abs)
	fi, err := os.Lstat(g.dotGit)
	if err != nil {
		return nil, fmt.Errorf("git guard: %w", err)
	}
	g.dotInfo = fi
	if fi.IsDir() {
		g.dotKind = kindDir
	} else {
		g.dotKind = kindFile
		if g.dotData, err = safefile.ReadPath(g.dotGit, 4096); err != nil {
			return nil, fmt.Errorf("git guard: %w", err)
		}
	}
	dirs := []string{gitDir}
	if data, err := safefile.ReadPath(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		if common = filepath.Clean(common); common != gitDir {
			dirs = append(dirs, common)
		}
	}
	for _, d := range dirs {
		a := &area{dir: d, label: d}
		if d == gitDir && g.dotKind == kindDir {
			a.label = ".git"
		}
		if a.info, err = os.Lstat(d); err != nil {
			return nil, fmt.Errorf("git guard: %w", err)
		}
		if a.saved, err = g.scan(a, true); err != nil {
			return nil, fmt.Errorf("git guard: %w", err)
		}
		g.areas = append(g.areas, a)
	}
	return g, nil
}

// dotGitOf is the first .git entry in dir or a parent.
func dotGitOf(dir string) string {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		if _, err := os.Lstat(p); err == nil {
			return p
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Join(dir, ".git")
		}
		d = parent
	}
}

// scan reads the guarded entries of a. With keep, file contents are kept
// (within the budget) for restoring; otherwise only digests are compared.
func (g *Guard) scan(a *area, keep bool) (map[string]entry, error) {
	root, err := os.OpenRoot(a.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := map[string]entry{}
	top, err := readDir(root, ".")
	if err != nil {
		return nil, err
	}
	var add func(rel string, fi fs.FileInfo) error
	add = func(rel string, fi fs.FileInfo) error {
		if len(out) >= maxGuardEntries {
			return fmt.Errorf("more than %d entries under %s", maxGuardEntries, a.dir)
		}
		e := entry{perm: fi.Mode().Perm(), size: fi.Size()}
		switch {
		case fi.Mode().IsRegular():
			e.kind = kindFile
			data, err := safefile.ReadFile(root, rel, 0)
			if err != nil {
				// Swapped for something else since the listing.
				e.kind = kindOther
				break
			}
			e.digest, e.size = sha256.Sum256(data), int64(len(data))
			if keep && g.budget >= int64(len(data)) {
				g.budget -= int64(len(data))
				e.data = data
			}
		case fi.IsDir():
			e.kind = kindDir
		case fi.Mode()&fs.ModeSymlink != 0:
			e.kind = kindLink
			target, err := root.Readlink(rel)
			if err != nil {
				return err
			}
			e.data = []byte(target)
			e.digest = sha256.Sum256(e.data)
		default:
			e.kind = kindOther
			e.perm = fi.Mode()
		}
		out[rel] = e
		if e.kind == kindDir && guarded(rel) {
			ents, err := readDir(root, rel)
			if err != nil {
				return err
			}
			for _, c := range ents {
				if err := add(path.Join(rel, c.Name()), c); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, fi := range top {
		name := fi.Name()
		if fi.IsDir() && !slices.Contains(guardedDirs, name) && name != "objects" {
			continue // objects/, logs/, modules/, worktrees/...: not guarded
		}
		if name == "objects" && fi.IsDir() {
			if ofi, err := root.Lstat("objects/info"); err == nil {
				if err := add("objects/info", ofi); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := add(name, fi); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// guarded reports whether the directory rel is inside a guarded tree.
func guarded(rel string) bool {
	for _, d := range guardedDirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// readDir lists a directory through a non-blocking open, as Lstat infos.
func readDir(root *os.Root, name string) ([]fs.FileInfo, error) {
	f, fi, err := safefile.OpenFileOrDir(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", name)
	}
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var out []fs.FileInfo
	for _, e := range ents {
		info, err := root.Lstat(path.Join(name, e.Name()))
		if err != nil {
			continue // gone meanwhile
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

func (e entry) same(o entry) bool {
	if e.kind != o.kind {
		return false
	}
	switch e.kind {
	case kindFile:
		return e.digest == o.digest && e.perm == o.perm
	case kindLink:
		return bytes.Equal(e.data, o.data)
	case kindDir:
		return true
	}
	return e.perm == o.perm
}

// Check compares .git with the recorded state and undoes every difference.
// It returns the differences found; an error means the guard could not
// look at all (the result then cannot be trusted).
func (g *Guard) Check() ([]Change, error) {
	var changes []Change
	if c, stop := g.checkDotGit(); c != nil {
		changes = append(changes, *c)
		if stop {
			return changes, nil
		}
	}
	for _, a := range g.areas {
		cs, err := g.checkArea(a)
		changes = append(changes, cs...)
		if err != nil {
			return changes, err
		}
	}
	return changes, nil
}

// checkDotGit checks the worktree's .git entry itself. stop means the areas
// cannot be checked (the .git directory was replaced).
func (g *Guard) checkDotGit() (*Change, bool) {
	fi, err := os.Lstat(g.dotGit)
	name := ".git"
	switch {
	case g.dotKind == 0: // there was none
		if err != nil {
			return nil, false
		}
		c := &Change{Path: name, Change: "added"}
		if rerr := os.RemoveAll(g.dotGit); rerr != nil {
			c.Err = rerr.Error()
		} else {
			c.Restored = true
		}
		return c, false
	case err != nil:
		return &Change{Path: name, Change: "removed", Err: "the repository's .git is gone: " + err.Error()}, true
	case g.dotKind == kindDir:
		if !os.SameFile(fi, g.dotInfo) {
			return &Change{Path: name, Change: "type changed", Err: "the .git directory was replaced; the original cannot be put back"}, true
		}
	case g.dotKind == kindFile:
		data, rerr := safefile.ReadPath(g.dotGit, 4096)
		if rerr == nil && bytes.Equal(data, g.dotData) {
			return nil, false
		}
		c := &Change{Path: name, Change: "modified"}
		if err := os.RemoveAll(g.dotGit); err != nil {
			c.Err = err.Error()
		} else if err := os.WriteFile(g.dotGit, g.dotData, 0o644); err != nil {
			c.Err = err.Error()
		} else {
			c.Restored = true
		}
		return c, false
	}
	return nil, false
}

func (g *Guard) checkArea(a *area) ([]Change, error) {
	if fi, err := os.Lstat(a.dir); err != nil || !os.SameFile(fi, a.info) {
		return []Change{{Path: a.label, Change: "type changed", Err: "the git directory was replaced or removed"}}, nil
	}
	now, err := g.scan(a, false)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(a.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var changes []Change
	show := func(rel string) string { return a.label + "/" + rel }
	// Extra or changed-type entries first, deepest first, so a directory
	// that replaced a file goes before the file is written back.
	var extra []string
	for rel, e := range now {
		if old, ok := a.saved[rel]; !ok || old.kind != e.kind {
			extra = append(extra, rel)
		}
	}
	slices.SortFunc(extra, func(x, y string) int { return strings.Compare(y, x) })
	for _, rel := range extra {
		if _, ok := a.saved[rel]; ok {
			continue // reported and rewritten below
		}
		if parentAlsoExtra(rel, now, a.saved) {
			if err := root.RemoveAll(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				changes = append(changes, Change{Path: show(rel), Change: "added", Err: err.Error()})
			}
			continue // reported with its top directory
		}
		c := Change{Path: show(rel), Change: "added"}
		if err := root.RemoveAll(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.Err = err.Error()
		} else {
			c.Restored = true
		}
		changes = append(changes, c)
	}
	var saved []string
	for rel := range a.saved {
		saved = append(saved, rel)
	}
	slices.Sort(saved) // parents before children
	for _, rel := range saved {
		old := a.saved[rel]
		cur, ok := now[rel]
		if ok && old.same(cur) {
			continue
		}
		c := Change{Path: show(rel), Change: "modified"}
		switch {
		case !ok:
			c.Change = "removed"
		case cur.kind != old.kind:
			c.Change = "type changed"
		}
		if err := restore(root, rel, old, ok && cur.kind != old.kind || ok && cur.kind == kindOther); err != nil {
			c.Err = err.Error()
		} else {
			c.Restored = true
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// parentAlsoExtra reports whether a parent directory of rel is itself new.
func parentAlsoExtra(rel string, now, saved map[string]entry) bool {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if _, ok := saved[d]; !ok {
			if _, inNow := now[d]; inNow {
				return true
			}
		}
	}
	return false
}

// restore puts the recorded entry e back at rel.
func restore(root *os.Root, rel string, e entry, replace bool) error {
	if replace {
		if err := root.RemoveAll(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	switch e.kind {
	case kindDir:
		if err := root.Mkdir(rel, e.perm|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	case kindLink:
		root.Remove(rel)
		return root.Symlink(string(e.data), rel)
	case kindFile:
		if e.data == nil && e.size > 0 {
			return errors.New("its content was too large to keep a copy")
		}
		tmp := rel + ".mini-agent-restore"
		root.Remove(tmp)
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = f.Write(e.data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = root.Chmod(tmp, e.perm)
		}
		if err == nil {
			// A directory put where the file was cannot be renamed over.
			if fi, lerr := root.Lstat(rel); lerr == nil && fi.IsDir() {
				err = root.RemoveAll(rel)
			}
		}
		if err == nil {
			err = root.Rename(tmp, rel)
		}
		if err != nil {
			root.Remove(tmp)
		}
		return err
	}
	return errors.New("it was not a regular file, directory or link before either")
}
