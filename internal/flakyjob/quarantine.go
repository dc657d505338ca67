package flakyjob

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
	"github.com/org/mini-agent/internal/testcmd"
)

// quarantineHeader starts a quarantine file mini-agent creates.
const quarantineHeader = "# Tests quarantined as flaky, one name a line (mini-agent proposes additions; see its docs/flaky.md).\n" +
	"# Lines starting with # are comments.\n"

// QuarantineID is the line a test gets in the quarantine file: its
// top-level name (what `go test -skip` matches; a subtest's parent).
func QuarantineID(test string) string {
	if i := strings.IndexByte(test, '/'); i > 0 && !strings.Contains(test, "::") {
		test = test[:i]
	}
	return strings.TrimSpace(test)
}

// AddToQuarantine returns content with id added: comment lines kept first
// as they were, then the ids sorted, one a line, without duplicates. added
// is false when id was there already.
func AddToQuarantine(content, id string) (string, bool) {
	var comments, ids []string
	for _, l := range strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
		case strings.HasPrefix(t, "#"):
			comments = append(comments, l)
		case !slices.Contains(ids, t):
			ids = append(ids, t)
		}
	}
	added := !slices.Contains(ids, id)
	if added {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, l := range comments {
		b.WriteString(l + "\n")
	}
	for _, l := range ids {
		b.WriteString(l + "\n")
	}
	return b.String(), added
}

// goTestName is a Go top-level test name: an identifier. Anything else in
// a Go quarantine line could widen the README's -skip pattern (a name
// "Test|.*" would skip every test).
var goTestName = regexp.MustCompile(`^[\p{L}_][\p{L}\p{N}_]*$`)

// validQuarantineID keeps what may be written as a line of the file: for
// Go an identifier; for other runners a test id with no whitespace,
// control, comment or shell/regexp-alternation character.
func validQuarantineID(id string, goRunner bool) bool {
	if goRunner {
		return len(id) <= 200 && goTestName.MatchString(id)
	}
	return id != "" && len(id) <= 200 && !strings.ContainsFunc(id, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune("#|\"'`$\\;&<>(){}*+?^", r)
	})
}

// quarantine proposes the candidate's flaky test for the quarantine file in
// a draft PR. opened reports a new PR.
func (r *runner) quarantine(ctx context.Context, c *Candidate, target *TestResult) (bool, error) {
	if target.Report == nil || target.Report.Verdict != flaky.VerdictFlaky {
		return false, nil // only a locally proven flake; never a failing test
	}
	if c.Issue == 0 {
		c.Notes = append(c.Notes, "no quarantine proposed: the candidate has no issue yet (new-issue budget)")
		return false, nil
	}
	cfg := r.job.Config
	file := cfg.Flaky.QuarantineFile
	id := QuarantineID(target.Ref.Test)
	if !validQuarantineID(id, r.job.Command.Runner() == testcmd.Go) {
		c.Notes = append(c.Notes, fmt.Sprintf("no quarantine proposed: %s is not a name the quarantine file can hold", code(id)))
		return false, nil
	}
	set, err := cfg.ProtectedSet()
	if err != nil {
		return false, err
	}
	if g, hit := set.Match(file); hit {
		c.Notes = append(c.Notes, fmt.Sprintf("no quarantine proposed: %s is protected (%s)", file, g))
		return false, nil
	}
	branch := publish.FixBranch(cfg.BranchPrefix, "quarantine-"+publish.Key(r.job.DefaultBranch, r.stub(target.Ref, "quarantine ")))
	branch = strings.Replace(branch, "fix-quarantine-", "quarantine-", 1)
	pr, declined, err := r.existing(ctx, branch, "quarantining this test")
	if err != nil || declined != "" {
		if declined != "" {
			c.Notes = append(c.Notes, declined)
		}
		return false, err
	}
	if pr != nil {
		c.Quarantine = pr
		c.Notes = append(c.Notes, fmt.Sprintf("quarantine already proposed in #%d", pr.Number))
		return false, nil
	}
	old, err := r.gh.FileAtRef(ctx, r.job.Owner, r.job.Repo, file, r.head)
	switch {
	case errors.Is(err, ghapi.ErrNotFound):
		old = []byte(quarantineHeader)
	case err != nil:
		return false, fmt.Errorf("flakyjob: %w", err)
	}
	content, added := AddToQuarantine(string(old), id)
	if !added {
		c.Notes = append(c.Notes, fmt.Sprintf("%s is already in %s", code(id), file))
		return false, nil
	}
	exists := true
	if _, err := r.gh.BranchHead(ctx, r.job.Owner, r.job.Repo, branch); errors.Is(err, ghapi.ErrNotFound) {
		exists = false
	} else if err != nil {
		return false, fmt.Errorf("flakyjob: %w", err)
	}
	title := cut(fmt.Sprintf("mini-agent: quarantine flaky %s (Tracked by #%d)", plainID(id), c.Issue), 200)
	trailer := route.CommitTrailer + " " + "quarantine-" + signature(target.Ref)
	if _, err := r.gh.CommitFiles(ctx, r.job.Owner, r.job.Repo, ghapi.CommitRequest{BaseSHA: r.head, Branch: branch,
		Message: title + "\n\n" + trailer + "\n", Changes: []ghapi.FileChange{{Path: file, Content: []byte(content)}},
		CreateBranch: !exists, Force: exists, AdoptMarker: trailer}); err != nil {
		return false, fmt.Errorf("flakyjob: quarantine: %w", err)
	}
	created, err := r.gh.CreatePR(ctx, r.job.Owner, r.job.Repo, ghapi.NewPR{Title: title, Body: quarantineBody(c, target, file, id),
		Head: branch, Base: r.job.DefaultBranch, Draft: true})
	if err != nil {
		return false, fmt.Errorf("flakyjob: quarantine: %w", err)
	}
	c.Quarantine = &PR{Number: created.Number, URL: created.HTMLURL}
	msg := fmt.Sprintf("**Quarantine proposed in #%d** (draft): it adds %s to `%s`, so the workflow can skip it until it is fixed.", created.Number, code(id), file)
	return true, r.noteOnIssue(ctx, c, target, "quarantine", msg)
}

func quarantineBody(c *Candidate, t *TestResult, file, id string) string {
	var w strings.Builder
	fmt.Fprintf(&w, "## Quarantine a flaky test · Tracked by #%d\n\n", c.Issue)
	fmt.Fprintf(&w, "%s failed and passed on the same code in CI (%d failed attempts on %d commit(s); see #%d) and mini-agent "+
		"reproduced the flake locally. No proven fix exists", code(t.Ref.Test), len(c.Failures), len(c.Commits), c.Issue)
	if c.Fix != nil {
		fmt.Fprintf(&w, " (the last attempt: `%s`, %s)", c.Fix.Status, inline(c.Fix.Reason))
	}
	fmt.Fprintf(&w, ", so this draft adds %s to `%s`. A workflow that reads the file skips it (see mini-agent's docs/flaky.md, "+
		"\"Using the quarantine file (Go)\"). Remove the line when the test is fixed.\n\n", code(id), file)
	beforeAfter(&w, t, c.Fix)
	w.WriteString("\nThe issue has the evidence: the failing and passing CI attempts, the commits, and the command and seed that reproduce it.\n")
	return w.String()
}
