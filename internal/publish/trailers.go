package publish

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/route"
)

// Trailers mini-agent writes under route.CommitTrailer in the last
// paragraph of its commit messages. They let a later run recognize a
// validated fix on the fix branch whose pull request could not be opened,
// and count the attempts that left no PR behind.
const (
	trailerAttempt   = "Mini-Agent-Attempt:"
	trailerValidated = "Mini-Agent-Validated-Tree:"
	trailerReport    = "Mini-Agent-Report:"
	trailerRun       = "Mini-Agent-Run:"
)

// commitTrailers is what a commit of mini-agent's says about itself.
type commitTrailers struct {
	Signature string
	Attempt   int
	// ValidatedTree is the tree the harness validated; "" for a draft.
	ValidatedTree string
	// Report is the blob holding the run's report (the PR body's), "" when
	// none was stored.
	Report string
	RunURL string
}

var trailerLine = regexp.MustCompile(`^(Mini-Agent-[A-Za-z-]+:)\s*(\S+)\s*$`)

// parseTrailers reads the trailers of a commit message (last values win).
func parseTrailers(msg string) commitTrailers {
	var t commitTrailers
	for _, l := range strings.Split(msg, "\n") {
		m := trailerLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		switch v := m[2]; m[1] {
		case route.CommitTrailer:
			t.Signature = v
		case trailerAttempt:
			t.Attempt, _ = strconv.Atoi(v)
		case trailerValidated:
			if ghapi.IsSHA(v) {
				t.ValidatedTree = v
			}
		case trailerReport:
			if ghapi.IsSHA(v) {
				t.Report = v
			}
		case trailerRun:
			if strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "http://") {
				t.RunURL = v
			}
		}
	}
	return t
}

// validatedFix reports whether c is mini-agent's validated fix for the
// failure sig at the failing commit base: its only parent is base, its
// trailers name sig and a validated tree that is the commit's own, and
// GitHub verified it (GitHub signs what the Git Data API commits for an app
// or a workflow token; a commit pushed with git is not).
func validatedFix(c *ghapi.CommitInfo, t commitTrailers, sig, base string) bool {
	return c != nil && c.Verified && len(c.Parents) == 1 && c.Parents[0] == base &&
		t.Signature != "" && t.Signature == sig && t.ValidatedTree != "" && t.ValidatedTree == c.Tree
}
