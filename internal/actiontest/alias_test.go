package actiontest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
)

// aliasGitHub fronts the fake GitHub so that its head commit answers to the
// SHA of the runner's checkout. ghtest names commits with its own hashes, but
// the harness records the checkout's `git rev-parse HEAD` in the bundle and
// publishing refuses a bundle made at another commit than the failure's; on
// GitHub both are the same commit. The alias rewrites that one SHA (and the
// fake's own address) in paths, queries, bodies and Link headers, both ways;
// everything else passes through unchanged.
func aliasGitHub(t *testing.T, upstream, localSHA, fakeSHA string) string {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	var self string
	toFake := strings.NewReplacer(localSHA, fakeSHA)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.URL.Path = toFake.Replace(r.Out.URL.Path)
			r.Out.URL.RawPath = ""
			r.Out.URL.RawQuery = toFake.Replace(r.Out.URL.RawQuery)
			if r.In.Body != nil {
				body, _ := io.ReadAll(r.In.Body)
				body = []byte(toFake.Replace(string(body)))
				r.Out.Body = io.NopCloser(bytes.NewReader(body))
				r.Out.ContentLength = int64(len(body))
				r.Out.Header.Set("Content-Length", strconv.Itoa(len(body)))
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			toLocal := strings.NewReplacer(fakeSHA, localSHA, strings.TrimSuffix(upstream, "/"), self)
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			resp.Body.Close()
			body = []byte(toLocal.Replace(string(body)))
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
			for _, h := range []string{"Link", "Location"} {
				if v := resp.Header.Get(h); v != "" {
					resp.Header.Set(h, toLocal.Replace(v))
				}
			}
			return nil
		},
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	self = srv.URL
	return srv.URL
}

func TestAliasGitHub(t *testing.T) {
	t.Parallel()
	gh := ghtest.NewServer(t, fakeToken)
	fake := gh.AddRepo(fixtureRepo, "main", map[string]string{"a.txt": "a\n"})
	local := strings.Repeat("ab", 20)
	alias := aliasGitHub(t, gh.URL, local, fake)

	get := func(path string) string {
		req, err := http.NewRequest(http.MethodGet, alias+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+fakeToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	// The checkout's SHA finds the fake's commit, and comes back as itself.
	commit := get("/repos/" + fixtureRepo + "/git/commits/" + local)
	if !strings.Contains(commit, `"sha":"`+local+`"`) || strings.Contains(commit, fake) {
		t.Errorf("commit through the alias:\n%s", commit)
	}
	// Refs name the checkout's SHA too, and the fake's address is the alias's.
	ref := get("/repos/" + fixtureRepo + "/git/ref/heads/main")
	if !strings.Contains(ref, local) || strings.Contains(ref, strings.TrimSuffix(gh.URL, "/")) {
		t.Errorf("ref through the alias:\n%s", ref)
	}
	if n := gh.Count("GET", "/repos/"+fixtureRepo+"/git/commits/"+fake); n != 1 {
		t.Errorf("the fake saw %d GETs of its own SHA, want 1", n)
	}
}
