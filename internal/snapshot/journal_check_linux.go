//go:build linux

package snapshot

import (
	"context"
	"os"
	"slices"
	"strings"
)

// check is the gate's check answered from the journal: only the entries
// an event named (and those whose watch is gone, and racy ones armed since
// their last comparison) are compared; every other entry is as recorded.
// ok is false when the journal cannot vouch: the caller runs the full
// stat pass instead.
func (j *journal) check(ctx context.Context, s *Snapshot, g *gate) (same bool, files, dirs []string, ok bool) {
	if !j.ok() {
		return false, nil, nil, false
	}
	j.drain()
	if !j.healthy {
		return false, nil, nil, false
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return false, nil, nil, false
	}
	defer root.Close()
	cand := make(map[jref]bool, len(j.dirty)+len(j.lost)+len(j.pending)+1)
	// The top is compared every time: the entries are reached by path
	// from it, and a directory above it renamed and replaced (or a
	// symlink on the way swapped) sends no event to any watch here, but
	// leads the path to another inode.
	cand[jref{".", true}] = true
	for _, set := range []map[jref]bool{j.dirty, j.lost, j.pending} {
		for r := range set {
			cand[r] = true
		}
	}
	same = true
	var moved []string // directories whose path leads to another inode now
	compare := func(r jref) bool {
		e := g.entry(r)
		if e == nil {
			return true // a name the gate does not record: its directory is among cand
		}
		if !g.entryChanged(root, s, e, r.dir) {
			if j.lost[r] {
				// No watch stands for it, yet it looks as recorded (a new
				// inode with the old one's key): do not guess.
				j.fail("unwatched entry unchanged: " + r.path)
				return false
			}
			return true
		}
		same = false
		if !r.dir {
			files = append(files, r.path)
			return true
		}
		dirs = append(dirs, r.path)
		if k, err := lstatKey(s.dir, r.path); err != nil || k.dev != e.key.dev || k.ino != e.key.ino {
			moved = append(moved, r.path)
		}
		return true
	}
	for r := range cand {
		if ctx.Err() != nil || !compare(r) {
			return false, nil, nil, false
		}
	}
	if len(moved) > 0 && !j.below(ctx, g, moved, cand, compare) {
		return false, nil, nil, false
	}
	clear(j.dirty)
	clear(j.pending)
	slices.Sort(files)
	slices.Sort(dirs)
	return same, files, dirs, true
}

// settle drains the events Restore's own writes caused, before the tree
// is checked and the gate brought up to date, and notes the entries they
// named: those are watched again (armTouched) whatever refresh stat'ed.
func (j *journal) settle() {
	if !j.ok() {
		return
	}
	j.drain()
	for r := range j.dirty {
		j.settled[r] = true
	}
	clear(j.dirty)
}

// armTouched renews the watches of the entries refresh stat'ed again and
// of those Restore's writes touched: a file Restore rewrote is a new
// inode, a directory it re-created too. Every other watch still stands for
// its entry. When one cannot be renewed, or an entry is left without a
// watch, the whole journal is armed again.
func (s *Snapshot) armTouched(ctx context.Context, g *gate, files, dirs []string) {
	if s.testBeforeArm != nil {
		s.testBeforeArm()
	}
	j := s.journal
	if !j.ok() {
		s.armAll(ctx, g, false)
		return
	}
	for _, f := range files {
		if i, ok := g.fileAt[f]; ok {
			j.watch(s.dir, &g.files[i], false)
			delete(j.settled, jref{f, false})
		}
	}
	for _, d := range dirs {
		if i, ok := g.dirAt[d]; ok {
			j.watch(s.dir, &g.dirs[i], true)
			delete(j.settled, jref{d, true})
		}
	}
	for r := range j.settled {
		if e := g.entry(r); e != nil {
			j.watch(s.dir, e, r.dir)
		}
	}
	clear(j.settled)
	for r := range j.lost {
		if g.entry(r) != nil {
			j.fail("an entry was left without a watch: " + r.path)
			break
		}
		delete(j.lost, r) // no longer recorded (refresh dropped it)
	}
	if !j.healthy {
		s.armAll(ctx, g, false)
	}
}

// entry is the gate entry r names, or nil.
func (g *gate) entry(r jref) *gateEntry {
	if r.dir {
		if i, ok := g.dirAt[r.path]; ok {
			return &g.dirs[i]
		}
		return nil
	}
	if i, ok := g.fileAt[r.path]; ok {
		return &g.files[i]
	}
	return nil
}

// below compares every recorded entry under the directories moved (gone,
// or another inode at their path: renamed away and replaced). Their
// entries' watches still stand for the inodes that moved with the old
// directory, and a directory moved in sends no event for what it holds;
// only their paths tell. The top moved means the whole tree: the journal
// refuses, and the full stat pass runs.
func (j *journal) below(ctx context.Context, g *gate, moved []string, done map[jref]bool, compare func(jref) bool) bool {
	if slices.Contains(moved, ".") {
		j.fail("the work tree's top is another directory")
		return false
	}
	under := func(p string) bool {
		for _, d := range moved {
			if strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
	for i, list := range [][]gateEntry{g.dirs, g.files} {
		for _, e := range list {
			r := jref{e.path, i == 0}
			if done[r] || !under(e.path) {
				continue
			}
			done[r] = true
			if ctx.Err() != nil || !compare(r) {
				return false
			}
		}
	}
	return true
}
