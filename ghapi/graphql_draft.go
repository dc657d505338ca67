package ghapi

import (
	"context"
	"fmt"
	"strings"
)

// The REST API cannot turn a pull request into a draft; GraphQL's
// convertPullRequestToDraft can (pull-requests: write).
const (
	prIDQuery     = `query($owner:String!,$name:String!,$number:Int!){repository(owner:$owner,name:$name){pullRequest(number:$number){id isDraft}}}`
	toDraftMutate = `mutation($id:ID!){convertPullRequestToDraft(input:{pullRequestId:$id}){pullRequest{isDraft}}}`
)

type graphqlError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
}

// graphql posts one GraphQL request to the API host and decodes its data
// into out; GraphQL errors (answered with 200) become an APIError.
func (c *Client) graphql(ctx context.Context, op, perm, query string, vars map[string]any, out any) error {
	// github.com: https://api.github.com/graphql; GHES: https://HOST/api/graphql.
	rel := "graphql"
	if strings.HasSuffix(c.gh.BaseURL.Path, "/api/v3/") {
		rel = "../graphql"
	}
	req, err := c.gh.NewRequest("POST", rel, map[string]any{"query": query, "variables": vars})
	if err != nil {
		return fmt.Errorf("ghapi: %s: %w", op, err)
	}
	var resp struct {
		Data   any            `json:"data"`
		Errors []graphqlError `json:"errors"`
	}
	resp.Data = out
	r, err := c.gh.Do(ctx, req, &resp)
	if err != nil {
		return c.fail(op, perm, r, err)
	}
	if len(resp.Errors) > 0 {
		e := &APIError{Op: op, StatusCode: 200, Message: c.scrub(resp.Errors[0].Message)}
		switch resp.Errors[0].Type {
		case "NOT_FOUND":
			e.Kind = ErrNotFound
		case "FORBIDDEN":
			e.Kind, e.Permission = ErrForbidden, perm
		default:
			e.Kind = ErrUnprocessable
		}
		return e
	}
	return nil
}

// ConvertPRToDraft turns PR number into a draft; a PR that is one already
// is left alone (one call instead of two).
func (c *Client) ConvertPRToDraft(ctx context.Context, owner, repo string, number int) error {
	op := fmt.Sprintf("convert pull request #%d to draft", number)
	var q struct {
		Repository struct {
			PullRequest *struct {
				ID      string `json:"id"`
				IsDraft bool   `json:"isDraft"`
			} `json:"pullRequest"`
		} `json:"repository"`
	}
	if err := c.graphql(ctx, op, permPullsRead, prIDQuery, map[string]any{"owner": owner, "name": repo, "number": number}, &q); err != nil {
		return err
	}
	pr := q.Repository.PullRequest
	switch {
	case pr == nil || pr.ID == "":
		return &APIError{Op: op, Kind: ErrNotFound, StatusCode: 200, Message: "no such pull request"}
	case pr.IsDraft:
		return nil
	}
	var m struct {
		Convert struct {
			PullRequest struct {
				IsDraft bool `json:"isDraft"`
			} `json:"pullRequest"`
		} `json:"convertPullRequestToDraft"`
	}
	if err := c.graphql(ctx, op, permPullsWrite, toDraftMutate, map[string]any{"id": pr.ID}, &m); err != nil {
		return err
	}
	if !m.Convert.PullRequest.IsDraft {
		return &APIError{Op: op, Kind: ErrUnprocessable, StatusCode: 200, Message: "GitHub did not make it a draft"}
	}
	return nil
}
