package ghapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/google/go-github/v62/github"
)

const permContentsWrite = "contents: write"

// Commit limits.
const (
	// MaxCommitChanges bounds the files one CommitFiles call may touch.
	MaxCommitChanges = 500
	// MaxBlobBytes bounds one file's content (GitHub accepts up to 100 MB).
	MaxBlobBytes = 20 << 20
)

// File modes accepted in a FileChange.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
)

// FileChange is one file of a commit: new content (with its mode) or a
// deletion. A rename is a deletion of the old path plus an addition.
type FileChange struct {
	Path    string
	Content []byte
	// Mode is ModeFile (the default when empty) or ModeExecutable.
	Mode   string
	Delete bool
}

// CommitRequest describes a commit made through the Git Data API.
type CommitRequest struct {
	// BaseSHA is the parent commit; its tree is the base of the new tree.
	BaseSHA string
	// Branch receives the commit (name without refs/heads/).
	Branch  string
	Message string
	Changes []FileChange
	// CreateBranch creates Branch at the new commit instead of updating it.
	CreateBranch bool
	// ExpectedHead, when set, is where Branch must still point: if it moved,
	// CommitFiles returns ErrHeadMoved and writes nothing.
	ExpectedHead string
	// Force allows a non-fast-forward update. Only for branches mini-agent
	// owns (its fix branches), never for a contributor's branch.
	Force bool
	// AdoptMarker, with CreateBranch, is a line (such as a commit trailer)
	// that marks a commit as the caller's own. When the branch turns out to
	// exist already at another commit than the one just made (a concurrent
	// or earlier run), it is force-updated to the new commit only if its head
	// commit's message has this line; otherwise nothing is changed and
	// CommitFiles returns ErrBranchExists.
	AdoptMarker string
	// ExpectedTree, when set, is the id (lowercase hex) the tree GitHub
	// builds from BaseSHA's tree and Changes must have, such as that of the
	// tree validated on a local checkout. Otherwise nothing is committed (the
	// tree and its blobs stay unreferenced; no commit is made, no ref
	// created or moved) and CommitFiles returns a *TreeMismatchError naming
	// both ids.
	ExpectedTree string
}

// CommitResult is what CommitFiles made.
type CommitResult struct {
	SHA     string
	TreeSHA string
	Branch  string
	Created bool
}

// CommitFiles writes blobs, a tree over the base commit's tree, a commit with
// BaseSHA as its parent, then creates or updates the branch. Commits made
// this way are signed by GitHub (shown Verified) and need no push credential.
// The ref is updated without force unless req.Force is set, so a branch that
// moved meanwhile is never overwritten: that case gives ErrHeadMoved. With
// req.ExpectedTree set, a tree with another id stops it before the commit
// with a *TreeMismatchError.
func (c *Client) CommitFiles(ctx context.Context, owner, repo string, req CommitRequest) (*CommitResult, error) {
	op := fmt.Sprintf("commit to %s", req.Branch)
	if err := validateCommit(req); err != nil {
		return nil, fmt.Errorf("ghapi: %s: %w", op, err)
	}
	refName := "heads/" + req.Branch

	if req.ExpectedHead != "" {
		ref, resp, err := c.gh.Git.GetRef(ctx, owner, repo, refName)
		if err != nil {
			return nil, c.fail(op+": get ref", permContentsWrite, resp, err)
		}
		if got := ref.GetObject().GetSHA(); got != req.ExpectedHead {
			return nil, fmt.Errorf("ghapi: %s: %w: it is at %s, expected %s", op, ErrHeadMoved, got, req.ExpectedHead)
		}
	}

	base, resp, err := c.gh.Git.GetCommit(ctx, owner, repo, req.BaseSHA)
	if err != nil {
		return nil, c.fail(op+": get base commit "+req.BaseSHA, permContentsWrite, resp, err)
	}
	// Without base_tree the new tree would hold only the changed files.
	baseTree := base.GetTree().GetSHA()
	if baseTree == "" {
		return nil, &APIError{Op: op, Message: "base commit " + req.BaseSHA + " has no tree"}
	}

	entries := make([]*github.TreeEntry, 0, len(req.Changes))
	for _, ch := range req.Changes {
		if ch.Delete {
			// A null sha deletes the path from the base tree.
			entries = append(entries, &github.TreeEntry{
				Path: github.String(ch.Path), Mode: github.String(ModeFile), Type: github.String("blob"),
			})
			continue
		}
		blob, resp, err := c.gh.Git.CreateBlob(ctx, owner, repo, &github.Blob{
			Content:  github.String(base64.StdEncoding.EncodeToString(ch.Content)),
			Encoding: github.String("base64"),
		})
		if err != nil {
			return nil, c.fail(op+": create blob for "+ch.Path, permContentsWrite, resp, err)
		}
		mode := ch.Mode
		if mode == "" {
			mode = ModeFile
		}
		entries = append(entries, &github.TreeEntry{
			Path: github.String(ch.Path), Mode: github.String(mode), Type: github.String("blob"), SHA: blob.SHA,
		})
	}

	tree, resp, err := c.gh.Git.CreateTree(ctx, owner, repo, baseTree, entries)
	if err != nil {
		return nil, c.fail(op+": create tree", permContentsWrite, resp, err)
	}
	if req.ExpectedTree != "" && tree.GetSHA() != req.ExpectedTree {
		return nil, fmt.Errorf("ghapi: %s: %w", op, &TreeMismatchError{Want: req.ExpectedTree, Got: tree.GetSHA()})
	}
	commit, resp, err := c.gh.Git.CreateCommit(ctx, owner, repo, &github.Commit{
		Message: github.String(req.Message),
		Tree:    &github.Tree{SHA: tree.SHA},
		Parents: []*github.Commit{{SHA: github.String(req.BaseSHA)}},
	}, nil)
	if err != nil {
		return nil, c.fail(op+": create commit", permContentsWrite, resp, err)
	}

	ref := &github.Reference{
		Ref:    github.String("refs/" + refName),
		Object: &github.GitObject{SHA: commit.SHA},
	}
	res := &CommitResult{SHA: commit.GetSHA(), TreeSHA: tree.GetSHA(), Branch: req.Branch, Created: req.CreateBranch}
	if req.CreateBranch {
		_, resp, err = c.gh.Git.CreateRef(ctx, owner, repo, ref)
		if err != nil {
			err = c.fail(op+": create branch", permContentsWrite, resp, err)
			if refExists(err) {
				return c.branchExists(ctx, owner, repo, req, ref, res)
			}
			return nil, err
		}
		return res, nil
	}
	_, resp, err = c.gh.Git.UpdateRef(ctx, owner, repo, ref, req.Force)
	if err != nil {
		err = c.fail(op+": update branch", permContentsWrite, resp, err)
		var ae *APIError
		if errors.As(err, &ae) && ae.Kind == ErrUnprocessable && strings.Contains(strings.ToLower(ae.Message), "fast forward") {
			ae.Kind = ErrHeadMoved
		}
		return nil, err
	}
	return res, nil
}

func validateCommit(req CommitRequest) error {
	switch {
	case req.Branch == "" || strings.HasPrefix(req.Branch, "refs/") || strings.ContainsAny(req.Branch, " ~^:?*[\\") ||
		strings.Contains(req.Branch, ".."):
		return fmt.Errorf("invalid branch name %q", req.Branch)
	case !IsSHA(req.BaseSHA):
		return fmt.Errorf("invalid base SHA %q", req.BaseSHA)
	case req.ExpectedHead != "" && !IsSHA(req.ExpectedHead):
		return fmt.Errorf("invalid expected head %q", req.ExpectedHead)
	case req.ExpectedTree != "" && !IsSHA(req.ExpectedTree):
		return fmt.Errorf("invalid expected tree %q: want 40 or 64 lowercase hex digits", req.ExpectedTree)
	case req.ExpectedHead != "" && req.CreateBranch:
		return errors.New("expected head makes no sense when creating the branch")
	case strings.TrimSpace(req.Message) == "":
		return errors.New("empty commit message")
	case len(req.Changes) == 0:
		return errors.New("no changes")
	case len(req.Changes) > MaxCommitChanges:
		return fmt.Errorf("%d changes, more than %d", len(req.Changes), MaxCommitChanges)
	}
	seen := make(map[string]bool, len(req.Changes))
	for _, ch := range req.Changes {
		if !validRepoPath(ch.Path) {
			return fmt.Errorf("invalid path %q", ch.Path)
		}
		if seen[ch.Path] {
			return fmt.Errorf("path %q changed twice", ch.Path)
		}
		seen[ch.Path] = true
		if ch.Delete {
			if len(ch.Content) > 0 || ch.Mode != "" {
				return fmt.Errorf("deletion of %q carries content or mode", ch.Path)
			}
			continue
		}
		if ch.Mode != "" && ch.Mode != ModeFile && ch.Mode != ModeExecutable {
			return fmt.Errorf("mode %q of %q: want %s or %s", ch.Mode, ch.Path, ModeFile, ModeExecutable)
		}
		if len(ch.Content) > MaxBlobBytes {
			return fmt.Errorf("%q is %d bytes, more than %d", ch.Path, len(ch.Content), MaxBlobBytes)
		}
	}
	return nil
}

// validRepoPath accepts clean, relative, slash-separated paths outside .git.
func validRepoPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || strings.ContainsAny(p, "\\\x00") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." || strings.EqualFold(seg, ".git") {
			return false
		}
	}
	return true
}

// IsSHA says whether s is a full object name: 40 (SHA-1) or 64
// (SHA-256) lowercase hex digits.
func IsSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
