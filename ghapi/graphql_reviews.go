package ghapi

import (
	"context"
	"fmt"
)

// ReviewComment is a comment of an unresolved review thread.
type ReviewComment struct {
	Path string
	// Line is the line in the PR's head version (0 when outdated).
	Line        int
	Body        string
	Author      string
	AuthorType  string // "User" or "Bot"
	Association string // OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, ...
}

// Bounds of the review threads read.
const (
	maxReviewThreads  = 50
	maxThreadComments = 10
)

const reviewThreadsQuery = `query($owner:String!,$name:String!,$number:Int!){repository(owner:$owner,name:$name){pullRequest(number:$number){` +
	`reviewThreads(first:50){nodes{isResolved isOutdated path line comments(first:10){nodes{body authorAssociation author{__typename login}}}}}}}}`

// UnresolvedReviewComments returns the comments of PR number's unresolved
// review threads (the REST API does not say which are resolved), at most
// 50 threads of 10 comments, oldest first.
func (c *Client) UnresolvedReviewComments(ctx context.Context, owner, repo string, number int) ([]ReviewComment, error) {
	var q struct {
		Repository struct {
			PullRequest *struct {
				ReviewThreads struct {
					Nodes []struct {
						IsResolved bool   `json:"isResolved"`
						IsOutdated bool   `json:"isOutdated"`
						Path       string `json:"path"`
						Line       *int   `json:"line"`
						Comments   struct {
							Nodes []struct {
								Body              string `json:"body"`
								AuthorAssociation string `json:"authorAssociation"`
								Author            *struct {
									Typename string `json:"__typename"`
									Login    string `json:"login"`
								} `json:"author"`
							} `json:"nodes"`
						} `json:"comments"`
					} `json:"nodes"`
				} `json:"reviewThreads"`
			} `json:"pullRequest"`
		} `json:"repository"`
	}
	op := fmt.Sprintf("review threads of #%d", number)
	if err := c.graphql(ctx, op, permPullsRead, reviewThreadsQuery, map[string]any{"owner": owner, "name": repo, "number": number}, &q); err != nil {
		return nil, err
	}
	pr := q.Repository.PullRequest
	if pr == nil {
		return nil, &APIError{Op: op, Kind: ErrNotFound, StatusCode: 200, Message: "no such pull request"}
	}
	var out []ReviewComment
	for i, t := range pr.ReviewThreads.Nodes {
		if i == maxReviewThreads {
			break
		}
		if t.IsResolved {
			continue
		}
		line := 0
		if t.Line != nil && !t.IsOutdated {
			line = *t.Line
		}
		for j, cm := range t.Comments.Nodes {
			if j == maxThreadComments {
				break
			}
			rc := ReviewComment{Path: t.Path, Line: line, Body: cm.Body, Association: cm.AuthorAssociation}
			if cm.Author != nil {
				rc.Author, rc.AuthorType = cm.Author.Login, cm.Author.Typename
			}
			out = append(out, rc)
		}
	}
	return out, nil
}
