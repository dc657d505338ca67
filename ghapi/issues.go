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
	permIssuesRead  = "issues: read"
	permIssuesWrite = "issues: write"
	// maxIssueTitle is GitHub's limit on an issue title.
	maxIssueTitle = 256
)

// Issue is a plain issue (pull requests are left out of every listing here).
type Issue struct {
	Number     int
	Title      string
	Body       string
	State      string // "open" or "closed"
	Labels     []string
	Author     string
	AuthorType string // "User" or "Bot"
	HTMLURL    string
	Comments   int
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Carries reports whether a line of the issue's body is exactly marker (a
// hidden `<!-- ... -->` tag; surrounding blanks ignored). A marker quoted
// ("> <!-- ... -->") or inside other text does not count.
func (is *Issue) Carries(marker string) bool {
	marker = strings.TrimSpace(marker)
	if marker == "" {
		return false
	}
	for line := range strings.SplitSeq(is.Body, "\n") {
		if strings.TrimSpace(line) == marker {
			return true
		}
	}
	return false
}

// IssueFilter narrows ListIssues.
type IssueFilter struct {
	// State is "open", "closed" or "all" (the default).
	State string
	// Labels keeps issues carrying every one of them; empty keeps all.
	Labels []string
	// Since keeps issues updated at or after it; zero keeps all.
	Since time.Time
}

// ListIssues lists the repository's issues (not pull requests) matching f,
// oldest first, through the issues listing (not the search API, whose
// index lags). A listing longer than maxPages pages is an error, never a
// silently partial answer.
func (c *Client) ListIssues(ctx context.Context, owner, repo string, f IssueFilter) ([]Issue, error) {
	state := f.State
	if state == "" {
		state = "all"
	}
	if state != "open" && state != "closed" && state != "all" {
		return nil, fmt.Errorf("ghapi: list issues: invalid state %q", state)
	}
	for _, l := range f.Labels {
		if strings.TrimSpace(l) == "" || strings.Contains(l, ",") {
			return nil, fmt.Errorf("ghapi: list issues: invalid label %q", l)
		}
	}
	var is []*github.Issue
	opts := &github.IssueListByRepoOptions{
		State: state, Labels: f.Labels, Since: f.Since, Sort: "created", Direction: "asc",
		ListOptions: github.ListOptions{PerPage: perPage},
	}
	for page := 0; ; page++ {
		if page == maxPages {
			// A partial listing could hide the issue a marker is looked
			// for, and a duplicate would follow: refuse instead.
			return nil, &APIError{Op: "list issues", Message: fmt.Sprintf("more than %d issues match; narrow the listing with a label", maxPages*perPage)}
		}
		items, resp, err := c.gh.Issues.ListByRepo(ctx, owner, repo, opts)
		if err != nil {
			return nil, c.fail("list issues", permIssuesRead, resp, err)
		}
		is = append(is, items...)
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	var out []Issue
	for _, i := range is {
		if i == nil || i.IsPullRequest() {
			continue
		}
		out = append(out, toIssue(i))
	}
	return out, nil
}

// FindIssueWithMarker returns the oldest issue (open or closed) opened by a
// bot whose body carries marker on a line of its own (see Issue.Carries),
// or nil when none. labels narrow the listing as in IssueFilter. A person's
// issue pasting the marker is never taken for mini-agent's.
func (c *Client) FindIssueWithMarker(ctx context.Context, owner, repo, marker string, labels ...string) (*Issue, error) {
	if strings.TrimSpace(marker) == "" {
		return nil, errors.New("ghapi: find issue: empty marker")
	}
	is, err := c.ListIssues(ctx, owner, repo, IssueFilter{Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range is {
		if is[i].AuthorType == "Bot" && is[i].Carries(marker) {
			return &is[i], nil
		}
	}
	return nil, nil
}

// NewIssue is an issue to open.
type NewIssue struct {
	Title  string
	Body   string
	Labels []string
}

// CreateIssue opens an issue. An empty or over-long title or body is
// refused before any request.
func (c *Client) CreateIssue(ctx context.Context, owner, repo string, n NewIssue) (*Issue, error) {
	const op = "create issue"
	switch {
	case strings.TrimSpace(n.Title) == "":
		return nil, fmt.Errorf("ghapi: %s: empty title", op)
	case len([]rune(n.Title)) > maxIssueTitle:
		return nil, fmt.Errorf("ghapi: %s: title longer than %d characters", op, maxIssueTitle)
	}
	if err := checkCommentBody(n.Body); err != nil {
		return nil, fmt.Errorf("ghapi: %s: %w", op, err)
	}
	req := &github.IssueRequest{Title: github.String(n.Title), Body: github.String(n.Body)}
	if len(n.Labels) > 0 {
		labels := append([]string(nil), n.Labels...)
		req.Labels = &labels
	}
	i, resp, err := c.gh.Issues.Create(ctx, owner, repo, req)
	if err != nil {
		return nil, c.fail(op, permIssuesWrite, resp, err)
	}
	is := toIssue(i)
	return &is, nil
}

// ListComments lists the comments on issue or PR number, oldest first.
func (c *Client) ListComments(ctx context.Context, owner, repo string, number int) ([]Comment, error) {
	cs, resp, err := paginate(func(o github.ListOptions) ([]*github.IssueComment, *github.Response, error) {
		return c.gh.Issues.ListComments(ctx, owner, repo, number, &github.IssueListCommentsOptions{
			Sort: github.String("created"), Direction: github.String("asc"), ListOptions: o,
		})
	})
	if err != nil {
		return nil, c.fail(fmt.Sprintf("list comments on #%d", number), permIssuesRead, resp, err)
	}
	out := make([]Comment, 0, len(cs))
	for _, cm := range cs {
		if cm != nil {
			out = append(out, *toComment(cm))
		}
	}
	return out, nil
}

func toIssue(i *github.Issue) Issue {
	is := Issue{
		Number: i.GetNumber(), Title: i.GetTitle(), Body: i.GetBody(), State: i.GetState(),
		Author: i.GetUser().GetLogin(), AuthorType: i.GetUser().GetType(), HTMLURL: i.GetHTMLURL(),
		Comments: i.GetComments(), CreatedAt: i.GetCreatedAt().Time, UpdatedAt: i.GetUpdatedAt().Time,
	}
	for _, l := range i.Labels {
		is.Labels = append(is.Labels, l.GetName())
	}
	return is
}
