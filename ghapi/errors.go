package ghapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// Error classes. Every error returned by a Client method that came from an
// HTTP status wraps exactly one of them; test with errors.Is.
var (
	// ErrNotFound: 404. GitHub also answers 404 when the token cannot see a
	// private resource.
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: 401, the token is invalid or expired.
	ErrUnauthorized = errors.New("bad credentials")
	// ErrForbidden: 403 that is not a rate limit, usually a missing workflow
	// permission; APIError.Permission names the likely one.
	ErrForbidden = errors.New("forbidden")
	// ErrConflict: 409, e.g. an empty repository or a merge conflict.
	ErrConflict = errors.New("conflict")
	// ErrGone: 410, e.g. job logs that have expired.
	ErrGone = errors.New("gone")
	// ErrUnprocessable: 422, GitHub refused the request's content.
	ErrUnprocessable = errors.New("unprocessable")
	// ErrRateLimited: primary or secondary rate limit still in force after the
	// allowed retries; APIError.RetryAt says when to try again, if known.
	ErrRateLimited = errors.New("rate limited")
	// ErrHeadMoved: CommitFiles found the branch head elsewhere than expected
	// (or the ref update was not a fast-forward); nothing was pushed.
	ErrHeadMoved = errors.New("branch head moved")
	// ErrBranchExists: CommitFiles was to create a branch that exists at a
	// commit that is neither the one it made nor marked as the caller's
	// (CommitRequest.AdoptMarker); the branch was left unchanged.
	ErrBranchExists = errors.New("branch already exists")
	// ErrTreeMismatch: CommitFiles built a tree other than
	// CommitRequest.ExpectedTree, so it committed nothing. The error is a
	// *TreeMismatchError, which has both ids.
	ErrTreeMismatch = errors.New("tree differs from the expected one")
)

// TreeMismatchError is CommitFiles' error when the tree GitHub built from
// the base tree and the changes is not CommitRequest.ExpectedTree: what
// would have been published differs from what was validated. Nothing was
// committed and no ref was created or moved. It matches ErrTreeMismatch
// under errors.Is.
type TreeMismatchError struct {
	// Want is CommitRequest.ExpectedTree, Got the id of the tree GitHub built.
	Want, Got string
}

func (e *TreeMismatchError) Error() string {
	return fmt.Sprintf("%s: GitHub built tree %s, expected %s; nothing was committed", ErrTreeMismatch, e.Got, e.Want)
}

// Is makes errors.Is(err, ErrTreeMismatch) hold.
func (e *TreeMismatchError) Is(target error) bool { return target == ErrTreeMismatch }

// APIError is the classified form of a failed GitHub call.
type APIError struct {
	// Op is what ghapi was doing, e.g. "list jobs of run 42".
	Op string
	// Kind is one of the Err* classes, or nil for other statuses (5xx after
	// retries, unexpected codes).
	Kind error
	// StatusCode is the HTTP status, 0 when no response arrived.
	StatusCode int
	// Message is GitHub's message and validation details, token removed.
	Message string
	// Permission is the workflow permission the call probably needs, set for
	// ErrForbidden (and ErrNotFound on private resources), e.g. "actions: read".
	Permission string
	// RetryAt is when a rate limit resets, zero when unknown.
	RetryAt time.Time
	// Refusal says which refusal a maintainer can change this is, "" when
	// none ghapi knows (see Advice).
	Refusal Refusal
	// DocURL is GitHub's documentation_url for the failed call.
	DocURL string
	// Accepted is GitHub's X-Accepted-GitHub-Permissions header: the
	// permissions the endpoint accepts (e.g. "contents=write").
	Accepted string
	// Rules are a ruleset refusal's reasons, as GitHub words them.
	Rules []string

	err error
}

// Error renders "ghapi: OP: CLASS (STATUS): MESSAGE; hint".
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("ghapi: ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	switch {
	case e.Kind != nil:
		b.WriteString(e.Kind.Error())
	case e.StatusCode != 0:
		b.WriteString(http.StatusText(e.StatusCode))
	default:
		b.WriteString("request failed")
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (%d)", e.StatusCode)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	switch {
	case e.Refusal != "" && e.Refusal != RefusalRateLimit:
		b.WriteString("; ")
		b.WriteString(e.Advice())
	case e.Kind == ErrForbidden && e.Permission != "":
		fmt.Fprintf(&b, "; the workflow token probably needs `permissions: %s`", e.Permission)
	case e.Kind == ErrNotFound && e.Permission != "":
		fmt.Fprintf(&b, " (or the token lacks `%s` on a private repository)", e.Permission)
	case e.Kind == ErrRateLimited && !e.RetryAt.IsZero():
		fmt.Fprintf(&b, "; retry after %s", e.RetryAt.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// Is matches the error's class.
func (e *APIError) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Unwrap returns the underlying error (a go-github error, a network error or
// a context error), already stripped of the token.
func (e *APIError) Unwrap() error { return e.err }

// fail classifies err from a go-github call made for op. perm is the
// permission the call needs, used in hints. It returns nil when err is nil.
func (c *Client) fail(op, perm string, resp *github.Response, err error) error {
	if err == nil {
		return nil
	}
	e := &APIError{Op: op, err: c.scrubErr(err)}
	var (
		rle   *github.RateLimitError
		abuse *github.AbuseRateLimitError
		er    *github.ErrorResponse
	)
	switch {
	case errors.As(err, &rle):
		e.Kind, e.Message, e.RetryAt = ErrRateLimited, rle.Message, rle.Rate.Reset.Time
		e.StatusCode = statusOf(rle.Response)
	case errors.As(err, &abuse):
		e.Kind, e.Message = ErrRateLimited, abuse.Message
		e.StatusCode = statusOf(abuse.Response)
		if abuse.RetryAfter != nil {
			e.RetryAt = c.clock.Now().Add(*abuse.RetryAfter)
		}
	case errors.As(err, &er):
		e.StatusCode = statusOf(er.Response)
		e.Message = errorResponseMessage(er)
		e.DocURL = er.DocumentationURL
	case resp != nil && resp.Response != nil && resp.StatusCode >= 300:
		// Calls go-github does not decode (job logs) report only a status.
		e.StatusCode = resp.StatusCode
	}
	if e.Kind == nil {
		e.Kind = kindOf(e.StatusCode, e.Message)
	}
	if e.Kind == ErrForbidden || e.Kind == ErrNotFound {
		e.Permission = perm
	}
	if e.StatusCode == 0 && e.Message == "" {
		e.Message = e.err.Error()
	}
	if resp != nil && resp.Response != nil {
		e.Accepted = resp.Header.Get("X-Accepted-GitHub-Permissions")
	}
	e.Message = c.scrub(e.Message)
	e.classify()
	// GitHub's messages span lines ("Repository rule violations found\n\n
	// ..."): one line for logs and annotations.
	e.Message = strings.Join(strings.Fields(e.Message), " ")
	return e
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

func kindOf(status int, msg string) error {
	switch status {
	case http.StatusUnauthorized:
		return ErrUnauthorized
	case http.StatusForbidden:
		if strings.Contains(strings.ToLower(msg), "rate limit") {
			return ErrRateLimited
		}
		return ErrForbidden
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusConflict:
		return ErrConflict
	case http.StatusGone:
		return ErrGone
	case http.StatusUnprocessableEntity:
		return ErrUnprocessable
	case http.StatusTooManyRequests:
		return ErrRateLimited
	}
	return nil
}

// errorResponseMessage joins GitHub's message with its validation details,
// which is where the useful part of a 422 lives.
func errorResponseMessage(er *github.ErrorResponse) string {
	parts := []string{}
	if er.Message != "" {
		parts = append(parts, er.Message)
	}
	for _, d := range er.Errors {
		switch {
		case d.Message != "":
			parts = append(parts, d.Message)
		case d.Code != "":
			parts = append(parts, strings.TrimSpace(d.Resource+" "+d.Field+" "+d.Code))
		}
	}
	return strings.Join(parts, ": ")
}

// scrub removes the token from s, whatever echoed it.
func (c *Client) scrub(s string) string {
	if c.token == "" {
		return s
	}
	return strings.ReplaceAll(s, c.token, "***")
}

// scrubErr keeps err (for errors.Is/As) unless its text holds the token; then
// it hides err behind a scrubbed message that still answers errors.Is (for
// context errors) but cannot be unwrapped back to the token.
func (c *Client) scrubErr(err error) error {
	if c.token == "" || !strings.Contains(err.Error(), c.token) {
		return err
	}
	return &scrubbedError{msg: c.scrub(err.Error()), err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (s *scrubbedError) Error() string        { return s.msg }
func (s *scrubbedError) Is(target error) bool { return errors.Is(s.err, target) }
