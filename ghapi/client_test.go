package ghapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestNew_options(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    Options
		wantErr string
		wantURL string
	}{
		{name: "defaults", opts: Options{Token: "t"}, wantURL: "https://api.github.com/"},
		{name: "GHES path gets a slash", opts: Options{Token: "t", BaseURL: "https://ghe.example.com/api/v3"}, wantURL: "https://ghe.example.com/api/v3/"},
		{name: "empty token", opts: Options{}, wantErr: "empty token"},
		{name: "blank token", opts: Options{Token: " \n"}, wantErr: "empty token"},
		{name: "no scheme", opts: Options{Token: "t", BaseURL: "api.github.com"}, wantErr: "invalid base URL"},
		{name: "ftp", opts: Options{Token: "t", BaseURL: "ftp://x/"}, wantErr: "invalid base URL"},
		{name: "credentials in URL", opts: Options{Token: "t", BaseURL: "https://user:pass@ghe.example.com/api/v3"}, wantErr: "must not contain credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(t.Context(), tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "pass") {
					t.Errorf("error echoes credentials: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.GitHub().BaseURL.String(); got != tt.wantURL {
				t.Errorf("BaseURL = %q, want %q", got, tt.wantURL)
			}
			if got := c.GitHub().UserAgent; got != DefaultUserAgent {
				t.Errorf("UserAgent = %q", got)
			}
		})
	}
}

func TestErrorsNeverContainToken(t *testing.T) {
	t.Parallel()
	f := setup(t, func(o *Options) { o.UserAgent = "mini-agent-test/1" })
	f.handle("/repos/o/r", func(w http.ResponseWriter, r *http.Request) {
		if ua := r.Header.Get("User-Agent"); ua != "mini-agent-test/1" {
			t.Errorf("User-Agent = %q", ua)
		}
		// A proxy or server echoing the header back must not put it in logs.
		writeJSON(w, 401, `{"message":"Bad credentials for `+r.Header.Get("Authorization")+`"}`)
	})
	_, err := f.client.DefaultBranch(t.Context(), "o", "r")
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Fatalf("error leaks the token: %v", err)
	}
	if !strings.Contains(err.Error(), "Bad credentials for Bearer ***") {
		t.Errorf("error lost GitHub's message: %v", err)
	}
}

func TestAPIRedirectToOtherHostIsNotFollowed(t *testing.T) {
	t.Parallel()
	other := blobServer(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("API redirect followed to another host: %s", r.URL)
	})
	f := setup(t)
	f.handle("/repos/o/r", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/repos/o/r", http.StatusTemporaryRedirect)
	})
	if _, err := f.client.DefaultBranch(t.Context(), "o", "r"); err == nil {
		t.Fatal("no error for an unfollowed redirect")
	}
}

func TestAPIRedirectOnSameHostIsFollowed(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/old/r", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, baseURLPath+"/repositories/1296269", http.StatusMovedPermanently)
	})
	f.handle("/repositories/1296269", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, repoJSON)
	})
	if got, err := f.client.DefaultBranch(t.Context(), "old", "r"); err != nil || got != "main" {
		t.Fatalf("DefaultBranch = %q, %v", got, err)
	}
}

func TestAPIErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *APIError
		want string
	}{
		{&APIError{Op: "list jobs of run 1", Kind: ErrForbidden, StatusCode: 403, Message: "Resource not accessible by integration", Permission: "actions: read"},
			"ghapi: list jobs of run 1: forbidden (403): Resource not accessible by integration; the workflow token probably needs `permissions: actions: read`"},
		{&APIError{Op: "get x", StatusCode: 502}, "ghapi: get x: Bad Gateway (502)"},
		{&APIError{Op: "get x", Message: "dial tcp: refused"}, "ghapi: get x: request failed: dial tcp: refused"},
		{&APIError{Op: "get x", Kind: ErrNotFound, StatusCode: 404, Permission: "contents: read"},
			"ghapi: get x: not found (404) (or the token lacks `contents: read` on a private repository)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() =\n%s\nwant\n%s", got, tt.want)
		}
	}
}
