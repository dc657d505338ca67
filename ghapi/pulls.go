package ghapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

const (
	permPullsRead  = "pull-requests: read"
	permPullsWrite = "pull-requests: write"
)

// PR is the part of a pull request mini-agent decides on.
type PR struct {
	Number  int
	State   string // open or closed
	Draft   bool
	Merged  bool
	Title   string
	Body    string
	HTMLURL string
	Author  string
	HeadSHA string
	HeadRef string
	// HeadRepo and BaseRepo are "owner/name"; HeadRepo is empty when the
	// fork was deleted.
	HeadRepo string
	BaseRef  string
	BaseRepo string
	Labels   []string
	ClosedAt time.Time
}

// IsFork reports whether the head branch lives in another repository than
// the base (including a deleted fork).
func (p *PR) IsFork() bool {
	return p.HeadRepo == "" || !strings.EqualFold(p.HeadRepo, p.BaseRepo)
}

// HasLabel reports whether the PR carries name (case-insensitive, as GitHub
// label names are).
func (p *PR) HasLabel(name string) bool {
	for _, l := range p.Labels {
		if strings.EqualFold(l, name) {
			return true
		}
	}
	return false
}

func toPR(p *github.PullRequest) *PR {
	out := &PR{
		Number:   p.GetNumber(),
		State:    p.GetState(),
		Draft:    p.GetDraft(),
		Merged:   p.GetMerged() || p.MergedAt != nil,
		Title:    p.GetTitle(),
		Body:     p.GetBody(),
		HTMLURL:  p.GetHTMLURL(),
		Author:   p.GetUser().GetLogin(),
		HeadSHA:  p.GetHead().GetSHA(),
		HeadRef:  p.GetHead().GetRef(),
		HeadRepo: p.GetHead().GetRepo().GetFullName(),
		BaseRef:  p.GetBase().GetRef(),
		BaseRepo: p.GetBase().GetRepo().GetFullName(),
		ClosedAt: p.GetClosedAt().Time,
	}
	for _, l := range p.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

// PullRequest fetches PR number.
func (c *Client) PullRequest(ctx context.Context, owner, repo string, number int) (*PR, error) {
	p, resp, err := c.gh.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return nil, c.fail(fmt.Sprintf("get pull request #%d", number), permPullsRead, resp, err)
	}
	return toPR(p), nil
}

// PRsForBranch lists the PRs whose head is headOwner:branch, newest first.
// state is "open", "closed" or "all".
func (c *Client) PRsForBranch(ctx context.Context, owner, repo, headOwner, branch, state string) ([]*PR, error) {
	switch state {
	case "open", "closed", "all":
	default:
		return nil, fmt.Errorf("ghapi: list pull requests: bad state %q", state)
	}
	if headOwner == "" || branch == "" {
		return nil, errors.New("ghapi: list pull requests: empty head owner or branch")
	}
	ps, resp, err := paginate(func(o github.ListOptions) ([]*github.PullRequest, *github.Response, error) {
		return c.gh.PullRequests.List(ctx, owner, repo, &github.PullRequestListOptions{
			State: state, Head: headOwner + ":" + branch, Sort: "created", Direction: "desc", ListOptions: o,
		})
	})
	if err != nil {
		return nil, c.fail(fmt.Sprintf("list %s pull requests for %s:%s", state, headOwner, branch), permPullsRead, resp, err)
	}
	out := make([]*PR, 0, len(ps))
	for _, p := range ps {
		out = append(out, toPR(p))
	}
	return out, nil
}

// FindOpenPR returns the open PR from headOwner:branch, or nil when none.
func (c *Client) FindOpenPR(ctx context.Context, owner, repo, headOwner, branch string) (*PR, error) {
	prs, err := c.PRsForBranch(ctx, owner, repo, headOwner, branch, "open")
	if err != nil || len(prs) == 0 {
		return nil, err
	}
	return prs[0], nil
}

// FindClosedPR returns the most recent PR from headOwner:branch that was
// closed without being merged (a maintainer's "no"), or nil when none. Its
// HeadSHA says which attempt was refused.
func (c *Client) FindClosedPR(ctx context.Context, owner, repo, headOwner, branch string) (*PR, error) {
	prs, err := c.PRsForBranch(ctx, owner, repo, headOwner, branch, "closed")
	if err != nil {
		return nil, err
	}
	for _, p := range prs {
		if !p.Merged {
			return p, nil
		}
	}
	return nil, nil
}

// NewPR describes a pull request to open. Head is a branch of the base
// repository (or "owner:branch" for a fork).
type NewPR struct {
	Title string
	Body  string
	Head  string
	Base  string
	Draft bool
}

// CreatePR opens a pull request. GitHub refuses (ErrUnprocessable) when one
// is already open for the same head and base.
func (c *Client) CreatePR(ctx context.Context, owner, repo string, np NewPR) (*PR, error) {
	if np.Title == "" || np.Head == "" || np.Base == "" {
		return nil, errors.New("ghapi: create pull request: title, head and base are required")
	}
	p, resp, err := c.gh.PullRequests.Create(ctx, owner, repo, &github.NewPullRequest{
		Title:               github.String(np.Title),
		Body:                github.String(np.Body),
		Head:                github.String(np.Head),
		Base:                github.String(np.Base),
		Draft:               github.Bool(np.Draft),
		MaintainerCanModify: github.Bool(true),
	})
	if err != nil {
		return nil, c.fail(fmt.Sprintf("create pull request %s -> %s", np.Head, np.Base), permPullsWrite, resp, err)
	}
	return toPR(p), nil
}

// PRUpdate lists the fields UpdatePR changes; nil fields are left alone.
type PRUpdate struct {
	Title *string
	Body  *string
}

// UpdatePR edits the title and/or body of PR number.
func (c *Client) UpdatePR(ctx context.Context, owner, repo string, number int, u PRUpdate) (*PR, error) {
	if u.Title == nil && u.Body == nil {
		return nil, errors.New("ghapi: update pull request: nothing to change")
	}
	p, resp, err := c.gh.PullRequests.Edit(ctx, owner, repo, number, &github.PullRequest{Title: u.Title, Body: u.Body})
	if err != nil {
		return nil, c.fail(fmt.Sprintf("update pull request #%d", number), permPullsWrite, resp, err)
	}
	return toPR(p), nil
}

// RequestReviewers asks users and teams (slugs) to review PR number.
func (c *Client) RequestReviewers(ctx context.Context, owner, repo string, number int, users, teams []string) error {
	if len(users) == 0 && len(teams) == 0 {
		return nil
	}
	_, resp, err := c.gh.PullRequests.RequestReviewers(ctx, owner, repo, number,
		github.ReviewersRequest{Reviewers: users, TeamReviewers: teams})
	return c.fail(fmt.Sprintf("request reviewers on #%d", number), permPullsWrite, resp, err)
}
