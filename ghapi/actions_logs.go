package ghapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// JobLog opens the plain-text log of a job. GitHub answers the API call with
// a redirect to a short-lived signed URL on another host; that URL is fetched
// with a separate client that never sends the GitHub token. The caller must
// close the returned body and should stream it (logs can be large).
//
// Expired or deleted logs give ErrGone; a token without `actions: read`
// gives ErrForbidden.
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

// downloadLog fetches the signed URL. Errors name the host and path only:
// the query string is a credential for the blob.
func (c *Client) downloadLog(ctx context.Context, jobID int64, loc *url.URL) (io.ReadCloser, error) {
	op := fmt.Sprintf("download log of job %d from %s", jobID, loc.Host)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return nil, &APIError{Op: op, Message: "bad log URL"}
	}
	req.Header.Set("User-Agent", c.ua)
	resp, err := c.logs.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop the signed URL from the message
		}
		return nil, &APIError{Op: op, Message: c.scrub(err.Error()), err: c.scrubErr(err)}
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, peekLimit))
	_ = resp.Body.Close()
	e := &APIError{Op: op, StatusCode: resp.StatusCode}
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusGone:
		e.Kind, e.Message = ErrGone, "the log is no longer available"
	default:
		e.Message = "the log host refused the download"
	}
	return nil, e
}
