package ghapi

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

const permActionsWrite = "actions: write"

// Workflow is a repository's workflow as the API describes it.
type Workflow struct {
	ID   int64
	Name string
	// Path is the workflow file, e.g. ".github/workflows/ci.yml".
	Path string
	// State is "active" or one of the disabled states.
	State string
}

// BranchRun is a workflow run listed for a branch.
type BranchRun struct {
	ID         int64
	Event      string
	Status     string // queued, in_progress, completed, ...
	Conclusion string // set once completed
	HeadSHA    string
	HeadBranch string
	HTMLURL    string
	CreatedAt  time.Time
}

// workflowKey checks a workflow reference: its numeric ID or its file's
// base name (ci.yml), the two forms the API's {workflow_id} accepts.
func workflowKey(workflow string) (id int64, file string, err error) {
	if n, perr := strconv.ParseInt(workflow, 10, 64); perr == nil {
		if n <= 0 {
			return 0, "", fmt.Errorf("ghapi: workflow ID %d is not positive", n)
		}
		return n, "", nil
	}
	ext := path.Ext(workflow)
	if workflow == "" || strings.ContainsAny(workflow, "/\\?#%") || (ext != ".yml" && ext != ".yaml") {
		return 0, "", fmt.Errorf("ghapi: %q is neither a workflow ID nor a workflow file name", workflow)
	}
	return 0, workflow, nil
}

// GetWorkflow fetches a workflow by ID or file name.
func (c *Client) GetWorkflow(ctx context.Context, owner, repo, workflow string) (*Workflow, error) {
	id, file, err := workflowKey(workflow)
	if err != nil {
		return nil, err
	}
	var w *github.Workflow
	var resp *github.Response
	if id != 0 {
		w, resp, err = c.gh.Actions.GetWorkflowByID(ctx, owner, repo, id)
	} else {
		w, resp, err = c.gh.Actions.GetWorkflowByFileName(ctx, owner, repo, file)
	}
	if err != nil {
		return nil, c.fail("get workflow "+workflow, permActionsRead, resp, err)
	}
	return &Workflow{ID: w.GetID(), Name: w.GetName(), Path: w.GetPath(), State: w.GetState()}, nil
}

// DispatchWorkflow starts workflow (ID or file name) on ref with its
// inputs' defaults. GitHub answers 204 without the run it created (find it
// with BranchRuns); 403 means the token lacks `actions: write`, 422 that the
// workflow has no workflow_dispatch trigger on ref (or needs inputs).
func (c *Client) DispatchWorkflow(ctx context.Context, owner, repo, workflow, ref string) error {
	id, file, err := workflowKey(workflow)
	if err != nil {
		return err
	}
	if ref == "" {
		return errors.New("ghapi: dispatch workflow: ref is required")
	}
	ev := github.CreateWorkflowDispatchEventRequest{Ref: ref}
	var resp *github.Response
	if id != 0 {
		resp, err = c.gh.Actions.CreateWorkflowDispatchEventByID(ctx, owner, repo, id, ev)
	} else {
		resp, err = c.gh.Actions.CreateWorkflowDispatchEventByFileName(ctx, owner, repo, file, ev)
	}
	return c.fail(fmt.Sprintf("dispatch workflow %s on %s", workflow, ref), permActionsWrite, resp, err)
}

// BranchRuns lists the newest runs (one page, at most 30) of workflow on
// branch started by event ("" for any), newest first; since, when not zero,
// keeps the runs created at or after it (the API filters to the second).
func (c *Client) BranchRuns(ctx context.Context, owner, repo, workflow, branch, event string, since time.Time) ([]BranchRun, error) {
	id, file, err := workflowKey(workflow)
	if err != nil {
		return nil, err
	}
	opts := &github.ListWorkflowRunsOptions{Branch: branch, Event: event, ListOptions: github.ListOptions{PerPage: 30}}
	if !since.IsZero() {
		opts.Created = ">=" + since.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	var runs *github.WorkflowRuns
	var resp *github.Response
	if id != 0 {
		runs, resp, err = c.gh.Actions.ListWorkflowRunsByID(ctx, owner, repo, id, opts)
	} else {
		runs, resp, err = c.gh.Actions.ListWorkflowRunsByFileName(ctx, owner, repo, file, opts)
	}
	if err != nil {
		return nil, c.fail(fmt.Sprintf("list runs of workflow %s on %s", workflow, branch), permActionsRead, resp, err)
	}
	var out []BranchRun
	for _, r := range runs.WorkflowRuns {
		out = append(out, BranchRun{ID: r.GetID(), Event: r.GetEvent(), Status: r.GetStatus(), Conclusion: r.GetConclusion(),
			HeadSHA: r.GetHeadSHA(), HeadBranch: r.GetHeadBranch(), HTMLURL: r.GetHTMLURL(), CreatedAt: r.GetCreatedAt().Time})
	}
	return out, nil
}

// OpenPRs lists the newest open pull requests (one page of at most limit,
// capped at 100), newest first.
func (c *Client) OpenPRs(ctx context.Context, owner, repo string, limit int) ([]*PR, error) {
	limit = min(max(limit, 1), perPage)
	ps, resp, err := c.gh.PullRequests.List(ctx, owner, repo, &github.PullRequestListOptions{State: "open",
		Sort: "created", Direction: "desc", ListOptions: github.ListOptions{PerPage: limit}})
	if err != nil {
		return nil, c.fail("list open pull requests", permPullsRead, resp, err)
	}
	out := make([]*PR, 0, len(ps))
	for _, p := range ps {
		out = append(out, toPR(p))
	}
	return out, nil
}
