package publish_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/golden"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

// The texts the publisher writes to GitHub, byte for byte: the proposal
// PR's title and body and the tracking comment for each way a run ends.
// The fake's commit SHAs are replaced by names, so only the rendering is
// compared. After an intended change:
// go test ./internal/publish -run Golden -update, then review git diff.
func TestGoldenPublishedTexts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		write route.Write
		fork  bool
		edit  func(b *bundle.Bundle)
	}{
		{name: "propose", write: route.WritePropose},
		{name: "fork-comment", write: route.WriteComment, fork: true},
		{name: "explain", write: route.WriteNone, edit: func(b *bundle.Bundle) {
			b.Mode, b.Status, b.Diff, b.Files, b.Validation = "explain", bundle.StatusExplained, "", nil, nil
			b.Baseline, b.Proof, b.TreeSHA = nil, nil, "" // explain runs reproduce nothing
		}},
		{name: "validation-failed", write: route.WritePropose, edit: func(b *bundle.Bundle) {
			b.Status = bundle.StatusValidationFailed
			b.Validation[1].Passed, b.Validation[1].ExitCode = false, 1
			b.Proof.Holds, b.Proof.FullPassed, b.Proof.Failed = false, false, []string{"TestParseLong"}
			b.Proof.NewFailures = []string{"TestParseLong"}
			b.Proof.Reasons = []string{"tests that did not fail at the base fail on the published tree: TestParseLong"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			b := makeBundle(t, f.head, theFix)
			if c.edit != nil {
				c.edit(b)
			}
			job := f.job(c.write)
			if c.fork {
				job.Fork, job.HeadRepo = true, "mallory/hello-world"
			}
			res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: job, Config: config.Default()})
			if err != nil {
				t.Fatal(err)
			}
			names := strings.NewReplacer(f.head, "<failing-sha>")
			if res.Commit != "" {
				names = strings.NewReplacer(f.head, "<failing-sha>", res.Commit, "<fix-sha>")
			}
			comments := f.s.Comments(repo, 7)
			if len(comments) != 1 {
				t.Fatalf("%d comments on #7, want the tracking comment", len(comments))
			}
			dir := filepath.Join("testdata", "golden")
			golden.AssertString(t, filepath.Join(dir, c.name+".comment.md"), names.Replace(comments[0].Body))
			if res.PRNumber != 0 && res.PRNumber != 7 {
				pulls := f.s.Pulls(repo)
				pr := pulls[len(pulls)-1]
				golden.AssertString(t, filepath.Join(dir, c.name+".pr.md"), names.Replace(pr.Title+"\n\n"+pr.Body))
			}
		})
	}
}
