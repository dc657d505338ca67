package publish

import (
	"errors"
	"fmt"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/config"
)

// ActionFailed: GitHub refused or failed a write; Result.Refusal says
// what to change when a maintainer can.
const ActionFailed = "failed"

// Refusal is a publishing failure a maintainer can fix: what GitHub
// answered, and the one change that makes the write go through.
type Refusal struct {
	Kind ghapi.Refusal
	// Status and GitHub are GitHub's status and message; DocURL its
	// documentation_url.
	Status int
	GitHub string
	DocURL string
	// Fix says what to change, and where.
	Fix string
}

// Line is the refusal in one line: GitHub's answer, then the fix.
func (r *Refusal) Line() string {
	if r.Status == 0 { // found before the write (preflight)
		return fmt.Sprintf("%s. To fix: %s.", sentence(strings.TrimSuffix(r.GitHub, ".")), r.Fix)
	}
	return fmt.Sprintf("GitHub refused it (%d: %s). To fix: %s.", r.Status, strings.TrimSuffix(r.GitHub, "."), r.Fix)
}

// Explain turns a publishing error into the Refusal a maintainer acts on,
// nil when GitHub's answer is none ghapi recognizes. branch is the branch
// mini-agent was writing ("" when none): a ruleset on a branch with the
// policy's prefix can be avoided by another prefix.
func Explain(err error, cfg *config.Config, branch string) *Refusal {
	var ae *ghapi.APIError
	if !errors.As(err, &ae) || ae.Refusal == "" {
		return nil
	}
	r := &Refusal{Kind: ae.Refusal, Status: ae.StatusCode, GitHub: ae.Message, DocURL: ae.DocURL, Fix: ae.Advice()}
	switch ae.Refusal {
	case ghapi.RefusalTokenPermission:
		r.Fix += "; the workflow needs at least `permissions: { contents: write, pull-requests: write }`"
	case ghapi.RefusalRuleset:
		if len(ae.Rules) > 0 {
			r.Fix = "a repository ruleset refuses it (" + strings.Join(ae.Rules, " ") + "): " +
				strings.TrimPrefix(r.Fix, "a repository ruleset refuses it: ")
		}
		if cfg != nil && branch != "" && strings.HasPrefix(branch, cfg.BranchPrefix) {
			r.Fix += fmt.Sprintf(", or set `branch-prefix:` in %s to a prefix no ruleset restricts (it is `%s`)", config.DefaultPath, cfg.BranchPrefix)
		}
	}
	return r
}
