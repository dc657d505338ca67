package config

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/org/mini-agent/ghapi"
)

// Source reads files through the GitHub API (ghapi.Client implements it).
type Source interface {
	FileAtRef(ctx context.Context, owner, repo, path, ref string) ([]byte, error)
	DefaultBranch(ctx context.Context, owner, repo string) (string, error)
}

// Loaded is a policy and where it came from.
type Loaded struct {
	*Config
	// Origin says where the policy came from, for logs and PR bodies, e.g.
	// ".github/mini-agent.yml on main" or "defaults (no .github/mini-agent.yml on main)".
	Origin string
	// DefaultBranch is the branch the file was read from.
	DefaultBranch string
}

// Load reads the policy file at file (DefaultPath when empty) from the
// repository's default branch — never from a PR head, so a change cannot
// loosen the policy applied to itself. defaultBranch may be given (event
// payloads carry it) to save a request. A missing file means the defaults;
// any other failure, or a bad file, is an error.
func Load(ctx context.Context, src Source, owner, repo, defaultBranch, file string) (*Loaded, error) {
	if file == "" {
		file = DefaultPath
	}
	if path.IsAbs(file) || path.Clean(file) != file || strings.HasPrefix(file, "../") || file == ".." {
		return nil, &Error{Path: file, Problems: []string{"the config input must be a clean path inside the repository"}}
	}
	if defaultBranch == "" {
		b, err := src.DefaultBranch(ctx, owner, repo)
		if err != nil {
			return nil, fmt.Errorf("load configuration: %w", err)
		}
		defaultBranch = b
	}
	data, err := src.FileAtRef(ctx, owner, repo, file, defaultBranch)
	switch {
	case errors.Is(err, ghapi.ErrNotFound):
		return &Loaded{Config: Default(), DefaultBranch: defaultBranch,
			Origin: fmt.Sprintf("defaults (no %s on %s)", file, defaultBranch)}, nil
	case err != nil:
		return nil, fmt.Errorf("load configuration: %w", err)
	}
	c, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	return &Loaded{Config: c, DefaultBranch: defaultBranch, Origin: fmt.Sprintf("%s on %s", file, defaultBranch)}, nil
}
