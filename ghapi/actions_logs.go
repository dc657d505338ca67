package ghapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
)

// JobLog opens the plain-text log of a job. GitHub answers the API call with
// a redirect to a short-lived signed URL on another host; that URL is fetched
// with a separate client that never sends the GitHub token. The caller must
// close the returned body and should stream it (logs can be large).
//
// Expired or deleted logs give ErrGone; a token without `actions: read`
// gives ErrForbidden. The storage host's transient failures (5xx, 429, a
// dropped connection, a body cut short) are retried as the API's are, a cut
// body resuming where it broke; what the host still refuses after the
// allowed attempts is an *APIError naming it.
func (c *Client) JobLog(ctx context.Context, owner, repo string, jobID int64) (io.ReadCloser, error) {
	op := fmt.Sprintf("get log of job %d", jobID)
	loc, resp, err := c.gh.Actions.GetWorkflowJobLogs(ctx, owner, repo, jobID, 1)
	if err != nil {
		err = c.fail(op, permActionsRead, resp, err)
		var ae *APIError
		if errors.As(err, &ae) && ae.Kind == ErrGone && ae.Message == "" {
			ae.Message = "the job's logs have expired or were deleted (GitHub keeps logs 90 days by default, less if the repository says so)"
		}
		return nil, err
	}
	if loc == nil || (loc.Scheme != "https" && loc.Scheme != "http") || loc.Host == "" {
		return nil, &APIError{Op: op, Message: "GitHub redirected to an invalid log URL"}
	}
	return c.downloadLog(ctx, jobID, loc)
}

// downloadLog fetches the signed URL (see logDownload). Errors name the
// host and path only: the query string is a credential for the blob.
func (c *Client) downloadLog(ctx context.Context, jobID int64, loc *url.URL) (io.ReadCloser, error) {
	d := &logDownload{c: c, ctx: ctx, url: loc.String(), jobID: jobID, size: -1,
		op: fmt.Sprintf("download log of job %d from %s", jobID, loc.Host)}
	if err := d.open(); err != nil {
		return nil, err
	}
	return d, nil
}
