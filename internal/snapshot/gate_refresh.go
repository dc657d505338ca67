package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"strings"
	"time"
)

// When the gate sees a change, the full check runs; what it costs beyond
// git itself is kept proportional to the change: the FIFO check of git's
// inputs covers the changed directories (and any new one below them) only,
// since a directory whose lstat data is unchanged has the same entries;
// and afterwards the gate is brought up to date for the entries the step
// and the restore touched instead of being recorded again.

// checkChangedInputs is CheckInputs for the directories the gate saw
// change: each that still exists is listed, its .gitignore and
// .gitattributes must be regular files or symlinks, and directories not
// recorded (new since) are walked whole.
func (g *gate) checkChangedInputs(ctx context.Context, dir string, changed []string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer root.Close()
	queue := append([]string(nil), changed...)
	seen := 0
	for len(queue) > 0 {
		if seen++; seen%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		d := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		f, err := root.Open(d)
		if err != nil {
			continue // gone, or not a directory any more: git will not read in it
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			rel := path.Join(d, name)
			if name == ".gitignore" || name == ".gitattributes" {
				if t := e.Type(); !t.IsRegular() && t&fs.ModeSymlink == 0 {
					return fmt.Errorf("snapshot: %w: %s is a %s; refusing to run git on this work tree", ErrUntrustedInput, rel, typeName(t))
				}
			}
			if _, known := g.dirAt[rel]; e.IsDir() && !known && !strings.EqualFold(name, ".git") {
				queue = append(queue, rel)
			}
		}
	}
	return nil
}

// refresh brings the gate up to date after a full check that left the
// work tree equal to the recorded tree: the files and directories the
// check saw change, the directories of what Restore wrote, and the new
// directories below them (but ignored ones) are stat'ed again; it returns
// the recorded files and directories it stat'ed (their watches are renewed,
// journal.go). ok is false when only a full recording will do: an ignore
// file changed or appeared, a recorded entry is gone.
func (g *gate) refresh(ctx context.Context, s *Snapshot, files, dirs, written []string) (touchedFiles, touchedDirs []string, ok bool) {
	ok = g.refreshKeys(ctx, s, files, dirs, written, &touchedFiles, &touchedDirs)
	return touchedFiles, touchedDirs, ok
}

func (g *gate) refreshKeys(ctx context.Context, s *Snapshot, files, dirs, written []string, touchedFiles, touchedDirs *[]string) bool {
	for _, f := range files {
		if path.Base(f) == ".gitignore" {
			return false
		}
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return false
	}
	defer root.Close()
	edge := time.Now().Add(-gateRacyWindow).UnixNano()
	racy := func(k statKey) bool { return k.mtime >= edge || k.ctime >= edge }
	queue := append([]string(nil), dirs...)
	for _, p := range append(files, written...) {
		queue = append(queue, path.Dir(p))
		i, ok := g.fileAt[p]
		if !ok {
			continue // not recorded: an added file Restore removed
		}
		k, err := lstatKey(s.dir, p)
		if err != nil {
			return false
		}
		g.files[i].key, g.files[i].racy = k, racy(k)
		*touchedFiles = append(*touchedFiles, p)
	}
	var fresh []string // new directories, before the ignore check
	done := map[string]bool{}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return false
		}
		d := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if done[d] {
			continue
		}
		done[d] = true
		k, err := lstatKey(s.dir, d)
		i, known := g.dirAt[d]
		if err != nil || k.mode&0o170000 != 0o040000 {
			if known {
				return false
			}
			continue
		}
		names, err := readNames(root, d)
		if err != nil {
			return false
		}
		if !known {
			fresh = append(fresh, d)
			i = len(g.dirs)
			g.dirs = append(g.dirs, gateEntry{path: d})
			g.dirAt[d] = i
		}
		g.dirs[i].key, g.dirs[i].racy, g.dirs[i].names = k, racy(k), names
		*touchedDirs = append(*touchedDirs, d)
		for _, n := range names {
			name, typ, _ := strings.Cut(n, "\x00")
			rel := path.Join(d, name)
			if _, ok := g.dirAt[rel]; !ok && typ == dirType && name != ".git" {
				queue = append(queue, rel)
			}
			if _, ok := g.fileAt[rel]; !ok && name == ".gitignore" {
				return false // a new ignore file: record it whole
			}
		}
	}
	return g.dropIgnored(ctx, s, fresh)
}

// dropIgnored removes from the gate the new directories git ignores (and
// what lies below them): their content changes nothing git records.
func (g *gate) dropIgnored(ctx context.Context, s *Snapshot, fresh []string) bool {
	if len(fresh) == 0 {
		return true
	}
	ignored, err := s.checkIgnored(ctx, fresh)
	if err != nil {
		return false
	}
	if len(ignored) == 0 {
		return true
	}
	kept := g.dirs[:0]
	for _, e := range g.dirs {
		drop := false
		for _, d := range ignored {
			if e.path == d || strings.HasPrefix(e.path, d+"/") {
				drop = true
				break
			}
		}
		if !drop {
			kept = append(kept, e)
		}
	}
	g.dirs = kept
	g.index()
	return true
}

// checkIgnored returns those of dirs that git's ignore rules exclude (the
// directory itself, or one above it, matches). `ls-files --others
// --ignored --directory` cannot tell: it also names a directory that only
// holds ignored files, in which git would still see a new file.
func (s *Snapshot) checkIgnored(ctx context.Context, dirs []string) ([]string, error) {
	if len(dirs) == 0 {
		return nil, nil
	}
	var in strings.Builder
	for _, d := range dirs {
		in.WriteString(d + "\x00")
	}
	out, err := gitexecRun(ctx, s, strings.NewReader(in.String()), "check-ignore", "-z", "--stdin")
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil, nil // none is ignored
	}
	if err != nil {
		return nil, err
	}
	var ignored []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			ignored = append(ignored, p)
		}
	}
	return ignored, nil
}
