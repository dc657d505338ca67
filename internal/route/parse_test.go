package route

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseMalformedPayloads: every fixture cut short, with fields of the
// wrong type or null, must give ErrEvent or a decision, never a panic, and
// an accepted trigger must carry a repository.
func TestParseMalformedPayloads(t *testing.T) {
	t.Parallel()
	fixtures, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("fixtures: %v %v", fixtures, err)
	}
	events := []string{"workflow_run", "issue_comment", "workflow_dispatch", "push", "pull_request"}
	odd := []string{
		`null`, `[]`, `"x"`, `{}`, `{"repository":null}`, `{"repository":{"full_name":"no-slash"}}`,
		`{"action":"completed","workflow_run":null}`, `{"action":"completed","workflow_run":{"head_repository":null,"conclusion":"failure"}}`,
		`{"action":"completed","workflow_run":{"id":"7","conclusion":"failure"}}`,
		`{"action":"completed","workflow_run":{"conclusion":"failure","pull_requests":null,"head_commit":null}}`,
		`{"action":"completed","workflow_run":{"conclusion":"failure","pull_requests":[null,{"number":-1}]}}`,
		`{"action":"created","issue":{"number":1,"pull_request":{}},"comment":{"body":"/mini-agent fix","user":null}}`,
		`{"action":"created","issue":{"number":1,"pull_request":{}},"comment":{"body":"/mini-agent fix \u0000\u202e","user":{"login":"a","type":"User"},"author_association":"OWNER"}}`,
		`{"action":"created","issue":null,"comment":{}}`,
		`{"action":"created","issue":{"pull_request":null},"comment":{"body":"/mini-agent"}}`,
		`{"inputs":{"run-id":1e40}}`, `{"inputs":{"pr":[1]}}`, `{"inputs":{"pr":"#-3"}}`, `{"inputs":null}`,
		`{"inputs":{"instructions":{"a":1}}}`,
		`{"ref":"refs/heads/x","after":"0000000000000000000000000000000000000000"}`, `{"deleted":"yes"}`,
		`{"pull_request":{"head":{"repo":null},"base":{"repo":null}}}`, `{"pull_request":{"head":null}}`,
	}
	var payloads []string
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, len(b) / 3, len(b) / 2, len(b) - 2} {
			payloads = append(payloads, string(b[:n]))
		}
		payloads = append(payloads, string(b))
	}
	payloads = append(payloads, odd...)
	for _, name := range events {
		for _, p := range payloads {
			for _, repo := range []string{"", "octo-org/hello-world"} {
				ev := Event{Name: name, Payload: []byte(p), Repo: repo, Ref: "refs/heads/main", SHA: strings.Repeat("a", 40)}
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("%s payload %.80q: panic %v", name, p, r)
						}
					}()
					tr, d, err := Parse(ev)
					switch {
					case err != nil:
						if !errors.Is(err, ErrEvent) {
							t.Errorf("%s payload %.80q: error %v is not ErrEvent", name, p, err)
						}
					case tr == nil:
						if d.Reason == "" {
							t.Errorf("%s payload %.80q: skipped without a reason", name, p)
						}
					case tr.owner == "" || tr.repo == "":
						t.Errorf("%s payload %.80q: accepted without a repository", name, p)
					}
				}()
			}
		}
	}
}
