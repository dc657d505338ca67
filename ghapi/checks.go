package ghapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"
)

const permChecksRead = "checks: read"

// Annotation is a check-run annotation: where a tool (or `::error file=...`)
// pointed at a line.
type Annotation struct {
	Path        string
	StartLine   int
	EndLine     int
	StartColumn int
	// Level is notice, warning or failure.
	Level   string
	Title   string
	Message string
}

// Annotations lists the annotations of a check run (a job's CheckRunID).
func (c *Client) Annotations(ctx context.Context, owner, repo string, checkRunID int64) ([]Annotation, error) {
	as, resp, err := paginate(func(o github.ListOptions) ([]*github.CheckRunAnnotation, *github.Response, error) {
		return c.gh.Checks.ListCheckRunAnnotations(ctx, owner, repo, checkRunID, &o)
	})
	if err != nil {
		return nil, c.fail(fmt.Sprintf("list annotations of check run %d", checkRunID), permChecksRead, resp, err)
	}
	out := make([]Annotation, 0, len(as))
	for _, a := range as {
		out = append(out, Annotation{
			Path:        a.GetPath(),
			StartLine:   a.GetStartLine(),
			EndLine:     a.GetEndLine(),
			StartColumn: a.GetStartColumn(),
			Level:       a.GetAnnotationLevel(),
			Title:       a.GetTitle(),
			Message:     a.GetMessage(),
		})
	}
	return out, nil
}
