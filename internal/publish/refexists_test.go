package publish_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

const refsPath = "/repos/octo-org/hello-world/git/refs"

// faultyClient is a client of f's fake with millisecond backoffs, after
// injecting faults.
func faultyClient(t *testing.T, f *fixture, faults ...ghtest.Fault) *ghapi.Client {
	t.Helper()
	for _, ft := range faults {
		f.s.Inject(ft)
	}
	gh, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: f.s.URL, WriteInterval: -1,
		Retry: ghapi.RetryPolicy{BaseBackoff: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return gh
}

// gitTrail lists the Git Data and pulls requests (method and path), the
// ones publishing a proposal makes.
func gitTrail(f *fixture) []string {
	var out []string
	for _, r := range f.s.Requests() {
		if strings.Contains(r.Path, "/git/") || strings.HasSuffix(r.Path, "/pulls") {
			out = append(out, r.Method+" "+strings.TrimPrefix(r.Path, "/repos/octo-org/hello-world"))
		}
	}
	return out
}

func fixBranch(b *bundle.Bundle, job *route.Job) string {
	return publish.FixBranch(config.Default().BranchPrefix, publish.Key(job.Branch, b))
}

// TestProposeAfterALostBranchCreateAnswer: GitHub created the fix branch
// but the answer was lost (a 502); the retried create gets "Reference
// already exists". The branch is at the commit this run made: the run goes
// on and opens the one PR.
func TestProposeAfterALostBranchCreateAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	gh := faultyClient(t, f, ghtest.Fault{Method: "POST", Path: refsPath, Status: http.StatusBadGateway, Apply: true})
	b, job := makeBundle(t, f.head, theFix), f.job(route.WritePropose)
	branch := fixBranch(b, job)
	res, err := publish.Publish(t.Context(), gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
	if err != nil {
		t.Fatalf("the branch was created but Publish says: %v\nrequests: %q", err, gitTrail(f))
	}
	if res.Status != publish.StatusFixed || res.Action != publish.ActionPRCreated || res.Branch != branch || res.PRNumber != 8 {
		t.Errorf("result = %+v", res)
	}
	if head := f.s.Head(repo, branch); head != res.Commit {
		t.Errorf("%s is at %s, want the run's commit %s", branch, head, res.Commit)
	}
	if pulls := f.s.Pulls(repo); len(pulls) != 2 || pulls[1].Head != branch {
		t.Fatalf("PRs = %+v, want #7 and one proposal from %s", pulls, branch)
	}
	ref := "/git/ref/heads/" + branch
	want := []string{"GET /git/ref/heads/feature/parser", "GET /pulls", "GET " + ref, "POST /git/blobs" /* the report */, "GET /git/commits/" + f.head,
		"POST /git/blobs", "POST /git/blobs", "POST /git/blobs", "POST /git/trees",
		"POST /git/commits", "POST /git/refs", "POST /git/refs", "GET " + ref, "POST /pulls"}
	if got := gitTrail(f); !slices.Equal(got, want) {
		t.Errorf("requests =\n%q\nwant\n%q", got, want)
	}
	if f.s.Fired() != 1 || f.count("PATCH", "/repos/octo-org/hello-world/git/refs/heads/"+branch) != 0 {
		t.Errorf("fired %d faults; the ref was patched %d times", f.s.Fired(), f.count("PATCH", "/repos/octo-org/hello-world/git/refs/heads/"+branch))
	}
}

// TestProposeTakesOverItsOwnBranchThatAppeared: the fix branch appeared
// between the look-up and the create (a concurrent run of the same
// failure), at a commit carrying this failure's trailer: it is mini-agent's,
// and is moved to this run's commit as a rerun would.
func TestProposeTakesOverItsOwnBranchThatAppeared(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b, job := makeBundle(t, f.head, theFix), f.job(route.WritePropose)
	branch := fixBranch(b, job)
	other := f.s.Commit(repo, branch, "mini-agent: an earlier attempt\n\n"+route.CommitTrailer+" "+b.Signature+"\n", map[string]string{"parser.go": "package hello\n"})
	// The look-up does not see it yet; the create does.
	gh := faultyClient(t, f, ghtest.Fault{Method: "GET", Path: "/repos/octo-org/hello-world/git/ref/heads/" + branch, Status: http.StatusNotFound})
	res, err := publish.Publish(t.Context(), gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
	if err != nil {
		t.Fatalf("Publish: %v\nrequests: %q", err, gitTrail(f))
	}
	if head := f.s.Head(repo, branch); head != res.Commit || head == other {
		t.Errorf("%s is at %s, want this run's commit %s (was %s)", branch, head, res.Commit, other)
	}
	if got := f.s.Files(repo, branch)["parser.go"].Content; !strings.Contains(got, "func Parse") {
		t.Errorf("the branch does not hold the fix: parser.go = %q", got)
	}
	if pulls := f.s.Pulls(repo); len(pulls) != 2 || res.PRNumber != 8 {
		t.Fatalf("%d PRs, result %+v", len(pulls), res)
	}
	ref := "/git/ref/heads/" + branch
	want := []string{"GET /git/ref/heads/feature/parser", "GET /pulls", "GET " + ref, "POST /git/blobs" /* the report */, "GET /git/commits/" + f.head,
		"POST /git/blobs", "POST /git/blobs", "POST /git/blobs", "POST /git/trees",
		"POST /git/commits", "POST /git/refs", "GET " + ref, "GET /git/commits/" + other, "PATCH /git/refs/heads/" + branch, "POST /pulls"}
	if got := gitTrail(f); !slices.Equal(got, want) {
		t.Errorf("requests =\n%q\nwant\n%q", got, want)
	}
}

// TestProposeLeavesAForeignBranchAlone: a branch of the fix branch's name
// that is not mini-agent's (no trailer for this failure) is never
// overwritten: the run fails saying so, and opens no PR.
func TestProposeLeavesAForeignBranchAlone(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{"someone's work", "mini-agent: another failure\n\n" + route.CommitTrailer + " 0000aaaa\n"} {
		f := newFixture(t)
		b, job := makeBundle(t, f.head, theFix), f.job(route.WritePropose)
		branch := fixBranch(b, job)
		foreign := f.s.Commit(repo, branch, msg, map[string]string{"NOTES.md": "mine\n"})
		gh := faultyClient(t, f, ghtest.Fault{Method: "GET", Path: "/repos/octo-org/hello-world/git/ref/heads/" + branch, Status: http.StatusNotFound})
		res, err := publish.Publish(t.Context(), gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
		if !errors.Is(err, ghapi.ErrBranchExists) || res == nil || res.Status != publish.StatusFailed || res.Branch != "" {
			t.Fatalf("Publish = %+v, %v; want ErrBranchExists", res, err)
		}
		for _, want := range []string{branch + " exists and is not mini-agent's branch for this failure", "not overwriting it", foreign} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q: %v", want, err)
			}
		}
		if head := f.s.Head(repo, branch); head != foreign {
			t.Errorf("%s moved to %s", branch, head)
		}
		if n := f.count("PATCH", "/repos/octo-org/hello-world/git/refs/heads/"+branch); n != 0 || len(f.s.Pulls(repo)) != 1 {
			t.Errorf("%d ref updates, %d PRs: want none and #7 only", n, len(f.s.Pulls(repo)))
		}
	}
}
