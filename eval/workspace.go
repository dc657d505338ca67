package eval

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/org/mini-agent/internal/gitexec"
)

// copyTree copies the directory src of fsys over dst, restoring go.mod
// files stored as go.mod.txt. Existing files are overwritten (hidden checks
// replace the agent's copies of the check files).
func copyTree(fsys fs.FS, src, dst string) error {
	return fs.WalkDir(fsys, src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, src), "/")
		if rel == "" {
			return os.MkdirAll(dst, 0o755)
		}
		if path.Base(rel) == GoModName {
			rel = path.Join(path.Dir(rel), "go.mod")
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: only regular files and directories are copied", p)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// materialize copies the task's project into dir and commits it in a fresh
// git repository, as a CI checkout would be.
func materialize(ctx context.Context, t *Task, dir string) error {
	if err := copyTree(t.fsys, RepoDir, dir); err != nil {
		return fmt.Errorf("copy project: %w", err)
	}
	return commitAll(ctx, dir, "task "+t.Name)
}

// commitAll makes dir a new git repository with everything in it committed.
func commitAll(ctx context.Context, dir, message string) error {
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=mini-agent eval", "-c", "user.email=eval@example.invalid", "-c", "commit.gpgsign=false",
			"commit", "-q", "--no-verify", "-m", message},
	} {
		if _, err := git(ctx, dir, args...); err != nil {
			return err
		}
	}
	return nil
}

// changedPaths lists the workspace paths that differ from HEAD: modified,
// added, deleted and untracked files (ignored files aside).
func changedPaths(ctx context.Context, dir string) ([]string, error) {
	out, err := git(ctx, dir, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range strings.Split(out, "\x00") {
		if len(rec) > 3 {
			paths = append(paths, rec[3:])
		}
	}
	return paths, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	// gitexec: the task's repository is its own (no inherited GIT_DIR and
	// the like, set when the eval runs inside a git hook), no system or
	// global config, no hook or fsmonitor, no secret in git's environment.
	out, err := gitexec.Run(ctx, gitexec.Options{Dir: dir}, args...)
	return string(out), err
}
