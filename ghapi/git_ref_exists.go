package ghapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
)

// refExists reports GitHub's 422 for creating a ref that exists. It is also
// what a retried create gets when the first try's answer was lost.
func refExists(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Kind == ErrUnprocessable &&
		strings.Contains(strings.ToLower(ae.Message), "reference already exists")
}

// branchExists settles a create refused because the branch exists: at the
// commit just made, the create went through and only its answer was lost;
// at a commit marked req.AdoptMarker, the branch is the caller's and is
// moved to the new commit; anywhere else it is left alone.
func (c *Client) branchExists(ctx context.Context, owner, repo string, req CommitRequest, ref *github.Reference, res *CommitResult) (*CommitResult, error) {
	op := fmt.Sprintf("commit to %s", req.Branch)
	got, resp, err := c.gh.Git.GetRef(ctx, owner, repo, "heads/"+req.Branch)
	if err != nil {
		return nil, c.fail(op+": read the branch that already exists", permContentsWrite, resp, err)
	}
	head := got.GetObject().GetSHA()
	if head == res.SHA {
		return res, nil
	}
	why := "no marker was given to recognize it"
	if req.AdoptMarker != "" {
		hc, resp, err := c.gh.Git.GetCommit(ctx, owner, repo, head)
		if err != nil {
			return nil, c.fail(op+": read the head of the branch that already exists", permContentsWrite, resp, err)
		}
		if hasLine(hc.GetMessage(), req.AdoptMarker) {
			if _, resp, err := c.gh.Git.UpdateRef(ctx, owner, repo, ref, true); err != nil {
				return nil, c.fail(op+": update the existing branch", permContentsWrite, resp, err)
			}
			res.Created = false
			return res, nil
		}
		why = fmt.Sprintf("its head commit lacks the line %q", c.scrub(req.AdoptMarker))
	}
	return nil, &APIError{Op: op + ": create branch", Kind: ErrBranchExists, StatusCode: 422,
		Message: fmt.Sprintf("%s already exists at %s, which is not the commit just made (%s) and not the caller's own (%s): left unchanged",
			req.Branch, head, res.SHA, why)}
}

// hasLine reports whether msg has line as one of its lines (spaces around
// it ignored).
func hasLine(msg, line string) bool {
	line = strings.TrimSpace(line)
	for _, l := range strings.Split(msg, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}
