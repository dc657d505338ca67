package patch

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// CommitOptions tune Commit.
type CommitOptions struct {
	// BeforeEach, when set, runs before each file operation with the path
	// about to be written or removed. Tests use it to change the tree under
	// Commit's feet and check the rollback.
	BeforeEach func(path string)
}

// CommitError reports a Commit that failed part-way.
type CommitError struct {
	// Path is the file whose write or removal failed.
	Path string
	Err  error
	// RollbackErr is set when restoring the files failed too; the tree is
	// then in an unknown state.
	RollbackErr error
}

func (e *CommitError) Error() string {
	if e.RollbackErr != nil {
		return fmt.Sprintf("writing %s: %v; rollback failed: %v", e.Path, e.Err, e.RollbackErr)
	}
	return fmt.Sprintf("writing %s: %v (every file was restored)", e.Path, e.Err)
}

func (e *CommitError) Unwrap() error { return e.Err }

// journalEntry is a path's state before Commit touched it.
type journalEntry struct {
	path    string
	existed bool
	data    []byte
	perm    fs.FileMode
}

// committer writes one Result and can undo what it did.
type committer struct {
	root    *os.Root
	opt     CommitOptions
	journal []journalEntry
	dirs    []string // directories created, in creation order
}

// Commit writes res under root, all or nothing: each file goes through a
// temporary file in its own directory and a rename (so readers never see a
// half-written file), with its permission bits; parents of new files are
// created. If any operation fails, every file already touched is restored
// to its previous bytes, mode and existence, and created directories are
// removed. Paths must be real (symlink-free) paths under root.
func Commit(root *os.Root, res *Result, opt CommitOptions) error {
	c := &committer{root: root, opt: opt}
	for _, fc := range res.Files {
		if err := c.apply(fc); err != nil {
			return err
		}
	}
	return nil
}

func (c *committer) apply(fc *FileChange) error {
	// Each operation is atomic (a rename or a removal), so a failed one
	// changed nothing; only successful ones are journaled for rollback.
	if fc.NewPath != "" {
		existed := fc.Op == OpUpdate && fc.NewPath == fc.OldPath
		if err := c.write(fc.NewPath, fc.New, fc.NewMode); err != nil {
			return c.fail(fc.NewPath, err)
		}
		c.journal = append(c.journal, journalEntry{path: fc.NewPath, existed: existed, data: fc.Old, perm: fc.OldMode})
	}
	if fc.OldPath != "" && fc.OldPath != fc.NewPath {
		if c.opt.BeforeEach != nil {
			c.opt.BeforeEach(fc.OldPath)
		}
		if err := c.root.Remove(fc.OldPath); err != nil {
			return c.fail(fc.OldPath, err)
		}
		c.journal = append(c.journal, journalEntry{path: fc.OldPath, existed: true, data: fc.Old, perm: fc.OldMode})
	}
	return nil
}

func (c *committer) fail(p string, err error) error {
	return &CommitError{Path: p, Err: err, RollbackErr: c.rollback()}
}

// write replaces p with data via a temporary file and a rename.
func (c *committer) write(p string, data []byte, perm fs.FileMode) error {
	if err := c.mkdirs(path.Dir(p)); err != nil {
		return err
	}
	if c.opt.BeforeEach != nil {
		c.opt.BeforeEach(p)
	}
	return writeAtomic(c.root, p, data, perm)
}

func writeAtomic(root *os.Root, p string, data []byte, perm fs.FileMode) error {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := path.Join(path.Dir(p), ".mini-agent-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Chmod(tmp, perm)
	}
	if err == nil {
		err = root.Rename(tmp, p)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

// mkdirs creates dir and its missing parents, remembering them for rollback.
func (c *committer) mkdirs(dir string) error {
	var missing []string
	for d := dir; d != "." && d != "/"; d = path.Dir(d) {
		if _, err := c.root.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := c.root.Mkdir(missing[i], 0o755); err != nil {
			return err
		}
		c.dirs = append(c.dirs, missing[i])
	}
	return nil
}

// rollback restores every journaled path, newest first, then removes the
// directories Commit created (deepest first; only empty ones go).
func (c *committer) rollback() error {
	var errs []error
	for i := len(c.journal) - 1; i >= 0; i-- {
		e := c.journal[i]
		if e.existed {
			if err := writeAtomic(c.root, e.path, e.data, e.perm); err != nil {
				errs = append(errs, fmt.Errorf("restore %s: %w", e.path, err))
			}
			continue
		}
		if err := c.root.Remove(e.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", e.path, err))
		}
	}
	for i := len(c.dirs) - 1; i >= 0; i-- {
		c.root.Remove(c.dirs[i])
	}
	return errors.Join(errs...)
}
