package ghapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"
)

// Labels returns the label names on issue or PR number, fresher than the
// ones in a PR object fetched earlier.
func (c *Client) Labels(ctx context.Context, owner, repo string, number int) ([]string, error) {
	ls, resp, err := paginate(func(o github.ListOptions) ([]*github.Label, *github.Response, error) {
		return c.gh.Issues.ListLabelsByIssue(ctx, owner, repo, number, &o)
	})
	if err != nil {
		return nil, c.fail(fmt.Sprintf("list labels of #%d", number), permPullsRead, resp, err)
	}
	names := make([]string, 0, len(ls))
	for _, l := range ls {
		names = append(names, l.GetName())
	}
	return names, nil
}

// AddLabels adds labels to issue or PR number; GitHub creates unknown labels.
func (c *Client) AddLabels(ctx context.Context, owner, repo string, number int, labels ...string) error {
	if len(labels) == 0 {
		return nil
	}
	_, resp, err := c.gh.Issues.AddLabelsToIssue(ctx, owner, repo, number, labels)
	return c.fail(fmt.Sprintf("add labels to #%d", number), permCommentsWrite, resp, err)
}
