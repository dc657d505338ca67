package gitexec

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/org/mini-agent/internal/safefile"
)

// repoInputs are the files of a git directory that the harness's git calls
// read. git opens them with a blocking open: a FIFO there (test code can
// write .git) would stall it.
var repoInputs = []string{"HEAD", "config", "index", "commondir", "packed-refs", "info/exclude", "info/attributes", "objects/info/alternates"}

// GitDir finds the git directory that git would use for dir: the first
// `.git` entry in dir or a parent, a directory or a "gitdir: PATH" file.
// It returns "" when there is none. The .git file is read the non-blocking
// way.
func GitDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; {
		p := filepath.Join(d, ".git")
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			return p, nil
		case err == nil && fi.Mode().IsRegular():
			data, err := safefile.ReadPath(p, 4096)
			if err != nil {
				return "", fmt.Errorf("%s: %w", p, err)
			}
			target, ok := strings.CutPrefix(string(bytes.TrimSpace(data)), "gitdir:")
			if !ok {
				return "", fmt.Errorf("%s: not a gitdir file", p)
			}
			target = strings.TrimSpace(target)
			if !filepath.IsAbs(target) {
				target = filepath.Join(d, target)
			}
			return filepath.Clean(target), nil
		case err == nil:
			return "", fmt.Errorf("%s is a %s", p, fi.Mode().Type())
		case !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", nil
		}
		d = parent
	}
}

// GitDirs is the git directory of dir's repository and, for a linked
// work tree, the common directory its commondir file names (last); nil
// when dir is in no repository.
func GitDirs(dir string) ([]string, error) {
	gitDir, err := GitDir(dir)
	if err != nil || gitDir == "" {
		return nil, err
	}
	dirs := []string{gitDir}
	if data, err := safefile.ReadPath(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		dirs = append(dirs, filepath.Clean(common))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("git input %s: %w", filepath.Join(gitDir, "commondir"), err)
	}
	return dirs, nil
}

// CheckRepoInputs refuses, with a clear error, when a file git would read
// from the repository of dir (HEAD, config, index, info/exclude...) exists
// but is not a regular file. No repository is fine.
func CheckRepoInputs(dir string) error {
	dirs, err := GitDirs(dir)
	if err != nil || dirs == nil {
		return err
	}
	for _, d := range dirs {
		root, err := os.OpenRoot(d)
		if err != nil {
			return fmt.Errorf("git directory %s: %w", d, err)
		}
		for _, name := range repoInputs {
			if err := safefile.CheckRegular(root, name); err != nil {
				root.Close()
				return fmt.Errorf("git input %s: %w", filepath.Join(d, filepath.FromSlash(name)), err)
			}
		}
		root.Close()
	}
	return nil
}
