package ghapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// Comments on PRs go through the issues API; GITHUB_TOKEN needs either
// permission, pull-requests is the one a PR workflow grants.
const permCommentsWrite = "pull-requests: write"

// MaxCommentBytes is GitHub's limit on a comment body (65536 characters);
// longer bodies are refused before any request.
const MaxCommentBytes = 65536

// Comment is an issue or PR conversation comment.
type Comment struct {
	ID         int64
	Body       string
	Author     string
	AuthorType string // "User" or "Bot"
	// Association is the author's relation to the repository (OWNER, MEMBER, ...).
	Association string
	HTMLURL     string
	CreatedAt   time.Time
}

func toComment(c *github.IssueComment) *Comment {
	return &Comment{
		ID:          c.GetID(),
		Body:        c.GetBody(),
		Author:      c.GetUser().GetLogin(),
		AuthorType:  c.GetUser().GetType(),
		Association: c.GetAuthorAssociation(),
		HTMLURL:     c.GetHTMLURL(),
		CreatedAt:   c.GetCreatedAt().Time,
	}
}

// CreateComment posts body on issue or PR number.
func (c *Client) CreateComment(ctx context.Context, owner, repo string, number int, body string) (*Comment, error) {
	op := fmt.Sprintf("comment on #%d", number)
	if err := checkCommentBody(body); err != nil {
		return nil, fmt.Errorf("ghapi: %s: %w", op, err)
	}
	cm, resp, err := c.gh.Issues.CreateComment(ctx, owner, repo, number, &github.IssueComment{Body: github.String(body)})
	if err != nil {
		return nil, c.fail(op, permCommentsWrite, resp, err)
	}
	return toComment(cm), nil
}

// UpdateComment replaces the body of comment id.
func (c *Client) UpdateComment(ctx context.Context, owner, repo string, id int64, body string) (*Comment, error) {
	op := fmt.Sprintf("update comment %d", id)
	if err := checkCommentBody(body); err != nil {
		return nil, fmt.Errorf("ghapi: %s: %w", op, err)
	}
	cm, resp, err := c.gh.Issues.EditComment(ctx, owner, repo, id, &github.IssueComment{Body: github.String(body)})
	if err != nil {
		return nil, c.fail(op, permCommentsWrite, resp, err)
	}
	return toComment(cm), nil
}

// FindCommentWithMarker returns the oldest bot comment on number whose first
// line starts with marker (a hidden `<!-- ... -->` tag mini-agent writes
// first), or nil when none. A quote of the marker ("> <!-- ... -->"), a
// person's comment, or another bot echoing text that holds the marker (a PR
// summary bot quoting a body) is not mistaken for it, so none of them can
// capture the tracking comment.
func (c *Client) FindCommentWithMarker(ctx context.Context, owner, repo string, number int, marker string) (*Comment, error) {
	if strings.TrimSpace(marker) == "" {
		return nil, errors.New("ghapi: find comment: empty marker")
	}
	cs, resp, err := paginate(func(o github.ListOptions) ([]*github.IssueComment, *github.Response, error) {
		return c.gh.Issues.ListComments(ctx, owner, repo, number, &github.IssueListCommentsOptions{
			Sort: github.String("created"), Direction: github.String("asc"), ListOptions: o,
		})
	})
	if err != nil {
		return nil, c.fail(fmt.Sprintf("list comments on #%d", number), permPullsRead, resp, err)
	}
	for _, cm := range cs {
		// Only a bot's comment can be ours: a person pasting the marker
		// must not capture (or block) the tracking comment.
		if cm.GetUser().GetType() == "Bot" && startsWithMarker(cm.GetBody(), marker) {
			return toComment(cm), nil
		}
	}
	return nil, nil
}

func startsWithMarker(body, marker string) bool {
	return strings.HasPrefix(strings.TrimLeft(body, " \t\r\n"), marker)
}

func checkCommentBody(body string) error {
	switch {
	case strings.TrimSpace(body) == "":
		return errors.New("empty comment body")
	case len(body) > MaxCommentBytes:
		return fmt.Errorf("comment body is %d bytes, more than %d", len(body), MaxCommentBytes)
	}
	return nil
}
