// Package shaproxy is a test helper: an HTTP proxy in front of the fake
// GitHub (ghapi/ghtest) that translates commit SHAs between a real git
// checkout and the fake. The fake names commits with its own hashes, a
// workspace with git's; told which pairs are the same commit, the proxy
// rewrites them both ways (paths, queries, bodies), so code under test sees
// one consistent history, as on GitHub where the checkout and the API share
// SHAs.
//
// Test fake: tests only; product code never imports it.
package shaproxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Proxy forwards to the fake and translates the aliased SHAs.
type Proxy struct {
	// URL is the proxy's API root, for GITHUB_API_URL / ghapi.Options.BaseURL.
	URL string

	mu    sync.Mutex
	pairs [][2]string // local (git), fake
}

// New starts a proxy to target (the fake's URL); it closes at test cleanup.
func New(tb testing.TB, target string) *Proxy {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{}
	rp := &httputil.ReverseProxy{}
	rp.Rewrite = func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.Host = pr.In.Host // pagination links must point back at the proxy
		r := pr.Out
		r.URL.Path = p.toFake(r.URL.Path)
		r.URL.RawPath = ""
		r.URL.RawQuery = p.toFake(r.URL.RawQuery)
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			b = []byte(p.toFake(string(b)))
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
			r.Header.Set("Content-Length", strconv.Itoa(len(b)))
		}
	}
	rp.ModifyResponse = func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body.Close()
		b = []byte(p.toLocal(string(b)))
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	srv := httptest.NewServer(rp)
	tb.Cleanup(srv.Close)
	p.URL = srv.URL + "/"
	return p
}

// Alias declares that git's local SHA and the fake's SHA are one commit.
func (p *Proxy) Alias(local, fake string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pairs = append(p.pairs, [2]string{local, fake})
}

func (p *Proxy) toFake(s string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.pairs {
		s = strings.ReplaceAll(s, pr[0], pr[1])
	}
	return s
}

func (p *Proxy) toLocal(s string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.pairs {
		s = strings.ReplaceAll(s, pr[1], pr[0])
	}
	return s
}
