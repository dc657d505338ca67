package snapshot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// Restore puts the work tree back to the recorded state: files added since
// are removed, changed and deleted ones get their recorded bytes and mode
// back (from the snapshot's own objects, never through a filter). It
// returns what it undid. Writes go through an os.Root on the work tree, so
// a directory swapped for a symlink cannot lead them outside. A submodule
// (gitlink) change cannot be undone and is reported as an error.
//
// When the change journal (journal.go) or, when it cannot vouch, the stat
// gate (gate.go) recorded by the previous Restore finds every
// file and directory git would look at as it was, nothing changed and
// Restore returns at once; otherwise, when the journal answered and the
// change is simple, the fast path (fastrestore.go) undoes it from the
// gate's records; else it checks with git, the full way, and brings the
// gate up to date (or records it again) once the work tree is back.
func (s *Snapshot) Restore(ctx context.Context) ([]Change, error) {
	return s.restore(ctx, 0)
}

// maxIgnoreRounds bounds how often one Restore goes round again after
// undoing ignore rules that hid files of the step (restore below).
const maxIgnoreRounds = 8

func (s *Snapshot) restore(ctx context.Context, round int) ([]Change, error) {
	prev := s.gate
	var files, dirs []string
	check := func() error { return CheckInputs(ctx, s.dir) }
	if prev != nil {
		var same, journaled bool
		same, files, dirs, journaled = s.checkGate(ctx, prev)
		if same {
			return nil, nil
		}
		if journaled {
			if undone, ok, err := s.fastRestore(ctx, prev, files, dirs); ok {
				return undone, err
			}
		}
		check = func() error { return prev.checkChangedInputs(ctx, s.dir, dirs) }
	}
	// What fast restores left with stale stat data in the shadow index
	// (fastrestore.go) is hashed again, as the files the gate saw change.
	files = s.withUnindexed(files)
	if err := s.forget(ctx, files); err != nil {
		return nil, fmt.Errorf("snapshot restore: %w", err)
	}
	clear(s.unindexed)
	s.gate = nil
	s.fullChecks++
	regate := func(written []string) { s.regate(ctx, prev, files, dirs, written) }
	var update func() error
	if prev != nil {
		update = func() error { return s.addPaths(ctx, prev, files, dirs) }
	}
	now, err := s.writeTreeWith(ctx, check, update)
	if err != nil {
		return nil, err
	}
	if now == s.tree {
		regate(nil)
		return nil, nil
	}
	raw, err := git(ctx, s.dir, s.env, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", s.tree, now)
	if err != nil {
		return nil, fmt.Errorf("snapshot restore: %w", err)
	}
	recs, err := parseRawFull(raw)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot restore: %w", err)
	}
	defer root.Close()
	var (
		undone []Change
		errs   []error
	)
	for _, r := range recs {
		if err := s.restoreOne(ctx, root, r); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.path, err))
			continue
		}
		undone = append(undone, Change{Path: r.path, Status: r.status, Mode: r.oldMode})
	}
	// The events of the writes above are Restore's own: drained before
	// the tree is checked again and refresh stats it, so that any later
	// change stays queued for the next check (journal.go).
	s.journal.settle()
	if len(errs) == 0 {
		// No untrusted code ran since the check above: git's inputs are
		// as checked (Restore itself writes no .gitignore FIFO). An
		// ignore file the step added or changed, now undone, may have
		// hidden files the step made: they are visible now, so the whole
		// tree is added again, and when it still differs Restore goes
		// round again (without the gate) to remove them.
		rules := slices.ContainsFunc(undone, func(c Change) bool {
			return path.Base(c.Path) == ".gitignore" && c.Status != "deleted"
		})
		var update func() error
		if prev != nil && !rules {
			update = func() error { return s.updatePaths(ctx, paths(undone)) }
		}
		if again, err := s.writeTreeWith(ctx, nil, update); err != nil {
			errs = append(errs, err)
		} else if again != s.tree && rules && round < maxIgnoreRounds {
			more, err := s.restore(ctx, round+1)
			return append(undone, more...), err
		} else if again != s.tree {
			errs = append(errs, errors.New("the work tree still differs from the recorded state"))
		} else {
			regate(paths(undone))
		}
	}
	if len(errs) > 0 {
		return undone, fmt.Errorf("snapshot restore: %w", errors.Join(errs...))
	}
	return undone, nil
}

// rawRecord is one `diff-tree -r -z --no-renames` record.
type rawRecord struct {
	oldMode, newMode, oldBlob, newBlob, status, path string
}

func parseRawFull(raw string) ([]rawRecord, error) {
	fields := strings.Split(strings.TrimSuffix(raw, "\x00"), "\x00")
	var out []rawRecord
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) != 5 {
			return nil, fmt.Errorf("snapshot: unexpected diff-tree output %q", fields[i])
		}
		r := rawRecord{oldMode: meta[0], newMode: meta[1], oldBlob: meta[2], newBlob: meta[3], path: fields[i+1]}
		switch meta[4][0] {
		case 'A':
			r.status = "added"
		case 'D':
			r.status = "deleted"
		default:
			r.status = "modified"
		}
		out = append(out, r)
	}
	return out, nil
}

func (s *Snapshot) restoreOne(ctx context.Context, root *os.Root, r rawRecord) error {
	if r.oldMode == "160000" || r.newMode == "160000" {
		return errors.New("a submodule changed; it cannot be put back")
	}
	if r.status == "added" {
		// ENOTDIR: a directory above it was a file when recorded, and is
		// one again (restored before it, in diff-tree's order).
		if err := root.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return err
		}
		return nil
	}
	data, err := gitBytes(ctx, s.dir, s.env, "cat-file", "blob", r.oldBlob)
	if err != nil {
		return err
	}
	return writeBack(root, r, data)
}

// writeBack puts a recorded file back at r.path: data written to a new
// file beside it with the recorded mode (or a symlink to data), renamed
// over whatever is there (a directory there is removed first).
func writeBack(root *os.Root, r rawRecord, data []byte) error {
	var err error
	if dir := path.Dir(r.path); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path.Join(path.Dir(r.path), ".mini-agent-restore-"+hex.EncodeToString(rnd[:]))
	if r.oldMode == "120000" {
		err = root.Symlink(string(data), tmp)
	} else {
		perm := fs.FileMode(0o644)
		if r.oldMode == "100755" {
			perm = 0o755
		}
		err = writeNew(root, tmp, data, perm)
	}
	if err != nil {
		return err
	}
	if fi, lerr := root.Lstat(r.path); lerr == nil && fi.IsDir() {
		if err := root.RemoveAll(r.path); err != nil {
			root.Remove(tmp)
			return err
		}
	}
	if err := root.Rename(tmp, r.path); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

func writeNew(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Chmod(name, perm)
	}
	if err != nil {
		root.Remove(name)
	}
	return err
}

// regate brings the gate up to date once the tree is back (refresh, and
// the journal's watches renewed for what it stat'ed), or records it whole
// when it cannot be.
func (s *Snapshot) regate(ctx context.Context, prev *gate, files, dirs, written []string) {
	if prev != nil {
		if tf, td, ok := prev.refresh(ctx, s, files, dirs, written); ok {
			s.gate = prev
			s.armTouched(ctx, prev, tf, td)
			return
		}
	}
	s.recordGate(ctx)
}

// withUnindexed adds to files the paths fast restores wrote or compared
// since the last git path, sorted and once each.
func (s *Snapshot) withUnindexed(files []string) []string {
	if len(s.unindexed) == 0 {
		return files
	}
	out := slices.Clone(files)
	for p := range s.unindexed {
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// paths lists the changes' paths.
func paths(cs []Change) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Path)
	}
	return out
}
