package ghapi

import (
	"context"
	"fmt"
)

// reactions GitHub accepts on a comment.
var reactions = map[string]bool{
	"+1": true, "-1": true, "laugh": true, "confused": true,
	"heart": true, "hooray": true, "rocket": true, "eyes": true,
}

// ReactToComment adds a reaction (e.g. "eyes") to issue comment id. Reacting
// twice with the same content is harmless: GitHub answers 200 with the
// existing reaction.
func (c *Client) ReactToComment(ctx context.Context, owner, repo string, id int64, content string) error {
	op := fmt.Sprintf("react %q to comment %d", content, id)
	if !reactions[content] {
		return fmt.Errorf("ghapi: %s: unknown reaction", op)
	}
	_, resp, err := c.gh.Reactions.CreateIssueCommentReaction(ctx, owner, repo, id, content)
	return c.fail(op, permCommentsWrite, resp, err)
}
