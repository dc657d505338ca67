package ghapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// logDownload is the body of one job log fetched from the storage host with
// the retry policy of the API calls: each request (the first, a retry, or a
// resumption after the body broke off) is one attempt of the same bounded
// budget. The token is never sent there; the logs client has none.
type logDownload struct {
	c     *Client
	ctx   context.Context
	url   string
	op    string
	jobID int64

	body   io.ReadCloser
	tries  int   // requests made
	read   int64 // bytes handed to the caller
	size   int64 // whole log's length, -1 while unknown
	broken error // why the last body broke off, until reopened
	breaks int   // how many bodies broke off
	closed bool
}

// open requests the log from d.read on, retrying transient failures.
func (d *logDownload) open() error {
	p := d.c.retry
	counts := map[int]int{}
	for {
		if d.broken != nil {
			if err := d.wait(p.backoff(d.tries)); err != nil {
				return err
			}
			d.broken = nil
		}
		d.tries++
		resp, err := d.request()
		if err == nil && (resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent) {
			err := d.accept(resp)
			if err == nil {
				return nil
			}
			_ = resp.Body.Close()
			var ae *APIError
			if errors.As(err, &ae) || d.ctx.Err() != nil || d.tries >= p.MaxAttempts {
				return d.failed(err)
			}
			d.broken, d.breaks = err, d.breaks+1 // cut while skipping: as a break
			continue
		}
		if err != nil {
			if d.ctx.Err() != nil || d.tries >= p.MaxAttempts {
				return d.failed(err)
			}
			if werr := d.wait(p.backoff(d.tries)); werr != nil {
				return werr
			}
			continue
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, peekLimit))
		_ = resp.Body.Close()
		code := resp.StatusCode
		counts[code]++
		wait, retry := time.Duration(0), false
		switch code {
		case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			retry = true
			var ok bool
			if wait, ok = retryAfter(resp, d.c.clock.Now()); !ok {
				wait = p.backoff(d.tries)
			}
		}
		if !retry || d.tries >= p.MaxAttempts || wait > p.MaxWait || pastDeadline(d.ctx, d.c.clock.Now().Add(wait)) {
			return d.refused(code, counts[code], retry)
		}
		if err := d.wait(wait); err != nil {
			return err
		}
	}
}

// request makes one GET, asking for the rest of the log after a break.
func (d *logDownload) request() (*http.Response, error) {
	req, err := http.NewRequestWithContext(d.ctx, http.MethodGet, d.url, nil)
	if err != nil {
		return nil, &APIError{Op: d.op, Message: "bad log URL"}
	}
	req.Header.Set("User-Agent", d.c.ua)
	if d.read > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", d.read))
	}
	resp, err := d.c.logs.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop the signed URL from the message
		}
		return nil, err
	}
	return resp, nil
}

// accept takes a 200 or 206 as the body to read from d.read on. An
// *APIError means the answer cannot be resumed from (never retried).
func (d *logDownload) accept(resp *http.Response) error {
	changed := &APIError{Op: d.op, Message: "the log changed between two attempts to download it"}
	if resp.StatusCode == http.StatusPartialContent {
		start, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || d.read == 0 || start != d.read {
			return &APIError{Op: d.op, StatusCode: resp.StatusCode, Message: "the log host answered a range that was not asked for"}
		}
		if total >= 0 && d.size >= 0 && total != d.size {
			return changed
		}
		if total >= 0 {
			d.size = total
		}
		d.body = resp.Body
		return nil
	}
	if d.read > 0 {
		// The host ignored the range: skip what the caller already has.
		if resp.ContentLength >= 0 && d.size >= 0 && resp.ContentLength != d.size {
			return changed
		}
		if _, err := io.CopyN(io.Discard, resp.Body, d.read); err != nil {
			return err
		}
	}
	if resp.ContentLength >= 0 {
		d.size = resp.ContentLength
	}
	d.body = resp.Body
	return nil
}

// Read reads the log, resuming once per attempt left when the body breaks
// off: a dropped connection, or fewer bytes than the announced length.
func (d *logDownload) Read(p []byte) (int, error) {
	if d.closed {
		return 0, errors.New("ghapi: read of a closed log")
	}
	for {
		if d.body == nil {
			if err := d.open(); err != nil {
				return 0, err
			}
		}
		n, err := d.body.Read(p)
		d.read += int64(n)
		if err == nil {
			return n, nil
		}
		if err == io.EOF && (d.size < 0 || d.read >= d.size) {
			return n, io.EOF
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		_ = d.body.Close()
		d.body = nil
		if d.ctx.Err() != nil || d.tries >= d.c.retry.MaxAttempts {
			return n, d.failed(err)
		}
		d.broken, d.breaks = err, d.breaks+1
		if n > 0 {
			return n, nil
		}
	}
}

// Close releases the body in hand.
func (d *logDownload) Close() error {
	d.closed = true
	if d.body == nil {
		return nil
	}
	err := d.body.Close()
	d.body = nil
	return err
}

func (d *logDownload) wait(dur time.Duration) error {
	if err := d.c.clock.Sleep(d.ctx, dur); err != nil {
		return &APIError{Op: d.op, Message: "stopped waiting to retry: " + err.Error(), err: err}
	}
	return nil
}

// failed is the error for a transport failure (or a body broken off) on the
// last attempt allowed, or with the context done.
func (d *logDownload) failed(err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		return err
	}
	msg := d.c.scrub(err.Error())
	switch {
	case d.ctx.Err() != nil:
	case d.read > 0 || d.breaks > 0:
		got := fmt.Sprintf("%d bytes", d.read)
		if d.size >= 0 {
			got = fmt.Sprintf("%d of %d bytes", d.read, d.size)
		}
		msg = fmt.Sprintf("the log storage host broke off the download of job %d's log after %s, %d attempts in all: %s",
			d.jobID, got, d.tries, msg)
	default:
		msg = fmt.Sprintf("the log storage host could not be reached for job %d after %d attempts: %s", d.jobID, d.tries, msg)
	}
	return &APIError{Op: d.op, Message: msg, err: d.c.scrubErr(err)}
}

// refused is the error for an answer that is not the log.
func (d *logDownload) refused(code, times int, transient bool) error {
	e := &APIError{Op: d.op, StatusCode: code}
	switch {
	case code == http.StatusNotFound || code == http.StatusGone:
		e.Kind, e.Message = ErrGone, "the log is no longer available"
	case transient:
		e.Message = fmt.Sprintf("the log storage host answered %d %s %s for job %d (%s in all, retried with backoff, never with the token): it refused the download",
			code, http.StatusText(code), plural(times, "time"), d.jobID, plural(d.tries, "attempt"))
	default:
		e.Message = "the log host refused the download"
	}
	return e
}

// contentRange parses "bytes START-END/TOTAL" (TOTAL may be "*": -1).
func contentRange(v string) (start, total int64, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !ok {
		return 0, 0, false
	}
	span, size, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, false
	}
	first, _, ok := strings.Cut(span, "-")
	if !ok {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	total = -1
	if size != "*" {
		if total, err = strconv.ParseInt(size, 10, 64); err != nil || total < 0 {
			return 0, 0, false
		}
	}
	return start, total, true
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
