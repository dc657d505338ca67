// Package ghapi is mini-agent's GitHub REST layer: a thin, typed wrapper over
// go-github that owns authentication, retries and write spacing, classifies
// API failures into a few errors callers branch on, and never lets the token
// reach a host other than the API (job logs are fetched without it). It knows
// nothing about models, tools or policy.
package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"golang.org/x/oauth2"
)

// Limits and defaults.
const (
	// DefaultBaseURL is used when Options.BaseURL is empty (GITHUB_API_URL on github.com).
	DefaultBaseURL = "https://api.github.com/"
	// DefaultUserAgent identifies mini-agent to GitHub.
	DefaultUserAgent = "mini-agent"
	// DefaultWriteInterval spaces POST/PATCH/PUT/DELETE requests, as GitHub
	// asks integrations to do to avoid secondary rate limits.
	DefaultWriteInterval = time.Second
	// responseHeaderTimeout bounds a stalled server when the caller supplies no
	// transport; the whole call is further bounded by ctx.
	responseHeaderTimeout = 60 * time.Second
	// perPage is the page size for every list call.
	perPage = 100
	// maxPages bounds every paginated listing (maxPages*perPage items).
	maxPages = 30
	// maxLogRedirects bounds redirects followed by the log download client.
	maxLogRedirects = 5
)

// Options configure New. Only Token is required.
type Options struct {
	// Token is the GitHub token (GITHUB_TOKEN, an App token or a PAT). It is
	// sent only to the API host and never appears in error messages.
	Token string
	// BaseURL is the REST API root (GITHUB_API_URL), e.g.
	// https://ghe.example.com/api/v3 for GHES or an httptest server in tests.
	BaseURL string
	// HTTPClient supplies the base transport (and timeout) for API calls; its
	// Transport must not add credentials itself. Nil means a default transport.
	// Its Timeout, if any, covers a whole call including retry waits.
	HTTPClient *http.Client
	// LogHTTPClient downloads job logs from the short-lived URL GitHub
	// redirects to. It must not add credentials. Nil means a plain client over
	// HTTPClient's transport.
	LogHTTPClient *http.Client
	// UserAgent defaults to DefaultUserAgent.
	UserAgent string
	// Retry bounds retries of rate-limited and failed requests, and of the
	// job log download from the storage host.
	Retry RetryPolicy
	// WriteInterval is the minimum gap between write requests: 0 means
	// DefaultWriteInterval, a negative value disables spacing (tests).
	WriteInterval time.Duration
	// Clock drives retry waits and write spacing; nil means the real clock.
	Clock Clock
}

// Client is a GitHub API client for one token. It is safe for concurrent use.
type Client struct {
	gh    *github.Client
	logs  *http.Client
	token string
	ua    string
	clock Clock
	retry RetryPolicy // for the log download, which bypasses the API transport
}

// New builds a Client. It performs no network I/O; ctx is accepted for
// symmetry with the other constructors and future token exchanges.
func New(ctx context.Context, opts Options) (*Client, error) {
	_ = ctx
	if strings.TrimSpace(opts.Token) == "" {
		return nil, errors.New("ghapi: empty token")
	}
	base, err := parseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	ua := opts.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}

	var baseRT http.RoundTripper
	var timeout time.Duration
	if opts.HTTPClient != nil {
		baseRT, timeout = opts.HTTPClient.Transport, opts.HTTPClient.Timeout
	}
	if baseRT == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = responseHeaderTimeout
		baseRT = t
	}

	interval := opts.WriteInterval
	if interval == 0 {
		interval = DefaultWriteInterval
	}
	clock := opts.Clock
	if clock == nil {
		clock = realClock{}
	}
	rt := newRetryTransport(baseRT, opts.Retry, interval, clock)
	authed := &oauth2.Transport{
		Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: opts.Token, TokenType: "Bearer"}),
		Base:   rt,
	}
	apiHost := base.Host
	hc := &http.Client{
		Transport: &hostGuard{host: apiHost, next: authed},
		Timeout:   timeout,
		// The auth transport re-adds the token on every hop, so a redirect to
		// another host would leak it: refuse and hand the redirect back.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != apiHost || len(via) >= 10 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	gh := github.NewClient(hc)
	gh.BaseURL = base
	gh.UserAgent = ua

	logs := opts.LogHTTPClient
	if logs == nil {
		logs = &http.Client{Transport: baseRT, Timeout: timeout}
	}
	logs = noCredentialClient(logs)

	return &Client{gh: gh, logs: logs, token: opts.Token, ua: ua, clock: clock, retry: opts.Retry.withDefaults()}, nil
}

// hostGuard refuses any request the auth transport would send to a host other
// than the API's, whatever produced it (a redirect, an absolute URL in a
// response, a go-github code path that follows Location itself).
type hostGuard struct {
	host string
	next http.RoundTripper
}

func (g *hostGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != g.host {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("refusing to send the GitHub token to %s (API host is %s)", req.URL.Host, g.host)
	}
	return g.next.RoundTrip(req)
}

// GitHub returns the underlying go-github client for calls ghapi does not wrap.
// Its errors are not classified.
func (c *Client) GitHub() *github.Client { return c.gh }

func parseBaseURL(raw string) (*url.URL, error) {
	if raw == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("ghapi: invalid base URL %q: want http(s)://host[/path]", redactURL(raw))
	}
	if u.User != nil {
		return nil, errors.New("ghapi: base URL must not contain credentials")
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// redactURL keeps a bad URL printable without echoing any userinfo in it.
func redactURL(raw string) string {
	if i := strings.Index(raw, "@"); i >= 0 {
		if j := strings.Index(raw, "://"); j >= 0 && j < i {
			return raw[:j+3] + "***" + raw[i:]
		}
		return "***" + raw[i:]
	}
	return raw
}

// noCredentialClient returns a copy of hc whose redirects never carry an
// Authorization or Cookie header, whatever the hop.
func noCredentialClient(hc *http.Client) *http.Client {
	c := *hc
	c.Jar = nil
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxLogRedirects {
			return errors.New("too many redirects")
		}
		req.Header.Del("Authorization")
		req.Header.Del("Cookie")
		return nil
	}
	return &c
}

// paginate collects up to maxPages pages from a go-github list call.
func paginate[T any](fetch func(opts github.ListOptions) ([]T, *github.Response, error)) ([]T, *github.Response, error) {
	var all []T
	opts := github.ListOptions{PerPage: perPage}
	for range maxPages {
		items, resp, err := fetch(opts)
		if err != nil {
			return nil, resp, err
		}
		all = append(all, items...)
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return all, nil, nil
}
