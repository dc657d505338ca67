package ghapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"
)

const permContentsRead = "contents: read"

// FileAtRef returns the content of the file at path on ref (a branch, tag or
// SHA; empty means the default branch). A missing file gives an error
// matching ErrNotFound, distinct from every other failure, so a caller can
// treat "no config" as defaults while still failing on a 403 or a 5xx.
func (c *Client) FileAtRef(ctx context.Context, owner, repo, path, ref string) ([]byte, error) {
	op := fmt.Sprintf("get %s at %q", path, ref)
	var opts *github.RepositoryContentGetOptions
	if ref != "" {
		opts = &github.RepositoryContentGetOptions{Ref: ref}
	}
	file, dir, resp, err := c.gh.Repositories.GetContents(ctx, owner, repo, path, opts)
	if err != nil {
		return nil, c.fail(op, permContentsRead, resp, err)
	}
	if file == nil || dir != nil {
		return nil, &APIError{Op: op, Message: "is a directory"}
	}
	if t := file.GetType(); t != "" && t != "file" {
		return nil, &APIError{Op: op, Message: fmt.Sprintf("is a %s, not a file", t)}
	}
	s, err := file.GetContent()
	if err != nil {
		return nil, &APIError{Op: op, Message: err.Error(), err: err}
	}
	return []byte(s), nil
}

// DefaultBranch returns the repository's default branch name.
func (c *Client) DefaultBranch(ctx context.Context, owner, repo string) (string, error) {
	r, resp, err := c.gh.Repositories.Get(ctx, owner, repo)
	if err != nil {
		return "", c.fail(fmt.Sprintf("get repository %s/%s", owner, repo), permContentsRead, resp, err)
	}
	if r.GetDefaultBranch() == "" {
		return "", &APIError{Op: fmt.Sprintf("get repository %s/%s", owner, repo), Message: "no default branch (empty repository?)"}
	}
	return r.GetDefaultBranch(), nil
}

// BranchHead returns the commit SHA a branch points at; a missing branch
// gives ErrNotFound.
func (c *Client) BranchHead(ctx context.Context, owner, repo, branch string) (string, error) {
	ref, resp, err := c.gh.Git.GetRef(ctx, owner, repo, "heads/"+branch)
	if err != nil {
		return "", c.fail(fmt.Sprintf("get branch %s", branch), permContentsRead, resp, err)
	}
	return ref.GetObject().GetSHA(), nil
}
