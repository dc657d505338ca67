package flakyjob

import (
	"context"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/redact"
)

// secrets is what the flaky mode must never publish: the secret values of
// the job's environment and the credentials the checkout's git config
// persists (test output quoted in an issue could hold one where the
// sandbox could not hide it).
func secrets(ctx context.Context, job Job) redact.Func {
	values := proc.SecretValues(job.Env, job.SecretNames)
	creds, _ := redact.FromGitConfig(ctx, job.Workdir)
	for _, c := range creds {
		values = append(values, c.Values...)
	}
	return redact.New(values)
}

// redactingGitHub redacts every title, body and comment the flaky mode
// writes to GitHub, whichever step composed it (issues, their comments,
// draft and quarantine PRs, the tracking comments). File contents it
// commits are not text to redact: a fix's change is checked for secrets
// by the pipeline before it exists.
type redactingGitHub struct {
	GitHub
	rd redact.Func
}

func (g redactingGitHub) CreateIssue(ctx context.Context, owner, repo string, n ghapi.NewIssue) (*ghapi.Issue, error) {
	n.Title, n.Body = g.rd(n.Title), g.rd(n.Body)
	return g.GitHub.CreateIssue(ctx, owner, repo, n)
}

func (g redactingGitHub) CreateComment(ctx context.Context, owner, repo string, number int, body string) (*ghapi.Comment, error) {
	return g.GitHub.CreateComment(ctx, owner, repo, number, g.rd(body))
}

func (g redactingGitHub) UpdateComment(ctx context.Context, owner, repo string, id int64, body string) (*ghapi.Comment, error) {
	return g.GitHub.UpdateComment(ctx, owner, repo, id, g.rd(body))
}

func (g redactingGitHub) CreatePR(ctx context.Context, owner, repo string, np ghapi.NewPR) (*ghapi.PR, error) {
	np.Title, np.Body = g.rd(np.Title), g.rd(np.Body)
	return g.GitHub.CreatePR(ctx, owner, repo, np)
}

func (g redactingGitHub) UpdatePR(ctx context.Context, owner, repo string, number int, u ghapi.PRUpdate) (*ghapi.PR, error) {
	if u.Title != nil {
		t := g.rd(*u.Title)
		u.Title = &t
	}
	if u.Body != nil {
		b := g.rd(*u.Body)
		u.Body = &b
	}
	return g.GitHub.UpdatePR(ctx, owner, repo, number, u)
}
