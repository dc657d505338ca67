package ghapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// GitHub's answers to the refusals mini-agent meets while publishing, as
// github.com sends them (status, JSON message, documentation_url, the
// "status" string GitHub adds, the errors array, headers).
const (
	bodyActionsCannotCreatePRs = `{"message":"GitHub Actions is not permitted to create or approve pull requests.",` +
		`"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"403"}`
	bodyNotAccessibleBlob = `{"message":"Resource not accessible by integration",` +
		`"documentation_url":"https://docs.github.com/rest/git/blobs#create-a-blob","status":"403"}`
	bodyNotAccessiblePulls = `{"message":"Resource not accessible by integration",` +
		`"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"403"}`
	bodyRulesetCreateRef = `{"message":"Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n",` +
		`"documentation_url":"https://docs.github.com/rest/git/refs#create-a-reference","status":"422"}`
	bodyRulesetInErrors = `{"message":"Validation Failed","errors":[{"resource":"Release","code":"custom","field":"pre_receive",` +
		`"message":"pre_receive Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n"}],` +
		`"documentation_url":"https://docs.github.com/rest/releases/releases#create-a-release","status":"422"}`
	bodySecondaryLimit = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again. ` +
		`If you reach out to GitHub Support for help, please include the request ID 0400:2C1E:1B2A3C:4D5E6F:67A1B2C3.",` +
		`"documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits","status":"403"}`
)

func TestRefusalsAreClassified(t *testing.T) {
	t.Parallel()
	newPR := NewPR{Title: "t", Head: "mini-agent/fix-1", Base: "main"}
	for _, tt := range []struct {
		name     string
		path     string
		status   int
		body     string
		header   map[string]string
		call     func(c *Client) error
		kind     error
		refusal  Refusal
		perm     string
		rules    []string
		advice   []string // substrings of Advice and of Error
		notAdvic string   // a substring Error must not have
		docURL   string
	}{
		{name: "the Actions PR setting is off", path: "POST /repos/o/r/pulls", status: 403, body: bodyActionsCannotCreatePRs,
			call: func(c *Client) error { _, err := c.CreatePR(t.Context(), "o", "r", newPR); return err },
			kind: ErrForbidden, refusal: RefusalActionsCannotCreatePRs, perm: "pull-requests: write",
			advice:   []string{"Settings → Actions → General → Workflow permissions → \"Allow GitHub Actions to create and approve pull requests\""},
			notAdvic: "probably needs", docURL: "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"},
		{name: "read-only token", path: "POST /repos/o/r/git/blobs", status: 403, body: bodyNotAccessibleBlob,
			header: map[string]string{"X-Accepted-GitHub-Permissions": "contents=write"},
			call:   func(c *Client) error { _, err := c.CreateBlob(t.Context(), "o", "r", nil); return err },
			kind:   ErrForbidden, refusal: RefusalTokenPermission, perm: "contents: write",
			advice: []string{"add `contents: write` to the workflow's `permissions:` block"}},
		{name: "no pull-requests: write", path: "POST /repos/o/r/pulls", status: 403, body: bodyNotAccessiblePulls,
			header: map[string]string{"X-Accepted-GitHub-Permissions": "pull_requests=write"},
			call:   func(c *Client) error { _, err := c.CreatePR(t.Context(), "o", "r", newPR); return err },
			kind:   ErrForbidden, refusal: RefusalTokenPermission, perm: "pull-requests: write",
			advice: []string{"add `pull-requests: write` to the workflow's `permissions:` block"}},
		{name: "no header: ghapi's own knowledge", path: "POST /repos/o/r/pulls", status: 403, body: bodyNotAccessiblePulls,
			call: func(c *Client) error { _, err := c.CreatePR(t.Context(), "o", "r", newPR); return err },
			kind: ErrForbidden, refusal: RefusalTokenPermission, perm: "pull-requests: write",
			advice: []string{"add `pull-requests: write`"}},
		{name: "a ruleset restricts creations", path: "GET /repos/o/r/rules/branches/{b...}", status: 422, body: bodyRulesetCreateRef,
			call: func(c *Client) error { _, err := c.BranchRules(t.Context(), "o", "r", "mini-agent/fix-1"); return err },
			kind: ErrUnprocessable, refusal: RefusalRuleset, rules: []string{"Cannot create ref due to creations being restricted."},
			advice: []string{"Settings → Rules → Rulesets", "bypass list"}},
		{name: "a ruleset in the errors array", path: "GET /repos/o/r/rules/branches/{b...}", status: 422, body: bodyRulesetInErrors,
			call: func(c *Client) error { _, err := c.BranchRules(t.Context(), "o", "r", "x"); return err },
			kind: ErrUnprocessable, refusal: RefusalRuleset, rules: []string{"Cannot create ref due to creations being restricted."}},
		{name: "a secondary rate limit that does not clear", path: "POST /repos/o/r/pulls", status: 403, body: bodySecondaryLimit,
			header: map[string]string{"Retry-After": "30"},
			call:   func(c *Client) error { _, err := c.CreatePR(t.Context(), "o", "r", newPR); return err },
			kind:   ErrRateLimited, refusal: RefusalSecondaryRateLimit,
			advice: []string{"secondary rate limit did not clear", "concurrency:"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			f.handle(tt.path, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				writeJSON(w, tt.status, tt.body)
			})
			err := tt.call(f.client)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an *APIError", err)
			}
			if !errors.Is(err, tt.kind) || ae.Refusal != tt.refusal {
				t.Errorf("kind %v refusal %q, want %v %q (%v)", ae.Kind, ae.Refusal, tt.kind, tt.refusal, err)
			}
			if tt.perm != "" && ae.NeededPermission() != tt.perm {
				t.Errorf("NeededPermission = %q, want %q", ae.NeededPermission(), tt.perm)
			}
			if tt.rules != nil {
				equal(t, "rules", ae.Rules, tt.rules)
			}
			if tt.docURL != "" && ae.DocURL != tt.docURL {
				t.Errorf("DocURL = %q", ae.DocURL)
			}
			if strings.Contains(ae.Message, "\n") {
				t.Errorf("message spans lines: %q", ae.Message)
			}
			for _, a := range tt.advice {
				if !strings.Contains(ae.Advice(), a) || !strings.Contains(err.Error(), a) {
					t.Errorf("advice %q / error %q lacks %q", ae.Advice(), err, a)
				}
			}
			if tt.notAdvic != "" && strings.Contains(err.Error(), tt.notAdvic) {
				t.Errorf("error %q says %q", err, tt.notAdvic)
			}
		})
	}
}

// TestOtherErrorsHaveNoAdvice: a refusal ghapi does not know gets none (a
// wrong hint is worse than none).
func TestOtherErrorsHaveNoAdvice(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("POST /repos/o/r/pulls", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 422, `{"message":"Validation Failed","errors":[{"resource":"PullRequest","field":"base","code":"invalid"}],"status":"422"}`)
	})
	_, err := f.client.CreatePR(t.Context(), "o", "r", NewPR{Title: "t", Head: "h", Base: "gone"})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Refusal != "" || ae.Advice() != "" {
		t.Fatalf("err = %v, refusal %q", err, ae.Refusal)
	}
}
