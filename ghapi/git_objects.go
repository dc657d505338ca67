package ghapi

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/google/go-github/v62/github"
)

// CommitInfo is the part of a git commit mini-agent reads back.
type CommitInfo struct {
	SHA     string
	Message string
	Tree    string
	Parents []string
	// Verified: GitHub verified the commit's signature (true for commits
	// GitHub made through the Git Data API for an app or GITHUB_TOKEN).
	Verified bool
}

// Commit reads commit sha.
func (c *Client) Commit(ctx context.Context, owner, repo, sha string) (*CommitInfo, error) {
	if !IsSHA(sha) {
		return nil, fmt.Errorf("ghapi: get commit: invalid SHA %q", sha)
	}
	gc, resp, err := c.gh.Git.GetCommit(ctx, owner, repo, sha)
	if err != nil {
		return nil, c.fail("get commit "+sha, permContentsRead, resp, err)
	}
	out := &CommitInfo{SHA: gc.GetSHA(), Message: gc.GetMessage(), Tree: gc.GetTree().GetSHA(),
		Verified: gc.GetVerification().GetVerified()}
	for _, p := range gc.Parents {
		out.Parents = append(out.Parents, p.GetSHA())
	}
	return out, nil
}

// CreateBlob stores content as a git blob and returns its id. Blobs are
// content-addressed: storing the same content twice is harmless.
func (c *Client) CreateBlob(ctx context.Context, owner, repo string, content []byte) (string, error) {
	if len(content) > MaxBlobBytes {
		return "", fmt.Errorf("ghapi: create blob: %d bytes, more than %d", len(content), MaxBlobBytes)
	}
	b, resp, err := c.gh.Git.CreateBlob(ctx, owner, repo, &github.Blob{
		Content: github.String(base64.StdEncoding.EncodeToString(content)), Encoding: github.String("base64"),
	})
	if err != nil {
		return "", c.fail("create blob", permContentsWrite, resp, err)
	}
	return b.GetSHA(), nil
}

// Blob reads blob sha's content, at most MaxBlobBytes.
func (c *Client) Blob(ctx context.Context, owner, repo, sha string) ([]byte, error) {
	if !IsSHA(sha) {
		return nil, fmt.Errorf("ghapi: get blob: invalid SHA %q", sha)
	}
	b, resp, err := c.gh.Git.GetBlob(ctx, owner, repo, sha)
	if err != nil {
		return nil, c.fail("get blob "+sha, permContentsRead, resp, err)
	}
	if b.GetSize() > MaxBlobBytes {
		return nil, &APIError{Op: "get blob " + sha, Message: fmt.Sprintf("%d bytes, more than %d", b.GetSize(), MaxBlobBytes)}
	}
	switch b.GetEncoding() {
	case "base64":
		data, err := base64.StdEncoding.DecodeString(b.GetContent())
		if err != nil {
			// The API wraps base64 in lines.
			data, err = base64.StdEncoding.DecodeString(removeNewlines(b.GetContent()))
		}
		if err != nil {
			return nil, &APIError{Op: "get blob " + sha, Message: "content is not valid base64", err: err}
		}
		return data, nil
	case "utf-8", "":
		return []byte(b.GetContent()), nil
	}
	return nil, &APIError{Op: "get blob " + sha, Message: fmt.Sprintf("unknown encoding %q", b.GetEncoding())}
}

func removeNewlines(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\n' && s[i] != '\r' {
			out = append(out, s[i])
		}
	}
	return string(out)
}
