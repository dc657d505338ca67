// Package snapshot records a workspace's state before a run and produces
// the exact diff of what the run changed, with real git, without touching
// the user's .git (index, HEAD, config, objects) or working tree, and
// without running anything the repository configures.
//
// Leaf engine: imports nothing above it.
package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/safefile"
)

// Snapshot is the tree of a workspace at one moment.
type Snapshot struct {
	dir     string
	env     []string // GIT_DIR / GIT_WORK_TREE / GIT_INDEX_FILE / alternates for every git call
	tree    string
	tmp     string
	format  string   // object format: "sha1" or "sha256"
	exclude []string // absolute paths never recorded
	gate    *gate    // the stat gate (gate.go); nil until a Restore records it
	// fullChecks counts the Restores that ran git (the gate could not
	// vouch): the tests' proof that a clean step skips it.
	fullChecks int
	records    int // gates recorded whole (not brought up to date)
	// journal is the change journal in front of the gate (journal.go);
	// nil or unhealthy when it cannot vouch.
	journal       *journal
	journalChecks int // gate checks the journal answered
	statPasses    int // gate checks that lstat()ed every entry
	fastRestores  int // changed steps undone by the fast path (fastrestore.go)
	// unindexed: files fast restores wrote or compared, whose shadow index
	// entries keep stale stat data; forgotten before the next git path.
	unindexed    map[string]bool
	journalOwner // what outlives one journal (journal_linux.go)
}

// Take records the current state of dir (tracked and untracked, ignored
// files excluded). Close removes the temporary files.
//
// Git runs on a shadow repository in a temporary directory with the
// workspace as its work tree, never on the workspace's own .git: code under
// test can write .git/config, .git/info/attributes and .gitattributes, and
// so choose filters, attribute drivers, an fsmonitor or hooks. The shadow
// has no such configuration, and its info/attributes (the attribute source
// git ranks first) unsets every attribute that changes content (text, eol,
// ident, filter, working-tree-encoding): each blob is the file's bytes. The
// repository's objects are borrowed read-only as alternates, and its
// info/exclude is copied, so the snapshot ignores what the repository does.
func Take(ctx context.Context, dir string) (*Snapshot, error) {
	return TakeExcluding(ctx, dir, nil)
}

// neutralAttributes is the shadow's info/attributes.
const neutralAttributes = "* -text !eol !crlf -ident -filter !working-tree-encoding !diff !merge\n"

// TakeExcluding is Take leaving out the files at the given paths (absolute,
// or relative to the current directory), before and after: the harness's
// own outputs (a --trace file in the workspace) are not part of the change.
func TakeExcluding(ctx context.Context, dir string, exclude []string) (*Snapshot, error) {
	tmp, err := os.MkdirTemp("", "mini-agent-snap-")
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	s := &Snapshot{dir: dir, tmp: tmp, format: "sha1"}
	fail := func(err error) (*Snapshot, error) {
		os.RemoveAll(tmp)
		return nil, err
	}
	for _, p := range exclude {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			s.exclude = append(s.exclude, abs)
		}
	}
	shadow := filepath.Join(tmp, "shadow.git")
	var objects, excludeFile string
	if out, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel", "--git-common-dir", "--show-object-format"); err == nil {
		lines := strings.Split(out, "\n")
		if len(lines) != 3 {
			return fail(fmt.Errorf("snapshot: unexpected git rev-parse output %q", out))
		}
		top, common := lines[0], lines[1]
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		if lines[2] == "sha256" {
			s.format = lines[2]
		}
		s.dir = top
		objects = filepath.Join(common, "objects")
		excludeFile = filepath.Join(common, "info", "exclude")
	}
	s.env = []string{"GIT_DIR=" + shadow, "GIT_WORK_TREE=" + s.dir, "GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if objects != "" {
		s.env = append(s.env, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+objects)
	}
	if _, err := git(ctx, s.dir, s.env, "init", "-q", "--object-format="+s.format); err != nil {
		return fail(fmt.Errorf("snapshot: %w", err))
	}
	info := filepath.Join(shadow, "info")
	if err := os.MkdirAll(info, 0o700); err != nil {
		return fail(fmt.Errorf("snapshot: %w", err))
	}
	if err := os.WriteFile(filepath.Join(info, "attributes"), []byte(neutralAttributes), 0o600); err != nil {
		return fail(fmt.Errorf("snapshot: %w", err))
	}
	var excl []byte
	if excludeFile != "" {
		// Read the non-blocking way: a FIFO there is refused, not waited on.
		excl, err = safefile.ReadPath(excludeFile, maxIgnoreBytes)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(fmt.Errorf("snapshot: the repository's info/exclude: %w", err))
		}
	}
	if err := os.WriteFile(filepath.Join(info, "exclude"), excl, 0o600); err != nil {
		return fail(fmt.Errorf("snapshot: %w", err))
	}
	if s.tree, err = s.writeTree(ctx); err != nil {
		return fail(err)
	}
	return s, nil
}

// maxIgnoreBytes bounds the repository's info/exclude copied to the shadow.
const maxIgnoreBytes = 1 << 20

// Close removes the snapshot's temporary files; the journal's watches go
// with it.
func (s *Snapshot) Close() error {
	s.journal.close()
	s.journal = nil
	return os.RemoveAll(s.tmp)
}

// Tree is the git tree id of the recorded state.
func (s *Snapshot) Tree() string { return s.tree }

func (s *Snapshot) writeTree(ctx context.Context) (string, error) {
	return s.writeTreeChecked(ctx, func() error { return CheckInputs(ctx, s.dir) })
}

// writeTreeChecked is writeTree with its check of git's inputs given:
// Restore checks only what changed, or nothing when no untrusted code ran
// since its last check.
func (s *Snapshot) writeTreeChecked(ctx context.Context, check func() error) (string, error) {
	return s.writeTreeWith(ctx, check, nil)
}

// writeTreeWith is writeTreeChecked with a way to bring the shadow index
// up to date that is cheaper than `git add -A` (see Snapshot.addPaths);
// when it fails, `git add -A` does it.
func (s *Snapshot) writeTreeWith(ctx context.Context, check, update func() error) (string, error) {
	if check != nil {
		if err := check(); err != nil {
			return "", err
		}
	}
	if update == nil || update() != nil {
		if err := s.addAll(ctx); err != nil {
			return "", err
		}
	}
	tree, err := git(ctx, s.dir, s.env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	return tree, nil
}

// addAll is `git add -A` of the whole work tree into the shadow index.
func (s *Snapshot) addAll(ctx context.Context) error {
	args := []string{"add", "-A", "--", "."}
	for _, p := range s.exclude {
		if rel, ok := s.relative(p); ok {
			args = append(args, ":(exclude,literal)"+rel)
		}
	}
	if _, err := git(ctx, s.dir, s.env, args...); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// relative returns p relative to the snapshot's top directory, if inside.
func (s *Snapshot) relative(p string) (string, bool) {
	top := s.dir
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(dir, filepath.Base(p))
	}
	rel, err := filepath.Rel(top, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Change is one file the run changed.
type Change struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"` // set for renames
	Status  string `json:"status"`             // added, modified, deleted, renamed
	Mode    string `json:"mode,omitempty"`     // "100644", "100755", "120000"
	// Blob is the object id the diff gives the file's new content (empty
	// for deletes); BlobID of the file's bytes must equal it.
	Blob string `json:"-"`
}

// Diff returns the binary-safe unified diff from the snapshot to the
// workspace's current state, and the changed files.
func (s *Snapshot) Diff(ctx context.Context) (string, []Change, error) {
	now, err := s.writeTree(ctx)
	if err != nil {
		return "", nil, err
	}
	if now == s.tree {
		return "", nil, nil
	}
	raw, err := git(ctx, s.dir, s.env, "diff-tree", "-r", "-M", "-z", "--no-commit-id", s.tree, now)
	if err != nil {
		return "", nil, fmt.Errorf("snapshot diff: %w", err)
	}
	changes, err := parseRaw(raw)
	if err != nil {
		return "", nil, err
	}
	// The diff and the files' contents are held in memory: a huge file
	// (a test's output left behind) is refused before either is read.
	for _, c := range changes {
		if c.Status == "deleted" {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(s.dir, filepath.FromSlash(c.Path))); err == nil && fi.Size() > MaxFileBytes {
			return "", nil, &TooLargeError{Path: c.Path, Size: fi.Size()}
		}
	}
	diff, err := git(ctx, s.dir, s.env, "diff-tree", "-p", "--binary", "-M", "--no-color", "--full-index", s.tree, now)
	if err != nil {
		return "", nil, fmt.Errorf("snapshot diff: %w", err)
	}
	return diff + "\n", changes, nil
}

// MaxFileBytes is the largest changed file Diff accepts.
const MaxFileBytes = 16 << 20

// TooLargeError is returned by Diff when a changed file exceeds MaxFileBytes.
type TooLargeError struct {
	Path string
	Size int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("snapshot diff: changed file %s is %d bytes, over the %d-byte limit", e.Path, e.Size, MaxFileBytes)
}

// parseRaw reads `git diff-tree -r -z` output:
// ":oldmode newmode oldsha newsha status\0path\0[path2\0]".
func parseRaw(raw string) ([]Change, error) {
	fields := strings.Split(strings.TrimSuffix(raw, "\x00"), "\x00")
	var out []Change
	for i := 0; i < len(fields); i++ {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) != 5 || i+1 >= len(fields) {
			if strings.TrimSpace(fields[i]) == "" {
				continue
			}
			return nil, fmt.Errorf("snapshot: unexpected diff-tree output %q", fields[i])
		}
		c := Change{Path: fields[i+1], Mode: meta[1], Blob: meta[3]}
		i++
		switch meta[4][0] {
		case 'A':
			c.Status = "added"
		case 'D':
			c.Status, c.Mode, c.Blob = "deleted", meta[0], ""
		case 'R':
			if i+1 >= len(fields) {
				return nil, errors.New("snapshot: truncated rename record")
			}
			c.Status, c.OldPath, c.Path = "renamed", fields[i], fields[i+1]
			i++
		default:
			c.Status = "modified"
		}
		out = append(out, c)
	}
	return out, nil
}

// gitTimeout bounds one git call: hashing a large work tree takes seconds,
// and nothing the repository chooses runs in these calls, so only a FIFO
// swapped in for a file git opens could make one wait this long.
const gitTimeout = 2 * time.Minute

// git runs one harness git command (see internal/gitexec: one binary,
// allow-listed environment, no hook, fsmonitor or config-chosen program).
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return gitexec.Output(ctx, gitexec.Options{Dir: dir, Env: env, Timeout: gitTimeout}, args...)
}

// gitBytes is git returning its output unaltered (file contents).
func gitBytes(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	return gitexec.Run(ctx, gitexec.Options{Dir: dir, Env: env, Timeout: gitTimeout}, args...)
}
