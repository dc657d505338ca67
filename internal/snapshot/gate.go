package snapshot

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/safefile"
)

// The stat gate: what makes a read-only run's check after each run_test
// cost a stat per file instead of git re-reading the tree.
//
// Restore used to walk the whole tree for FIFO inputs, then let `git add -A`
// refresh every index entry and walk every directory for new files, then
// write and compare trees: about half a second a step at 28k files. Yet in
// most steps nothing changed. After a Restore leaves the work tree equal to
// the recorded tree, the gate records the lstat data of every file git
// recorded, of every .gitignore, and of every directory git would look in
// for new files (all but ignored ones). The next Restore first compares
// them: when none differs, nothing git would see has changed and Restore
// returns at once; when any differs, it runs the full check as before.
//
// Why an unchanged lstat means unchanged: the kernel sets a file's ctime
// to the current time on every change of its content, mode, links or name,
// and no system call lets a process set it back (only moving the system
// clock could, which equally defeats git's own stat checks, the former
// way); adding, removing or renaming an entry changes its directory's
// mtime and ctime. The data compared is the device, inode, type and mode,
// size, and mtime and ctime to the nanosecond (git compares seconds unless
// built with USE_NSEC). An entry changed too close to the recording
// (within gateRacyWindow, so a later change in the same clock tick could
// leave its times equal) is "racy", as in git: a racy file's bytes are
// hashed and compared with its recorded blob on every check, a racy
// directory's names are read and compared.

// gateRacyWindow is how close to the recording an entry's times may be for
// it to count as racy: more than any filesystem's timestamp granularity
// (1 s on some, 2 s on FAT).
const gateRacyWindow = 3 * time.Second

// statKey is the lstat data the gate compares.
type statKey struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime int64 // nanoseconds
}

// gateEntry is one recorded file or directory.
type gateEntry struct {
	path  string // slash-separated, relative to the work tree; "." for its top
	key   statKey
	racy  bool
	blob  string   // files: the recorded blob id, compared when racy
	mode  string   // files git records: the recorded mode (100644, 100755, 120000)
	names []string // directories: the sorted entry names, compared when racy
}

// gate is the recorded state; nil when not recorded (or not possible).
type gate struct {
	files, dirs   []gateEntry
	fileAt, dirAt map[string]int // index by path
}

// errGateOff says the gate cannot vouch for this tree (a submodule, a
// file gone while recording): Restore always takes the full way.
var errGateOff = errors.New("stat gate not usable")

// recordGate records the gate for the current work tree, which must equal
// s.tree. On any failure the gate stays off and Restore stays exact.
func (s *Snapshot) recordGate(ctx context.Context) {
	s.gate = nil
	if !gateSupported {
		return
	}
	s.records++
	g, err := s.buildGate(ctx)
	if err == nil {
		s.gate = g
	}
	s.armAll(ctx, s.gate, true) // a new journal for the new gate (none without one)
}

func (s *Snapshot) buildGate(ctx context.Context) (*gate, error) {
	start := time.Now()
	staged, err := git(ctx, s.dir, s.env, "ls-files", "-s", "-z")
	if err != nil {
		return nil, err
	}
	g := &gate{}
	recorded := map[string]bool{}
	keepDirs := map[string]bool{".": true}
	for _, rec := range strings.Split(strings.TrimSuffix(staged, "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[0] == "160000" {
			return nil, errGateOff // a submodule: only git can tell whether it moved
		}
		g.files = append(g.files, gateEntry{path: p, blob: f[1], mode: f[0]})
		recorded[p] = true
		for d := path.Dir(p); !keepDirs[d]; d = path.Dir(d) {
			keepDirs[d] = true
		}
	}
	// Directories git does not look into for new files: ignored ones
	// (among those ls-files names as wholly ignored, check-ignore tells
	// which are).
	out, err := git(ctx, s.dir, s.env, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	if err != nil {
		return nil, err
	}
	var candidates []string
	for _, p := range strings.Split(out, "\x00") {
		if d, ok := strings.CutSuffix(p, "/"); ok {
			candidates = append(candidates, d)
		}
	}
	ignored, err := s.checkIgnored(ctx, candidates)
	if err != nil {
		return nil, err
	}
	ignoredDirs := map[string]bool{}
	for _, d := range ignored {
		ignoredDirs[d] = true
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// Every directory git would walk, and every .gitignore in them, even
	// an ignored one: its content decides what git adds.
	queue := []string{"."}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		f, err := root.Open(d)
		if err != nil {
			return nil, errGateOff
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return nil, errGateOff
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			name := e.Name()
			names = append(names, name+"\x00"+e.Type().String())
			if name == ".git" {
				continue
			}
			rel := name
			if d != "." {
				rel = d + "/" + name
			}
			switch {
			case e.IsDir() && (!ignoredDirs[rel] || keepDirs[rel]):
				queue = append(queue, rel)
			case name == ".gitignore" && !recorded[rel]:
				g.files = append(g.files, gateEntry{path: rel})
			}
		}
		slices.Sort(names)
		g.dirs = append(g.dirs, gateEntry{path: d, names: names})
	}
	if err := g.stat(ctx, root, start, s); err != nil {
		return nil, err
	}
	g.index()
	return g, nil
}

func (g *gate) index() {
	g.fileAt = make(map[string]int, len(g.files))
	for i, e := range g.files {
		g.fileAt[e.path] = i
	}
	g.dirAt = make(map[string]int, len(g.dirs))
	for i, e := range g.dirs {
		g.dirAt[e.path] = i
	}
}

// stat fills in the keys at recording time and marks racy entries.
func (g *gate) stat(ctx context.Context, root *os.Root, start time.Time, s *Snapshot) error {
	edge := start.Add(-gateRacyWindow).UnixNano()
	return g.each(ctx, func(e *gateEntry, dir bool) error {
		k, err := lstatKey(s.dir, e.path)
		if err != nil {
			return errGateOff
		}
		e.key = k
		e.racy = k.mtime >= edge || k.ctime >= edge
		if !dir && e.blob == "" { // a .gitignore git does not record
			data, err := readEntry(root, e.path, k)
			if err != nil {
				return errGateOff
			}
			e.blob = s.BlobID(data)
		}
		return nil
	})
}

// check compares every recorded entry with the work tree. It reports
// whether all are as recorded, and which are not: the files (for the full
// check to hash again, see forget) and the directories (whose entries
// changed, or which are gone).
func (g *gate) check(ctx context.Context, s *Snapshot) (same bool, files, dirs []string) {
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return false, nil, nil
	}
	defer root.Close()
	var mu sync.Mutex
	same = true
	err = g.each(ctx, func(e *gateEntry, dir bool) error {
		if g.entryChanged(root, s, e, dir) {
			mu.Lock()
			same = false
			if dir {
				dirs = append(dirs, e.path)
			} else {
				files = append(files, e.path)
			}
			mu.Unlock()
		}
		return nil
	})
	return same && err == nil, files, dirs
}

func (g *gate) entryChanged(root *os.Root, s *Snapshot, e *gateEntry, dir bool) bool {
	k, err := lstatKey(s.dir, e.path)
	if err != nil || k != e.key {
		return true
	}
	if !e.racy {
		return false
	}
	if dir {
		names, err := readNames(root, e.path)
		return err != nil || !slices.Equal(names, e.names)
	}
	data, err := readEntry(root, e.path, k)
	return err != nil || s.BlobID(data) != e.blob
}

// forget drops paths from the shadow index, so that the full check hashes
// them again rather than trust the index's stat data: git compares times
// to the second (unless built with USE_NSEC), and a file rewritten at the
// same size within the second of its last check, its mtime set back,
// would pass git's check where the gate saw its ctime move.
func (s *Snapshot) forget(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	var in strings.Builder
	for _, p := range paths {
		in.WriteString(":(literal)" + p + "\x00")
	}
	_, err := gitexecRun(ctx, s, strings.NewReader(in.String()),
		"rm", "--cached", "-r", "-q", "-f", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul")
	return err
}

// gitexecRun is git on the shadow repository with stdin.
func gitexecRun(ctx context.Context, s *Snapshot, stdin io.Reader, args ...string) ([]byte, error) {
	return gitexec.Run(ctx, gitexec.Options{Dir: s.dir, Env: s.env, Timeout: gitTimeout, Stdin: stdin}, args...)
}

// each runs fn over all entries, directories first, on a few goroutines;
// it stops at the first error.
func (g *gate) each(ctx context.Context, fn func(e *gateEntry, dir bool) error) error {
	const workers = 4
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs error
	)
	failed := func() bool { mu.Lock(); defer mu.Unlock(); return errs != nil }
	for w := range workers {
		wg.Go(func() {
			for i, list := range [][]gateEntry{g.dirs, g.files} {
				for k := w; k < len(list); k += workers {
					if k%512 == w && (ctx.Err() != nil || failed()) {
						return
					}
					if err := fn(&list[k], i == 0); err != nil {
						mu.Lock()
						errs = errors.Join(errs, err)
						mu.Unlock()
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if errs != nil {
		return errs
	}
	return ctx.Err()
}

// readNames lists a directory's entries as recorded: name and type.
func readNames(root *os.Root, dir string) ([]string, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name()+"\x00"+e.Type().String())
	}
	slices.Sort(names)
	return names, nil
}

// readEntry reads what git would store for the entry: a symlink's target,
// a regular file's bytes (opened without following links or blocking).
func readEntry(root *os.Root, name string, k statKey) ([]byte, error) {
	switch {
	case k.mode&0o170000 == 0o120000:
		target, err := root.Readlink(name)
		return []byte(target), err
	case k.mode&0o170000 != 0o100000:
		return nil, errGateOff
	}
	return safefile.ReadFile(root, name, MaxFileBytes)
}
