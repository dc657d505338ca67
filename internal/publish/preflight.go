package publish

import (
	"context"
	"fmt"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/route"
)

// Rule types that stop mini-agent's ref writes unless its actor may bypass
// them: creating the fix branch, and updating a branch (the fix branch it
// force-moves, or a PR's branch under the push label).
var (
	createRules = []string{"creation"}
	updateRules = []string{"update", "pull_request", "required_status_checks", "required_deployments"}
)

// preflight tries, before any model call, what publishing will need where
// that costs nothing: the token's contents: write (storing the empty blob,
// which every repository may already hold) and the rulesets on the branch
// it will create or update (read, with whether the token's actor may
// bypass each). A refusal here is a Result of status failed with the
// Refusal, so no model is paid for a fix that cannot be published. What
// cannot be tried without a trace (opening a pull request) is not.
// exists says whether branch exists; force whether it would be force-moved.
func preflight(ctx context.Context, gh GitHub, job *route.Job, cfg *config.Config, branch string, exists, force bool) (*Result, error) {
	if _, err := gh.CreateBlob(ctx, job.Owner, job.Repo, nil); err != nil {
		if r := Explain(err, cfg, branch); r != nil {
			return refusedBefore(r, "storing a file (the empty blob) to check the token's contents: write"), nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
		// Another failure (an outage): publishing will meet it, or not.
	}
	rules, err := gh.BranchRules(ctx, job.Owner, job.Repo, branch)
	if err != nil {
		// Rules unreadable (an older GHES): publishing finds out.
		return nil, nil
	}
	blocking := updateRules
	if !exists {
		blocking = createRules
	} else if force {
		blocking = append([]string{"non_fast_forward"}, updateRules...)
	}
	seen := map[int64]bool{}
	for _, r := range rules {
		if !contains(blocking, r.Type) || seen[r.RulesetID] {
			continue
		}
		seen[r.RulesetID] = true
		rs, err := gh.GetRuleset(ctx, job.Owner, job.Repo, r.RulesetID)
		if err != nil || rs.CurrentUserCanBypass == "always" {
			continue // bypassed, or unknown: publishing finds out
		}
		return refusedBefore(rulesetRefusal(cfg, branch, exists, r, rs), "reading the rulesets on "+branch), nil
	}
	return nil, nil
}

// rulesetRefusal explains a ruleset that would refuse mini-agent's write.
func rulesetRefusal(cfg *config.Config, branch string, exists bool, r ghapi.BranchRule, rs *ghapi.Ruleset) *Refusal {
	what := "updating"
	if !exists {
		what = "creating"
	}
	fix := fmt.Sprintf("in Settings → Rules → Rulesets, add the workflow's actor (GitHub Actions, or the GitHub App whose token you pass) to "+
		"the bypass list of ruleset %q (id %d, from %s), or exclude %s from its target", rs.Name, rs.ID, orNone(r.RulesetSource), branch)
	if strings.HasPrefix(branch, cfg.BranchPrefix) {
		fix += fmt.Sprintf(", or set `branch-prefix:` in %s to a prefix it does not cover (it is `%s`)", config.DefaultPath, cfg.BranchPrefix)
	}
	return &Refusal{Kind: ghapi.RefusalRuleset,
		GitHub: fmt.Sprintf("ruleset %q has a %s rule on %s that the token's actor may not bypass (%s), so %s the branch would be refused",
			rs.Name, r.Type, branch, orNone(rs.CurrentUserCanBypass), what),
		Fix: fix}
}

// refusedBefore is a refusal found before the model ran.
func refusedBefore(r *Refusal, how string) *Result {
	return &Result{Status: StatusFailed, Action: ActionFailed, Refusal: r, BeforeModel: true,
		Reason: "mini-agent did not run the model: publishing would be refused (found by " + how + "). " + r.Line()}
}
