// Package snapshot records a workspace's state before a run and produces
// the exact diff of what the run changed, with real git, without touching
// the user's index, HEAD or working tree.
package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/proc"
)

// Snapshot is the tree of a workspace at one moment.
type Snapshot struct {
	dir     string
	env     []string // GIT_DIR / GIT_WORK_TREE / GIT_INDEX_FILE for every git call
	tree    string
	tmp     string
	shadow  bool
	exclude []string // absolute paths never recorded
}

// Take records the current state of dir (tracked and untracked, ignored
// files excluded). In a git work tree it uses a private copy of the index;
// elsewhere a shadow repository in a temporary directory. Close removes
// the temporary files.
func Take(ctx context.Context, dir string) (*Snapshot, error) {
	return TakeExcluding(ctx, dir, nil)
}

// TakeExcluding is Take leaving out the files at the given paths (absolute,
// or relative to the current directory), before and after: the harness's
// own outputs (a --trace file in the workspace) are not part of the change.
func TakeExcluding(ctx context.Context, dir string, exclude []string) (*Snapshot, error) {
	tmp, err := os.MkdirTemp("", "mini-agent-snap-")
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	s := &Snapshot{dir: dir, tmp: tmp}
	for _, p := range exclude {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			s.exclude = append(s.exclude, abs)
		}
	}
	index := filepath.Join(tmp, "index")
	gitDir, err := git(ctx, dir, nil, "rev-parse", "--absolute-git-dir")
	if err == nil {
		top, terr := git(ctx, dir, nil, "rev-parse", "--show-toplevel")
		if terr != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("snapshot: %w", terr)
		}
		if b, err := os.ReadFile(filepath.Join(gitDir, "index")); err == nil {
			// Starting from the real index keeps git's stat cache: fast on big repos.
			if err := os.WriteFile(index, b, 0o600); err != nil {
				os.RemoveAll(tmp)
				return nil, fmt.Errorf("snapshot: %w", err)
			}
		}
		s.dir = top
		s.env = []string{"GIT_INDEX_FILE=" + index}
	} else {
		shadow := filepath.Join(tmp, "shadow.git")
		s.shadow = true
		s.env = []string{"GIT_DIR=" + shadow, "GIT_WORK_TREE=" + dir, "GIT_INDEX_FILE=" + index}
		if _, err := git(ctx, dir, s.env, "init", "-q"); err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("snapshot: %w", err)
		}
	}
	if s.tree, err = s.writeTree(ctx); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return s, nil
}

// Close removes the snapshot's temporary files.
func (s *Snapshot) Close() error { return os.RemoveAll(s.tmp) }

// Tree is the git tree id of the recorded state.
func (s *Snapshot) Tree() string { return s.tree }

func (s *Snapshot) writeTree(ctx context.Context) (string, error) {
	args := []string{"add", "-A", "--", "."}
	for _, p := range s.exclude {
		if rel, ok := s.relative(p); ok {
			args = append(args, ":(exclude,literal)"+rel)
		}
	}
	if _, err := git(ctx, s.dir, s.env, args...); err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	tree, err := git(ctx, s.dir, s.env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	return tree, nil
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
		c := Change{Path: fields[i+1], Mode: meta[1]}
		i++
		switch meta[4][0] {
		case 'A':
			c.Status = "added"
		case 'D':
			c.Status, c.Mode = "deleted", meta[0]
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

// Bounds on one git call. The repository's attributes and config (which
// code under test can write) may make git run filters that never end.
const (
	gitTimeout   = 10 * time.Minute
	gitWaitDelay = 2 * time.Second
)

// git runs one git command with a clean, non-interactive configuration and
// an environment scrubbed of secrets, like the test command's: git may run
// filters or hooks the repository chose after code the model wrote ran.
// The command and anything it started die with ctx or after gitTimeout.
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.quotepath=off", "-c", "core.autocrlf=false", "-c", "core.fsmonitor=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	proc.Contain(cmd, gitWaitDelay)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// gitEnvNames are the only variables git gets: enough to find itself and
// the user's global config, and no secret, whatever its name (names the
// maintainer configured as secrets are unknown here).
var gitEnvNames = []string{"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TMP", "TEMP", "XDG_CONFIG_HOME",
	"SYSTEMROOT", "WINDIR", "USERPROFILE", "PROGRAMDATA", "LOCALAPPDATA", "APPDATA"}

func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, ok := strings.Cut(kv, "=")
		if ok && slices.ContainsFunc(gitEnvNames, func(n string) bool { return strings.EqualFold(n, name) }) && !proc.IsSecretName(name, nil) {
			env = append(env, kv)
		}
	}
	return env
}
