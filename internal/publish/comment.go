package publish

import (
	"context"
	"fmt"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/report"
)

// maxDiffInComment bounds the diff shown in a comment.
const maxDiffInComment = 20_000

// CommentAPI is the part of GitHub the tracking comment needs.
type CommentAPI interface {
	CreateComment(ctx context.Context, owner, repo string, number int, body string) (*ghapi.Comment, error)
	UpdateComment(ctx context.Context, owner, repo string, id int64, body string) (*ghapi.Comment, error)
	FindCommentWithMarker(ctx context.Context, owner, repo string, number int, marker string) (*ghapi.Comment, error)
}

// Tracker keeps mini-agent's one tracking comment on a PR: progress while a
// run goes on, then the result. It is found again by TrackingMarker, so
// reruns and later commands edit it instead of adding comments.
type Tracker struct {
	GH          CommentAPI
	Owner, Repo string
	PR          int
	id          int64
}

// Post creates or replaces the tracking comment's body.
func (t *Tracker) Post(ctx context.Context, body string) (*ghapi.Comment, error) {
	if t.PR == 0 {
		return nil, fmt.Errorf("publish: tracking comment: no pull request")
	}
	body = clampComment(TrackingMarker + "\n" + body)
	if t.id == 0 {
		c, err := t.GH.FindCommentWithMarker(ctx, t.Owner, t.Repo, t.PR, TrackingMarker)
		if err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
		// A user's comment that starts with the marker is not ours to edit.
		if c != nil && c.AuthorType == "Bot" {
			t.id = c.ID
		}
	}
	if t.id != 0 {
		c, err := t.GH.UpdateComment(ctx, t.Owner, t.Repo, t.id, body)
		if err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
		return c, nil
	}
	c, err := t.GH.CreateComment(ctx, t.Owner, t.Repo, t.PR, body)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	t.id = c.ID
	return c, nil
}

// withDiff appends the diff in a collapsed block, bounded so the whole
// comment stays within GitHub's limit.
func withDiff(body, diff, title string) string {
	if strings.TrimSpace(diff) == "" {
		return body
	}
	room := min(maxDiffInComment, ghapi.MaxCommentBytes-len(TrackingMarker)-len(body)-400)
	if room < 1000 {
		return body + "\n_The diff does not fit in this comment; it is in the bundle artifact._\n"
	}
	lines := strings.Count(diff, "\n")
	note := ""
	if len(diff) > room {
		diff = cutUTF8(diff, room)
		note = fmt.Sprintf("\n_Diff cut at %d bytes; the whole diff is in the bundle artifact._\n", room)
	}
	fence := report.Fence(diff, 3)
	return fmt.Sprintf("%s\n<details><summary>%s (%d lines)</summary>\n\n%sdiff\n%s\n%s\n%s</details>\n",
		body, title, lines, fence, strings.TrimRight(diff, "\n"), fence, note)
}

func clampComment(s string) string {
	if len(s) <= ghapi.MaxCommentBytes {
		return s
	}
	tail := "\n\n_…cut to fit GitHub's comment limit; the full report is in the job summary._\n"
	return cutUTF8(s, ghapi.MaxCommentBytes-len(tail)) + tail
}

func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
