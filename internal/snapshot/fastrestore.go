package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// The fast restore: what makes a changed step cost in proportion to what
// it changed, not to the tree.
//
// The git path (restore.go) runs about eight git processes after a
// changed step, and each reads the whole shadow index: O(tree) whatever
// the step did. When the journal vouched for the check (journal.go), the
// gate's entries the check named are exactly those that can differ from
// the recorded tree, and the gate keeps each recorded file's mode and blob
// id, so the work can be done from them alone:
//
//   - a changed recorded file is hashed; as recorded (mode and blob) means
//     nothing to undo; otherwise (or gone) its recorded blob is written
//     back with its mode, the blobs read by one `git cat-file --batch`,
//     which reads objects only, never the index;
//   - a changed directory is listed; a name it did not hold when recorded,
//     and not recorded in the gate, is new: one `git check-ignore
//     --no-index` (the same ignore rules, the same code in git as `git add
//     -A` uses) tells which new paths git would see, and those files are
//     removed; ignored ones are left alone, as git leaves them. New
//     directories are walked whole; like the git path, the fast path
//     removes the files git would see in them and leaves the directories
//     (git records no directory).
//
// It decides before it writes anything, and leaves the step to the git
// path, unchanged, on anything it does not model (fastPlan says where):
//   - more than fastBound changed entries (or new paths);
//   - a .gitignore or .gitattributes changed, gone or new anywhere (the
//     ignore rules themselves moved; .gitattributes for CheckInputs);
//     info/exclude is the shadow's copy, which no step can reach;
//   - a recorded file that is not a regular file or symlink any more (a
//     directory, a FIFO), or one that is not 100644/100755/120000 (a
//     submodule turns the gate off anyway);
//   - a recorded directory gone, replaced (another inode at its path), or
//     now a file; a recorded entry missing that the check did not name;
//   - a new name .git (a nested repository: git would add a gitlink), a
//     new special file (FIFO, socket, device), a new path with an
//     excluded path (TakeExcluding) below it;
//   - a file over MaxFileBytes, any read error, an input CheckInputs
//     refuses (the git path then returns its error).
//
// The shadow index is not brought up to date: it still describes the
// recorded tree, which is what the work tree holds again, but with the
// stat data of the files as they were before. git would hash such a file
// again (its inode and ctime are new), yet forget's case (a later
// same-second rewrite with the mtime set back) could make a stale entry
// pass git's check; so every path the fast path looked at is kept in
// s.unindexed and forgotten before the next git path runs.

// fastBound is the most changed entries (and new paths) the fast path
// takes on: past it the git path's fixed cost no longer dominates.
const fastBound = 256

// fastPlan is what the fast path will do, decided before any write.
type fastPlan struct {
	restore []rawRecord // recorded files to write back (modified, deleted)
	remove  []string    // new files git would see
	looked  []string    // every recorded file compared (their index stat data is stale)
}

// fastRestore is Restore's fast path for a check the journal answered.
// handled is false when it did nothing and the git path must run.
func (s *Snapshot) fastRestore(ctx context.Context, g *gate, files, dirs []string) (undone []Change, handled bool, err error) {
	// Git's inputs, checked as the git path would (FIFO ignore files):
	// check-ignore reads them too. Refusal is the git path's to report.
	if g.checkChangedInputs(ctx, s.dir, dirs) != nil {
		return nil, false, nil
	}
	p, ok := s.planFast(ctx, g, files, dirs)
	if !ok {
		return nil, false, nil
	}
	blobs, err := s.catBlobs(ctx, p.restore)
	if err != nil {
		return nil, false, nil // nothing written yet
	}
	s.fastRestores++
	s.gate = nil // until the tree is back and the gate up to date
	if s.unindexed == nil {
		s.unindexed = map[string]bool{}
	}
	for _, f := range p.looked {
		s.unindexed[f] = true
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, true, fmt.Errorf("snapshot restore: %w", err)
	}
	defer root.Close()
	var errs []error
	for _, r := range p.restore {
		if err := writeBack(root, r, blobs[r.oldBlob]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.path, err))
			continue
		}
		undone = append(undone, Change{Path: r.path, Status: r.status, Mode: r.oldMode})
	}
	for _, f := range p.remove {
		if err := root.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
			continue
		}
		undone = append(undone, Change{Path: f, Status: "added", Mode: "000000"})
	}
	// diff-tree's order: by path (bytewise order of whole paths is git's
	// tree order when no path is both a file and a directory).
	slices.SortFunc(undone, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	s.journal.settle() // as the git path: Restore's own events, drained
	if len(errs) > 0 {
		return undone, true, fmt.Errorf("snapshot restore: %w", errors.Join(errs...))
	}
	s.regate(ctx, g, files, dirs, paths(undone))
	return undone, true, nil
}

// planFast decides what the fast path does; ok is false for anything it
// does not model (see the list above).
func (s *Snapshot) planFast(ctx context.Context, g *gate, files, dirs []string) (p fastPlan, ok bool) {
	if len(files)+len(dirs) > fastBound {
		return p, false
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return p, false
	}
	defer root.Close()
	named := map[string]bool{}
	for _, f := range files {
		named[f] = true
		r, ok := s.planFile(root, g, f)
		if !ok {
			return p, false
		}
		p.looked = append(p.looked, f)
		if r != nil {
			p.restore = append(p.restore, *r)
		}
	}
	excluded := s.excludedRels()
	var fresh []newPath
	for _, d := range dirs {
		if ctx.Err() != nil {
			return p, false
		}
		more, ok := s.newInDir(root, g, d, named, excluded)
		if !ok || len(fresh)+len(more) > fastBound {
			return p, false
		}
		fresh = append(fresh, more...)
	}
	if len(fresh) == 0 {
		return p, true
	}
	ignored, err := s.checkIgnoredNoIndex(ctx, fresh)
	if err != nil {
		return p, false
	}
	for _, n := range fresh {
		if !n.dir && !ignoredOrBelow(n.path, ignored) {
			p.remove = append(p.remove, n.path)
		}
	}
	return p, true
}

// planFile compares a recorded file the check named with its record: nil
// when as recorded, the record to write back otherwise.
func (s *Snapshot) planFile(root *os.Root, g *gate, f string) (*rawRecord, bool) {
	i, known := g.fileAt[f]
	if !known || ignoreInput(path.Base(f)) {
		return nil, false
	}
	e := &g.files[i]
	switch e.mode {
	case "100644", "100755", "120000":
	default:
		return nil, false // not recorded by git (an untracked .gitignore), or a gitlink
	}
	r := &rawRecord{oldMode: e.mode, oldBlob: e.blob, path: f}
	k, err := lstatKey(s.dir, f)
	if errors.Is(err, fs.ErrNotExist) {
		r.status = "deleted"
		return r, true
	}
	if err != nil {
		return nil, false
	}
	mode := gitMode(k.mode)
	if mode == "" {
		return nil, false // a directory, a FIFO: the git path decides
	}
	data, err := readEntry(root, f, k)
	if err != nil {
		return nil, false
	}
	if mode == e.mode && s.BlobID(data) == e.blob {
		return nil, true
	}
	r.status = "modified"
	return r, true
}

// newPath is a path not recorded that a changed directory now holds.
type newPath struct {
	path string
	dir  bool
}

// newInDir lists a changed directory: its new names (and everything below
// a new directory), with the checks that send the step to the git path.
func (s *Snapshot) newInDir(root *os.Root, g *gate, d string, named map[string]bool, excluded []string) ([]newPath, bool) {
	i, known := g.dirAt[d]
	if !known {
		return nil, false
	}
	rec := &g.dirs[i]
	k, err := lstatKey(s.dir, d)
	if err != nil || k.mode&0o170000 != 0o040000 || k.dev != rec.key.dev || k.ino != rec.key.ino {
		return nil, false // gone, or another directory (or none) at its path
	}
	names, err := readNames(root, d)
	if err != nil {
		return nil, false
	}
	was := make(map[string]bool, len(rec.names))
	for _, n := range rec.names {
		was[n] = true
	}
	now := make(map[string]bool, len(names))
	var out []newPath
	for _, n := range names {
		name, typ, _ := strings.Cut(n, "\x00")
		now[name] = true
		rel := path.Join(d, name)
		if _, ok := g.fileAt[rel]; ok {
			if typ == dirType {
				return nil, false // a file become a directory
			}
			continue // its changes, if any, are among the files named
		}
		if _, ok := g.dirAt[rel]; ok {
			if typ != dirType {
				return nil, false // a directory become a file
			}
			continue
		}
		if was[n] {
			continue // held when recorded, not recorded: ignored (or excluded), same type
		}
		if ignoreInput(name) || strings.EqualFold(name, ".git") {
			return nil, false
		}
		more, ok := walkNew(root, rel, typ, excluded)
		if !ok || len(out)+len(more) > fastBound {
			return nil, false
		}
		out = append(out, more...)
	}
	// A recorded entry gone that the check did not name: not modelled.
	for _, n := range rec.names {
		name, _, _ := strings.Cut(n, "\x00")
		rel := path.Join(d, name)
		if now[name] {
			continue
		}
		if _, ok := g.dirAt[rel]; ok {
			return nil, false
		}
		if _, ok := g.fileAt[rel]; ok && !named[rel] {
			return nil, false
		}
	}
	return out, true
}

// walkNew lists a new entry and, for a directory, everything below it,
// never following a link.
func walkNew(root *os.Root, rel, typ string, excluded []string) ([]newPath, bool) {
	for _, x := range excluded {
		if x == rel {
			return nil, true // never recorded: left alone, as git add leaves it
		}
		if strings.HasPrefix(x, rel+"/") {
			return nil, false
		}
	}
	if typ != dirType {
		if !plainType(typ) {
			return nil, false // FIFO, socket, device
		}
		return []newPath{{path: rel}}, true
	}
	out := []newPath{{path: rel, dir: true}}
	names, err := readNames(root, rel)
	if err != nil {
		return nil, false
	}
	for _, n := range names {
		name, t, _ := strings.Cut(n, "\x00")
		if ignoreInput(name) || strings.EqualFold(name, ".git") {
			return nil, false
		}
		more, ok := walkNew(root, rel+"/"+name, t, excluded)
		if !ok || len(out)+len(more) > fastBound {
			return nil, false
		}
		out = append(out, more...)
	}
	return out, true
}

// ignoredOrBelow: p is ignored, or lies below a new directory that is
// (git does not look into an ignored directory).
func ignoredOrBelow(p string, ignored map[string]bool) bool {
	for q := p; q != "."; q = path.Dir(q) {
		if ignored[q] {
			return true
		}
	}
	return false
}

// ignoreInput names the files whose change moves git's rules for what it
// sees (or that CheckInputs guards).
func ignoreInput(name string) bool {
	return name == ".gitignore" || name == ".gitattributes"
}

// plainType: readNames' spelling of a regular file or a symlink.
func plainType(typ string) bool {
	return typ == fs.FileMode(0).String() || typ == fs.ModeSymlink.String()
}

// gitMode is the mode git records for a file of this lstat mode, "" for
// what git records as no file (core.filemode: the owner's x bit decides).
func gitMode(m uint32) string {
	switch m & 0o170000 {
	case 0o120000:
		return "120000"
	case 0o100000:
		if m&0o100 != 0 {
			return "100755"
		}
		return "100644"
	}
	return ""
}

// excludedRels are the excluded paths (TakeExcluding) inside the tree.
func (s *Snapshot) excludedRels() []string {
	var out []string
	for _, p := range s.exclude {
		if rel, ok := s.relative(p); ok {
			out = append(out, rel)
		}
	}
	return out
}
