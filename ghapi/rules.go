package ghapi

import (
	"context"
	"fmt"
)

const permMetadataRead = "metadata: read"

// BranchRule is one active ruleset rule that applies to a branch.
type BranchRule struct {
	// Type is the rule's kind: "creation", "update", "deletion",
	// "non_fast_forward", "required_signatures", "pull_request", ...
	Type string
	// RulesetID, RulesetSource ("owner/name" or the organization) and
	// RulesetSourceType ("Repository", "Organization") name the ruleset.
	RulesetID         int64
	RulesetSource     string
	RulesetSourceType string
}

// BranchRules lists the active rules that apply to branch (which need not
// exist): what a push or ref change there must pass. Anyone who can read the
// repository can read them.
func (c *Client) BranchRules(ctx context.Context, owner, repo, branch string) ([]BranchRule, error) {
	rules, resp, err := c.gh.Repositories.GetRulesForBranch(ctx, owner, repo, branch)
	if err != nil {
		return nil, c.fail(fmt.Sprintf("get the rules for branch %s", branch), permMetadataRead, resp, err)
	}
	out := make([]BranchRule, 0, len(rules))
	for _, r := range rules {
		out = append(out, BranchRule{Type: r.Type, RulesetID: r.RulesetID, RulesetSource: r.RulesetSource, RulesetSourceType: r.RulesetSourceType})
	}
	return out, nil
}

// Ruleset is the part of a ruleset mini-agent reports.
type Ruleset struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Enforcement string `json:"enforcement"`
	// CurrentUserCanBypass is whether the token's actor may bypass it:
	// "always", "pull_requests_only", "never" ("" when GitHub did not say).
	CurrentUserCanBypass string `json:"current_user_can_bypass"`
	SourceType           string `json:"source_type"`
	Source               string `json:"source"`
}

// GetRuleset reads ruleset id as the repository sees it (rulesets of its
// organization included).
func (c *Client) GetRuleset(ctx context.Context, owner, repo string, id int64) (*Ruleset, error) {
	op := fmt.Sprintf("get ruleset %d", id)
	// Decoded here: go-github v62's Ruleset has no current_user_can_bypass.
	req, err := c.gh.NewRequest("GET", fmt.Sprintf("repos/%s/%s/rulesets/%d?includes_parents=true", owner, repo, id), nil)
	if err != nil {
		return nil, fmt.Errorf("ghapi: %s: %w", op, err)
	}
	var rs Ruleset
	resp, err := c.gh.Do(ctx, req, &rs)
	if err != nil {
		return nil, c.fail(op, permMetadataRead, resp, err)
	}
	return &rs, nil
}
