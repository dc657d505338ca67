package ghapi

import (
	"fmt"
	"slices"
	"strings"
)

// Refusal names a refusal GitHub gives for a reason a maintainer can change
// (a repository setting, the workflow's permissions, a ruleset, a rate
// limit), as opposed to a bad request or an outage. APIError.Refusal is set
// from GitHub's status, message and headers; Advice says what to change.
type Refusal string

// The refusals ghapi recognizes.
const (
	// RefusalActionsCannotCreatePRs: 403 "GitHub Actions is not permitted to
	// create or approve pull requests." The repository's (or its
	// organization's) setting is off, whatever the workflow's permissions.
	RefusalActionsCannotCreatePRs Refusal = "actions-cannot-create-prs"
	// RefusalTokenPermission: 403 "Resource not accessible by integration"
	// (or "by personal access token"): the token lacks a permission, which
	// APIError.Accepted or APIError.Permission names.
	RefusalTokenPermission Refusal = "token-permission"
	// RefusalRuleset: "Repository rule violations found" (422, 409 or 403):
	// a ruleset refused the ref; APIError.Rules has GitHub's reasons.
	RefusalRuleset Refusal = "ruleset"
	// RefusalProtectedBranch: classic branch protection refused an update
	// ("Protected branch update failed").
	RefusalProtectedBranch Refusal = "protected-branch"
	// RefusalSecondaryRateLimit: GitHub's secondary rate limit was still in
	// force after the retries.
	RefusalSecondaryRateLimit Refusal = "secondary-rate-limit"
	// RefusalRateLimit: the token's hourly (primary) rate limit is spent.
	RefusalRateLimit Refusal = "rate-limit"
)

// SettingActionsCreatePRs is where the setting GitHub Actions needs to open
// pull requests lives in GitHub's UI.
const SettingActionsCreatePRs = "Settings → Actions → General → Workflow permissions → " +
	"\"Allow GitHub Actions to create and approve pull requests\""

// classify sets e.Refusal and e.Rules from what GitHub answered.
func (e *APIError) classify() {
	msg := strings.ToLower(e.Message)
	switch {
	case strings.Contains(msg, "not permitted to create or approve pull requests"):
		e.Refusal = RefusalActionsCannotCreatePRs
	case strings.Contains(msg, "repository rule violations found"):
		e.Refusal = RefusalRuleset
		e.Rules = ruleViolations(e.Message)
	case strings.Contains(msg, "protected branch update failed") || strings.Contains(msg, "protected branch hook declined"):
		e.Refusal = RefusalProtectedBranch
	case e.Kind == ErrRateLimited && (strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "abuse")):
		e.Refusal = RefusalSecondaryRateLimit
	case e.Kind == ErrRateLimited:
		e.Refusal = RefusalRateLimit
	case e.Kind == ErrForbidden && strings.Contains(msg, "resource not accessible by"):
		e.Refusal = RefusalTokenPermission
	}
}

// ruleViolations are the reasons GitHub lists after "Repository rule
// violations found" ("Cannot create ref due to creations being
// restricted.").
func ruleViolations(msg string) []string {
	var out []string
	_, rest, _ := strings.Cut(msg, "Repository rule violations found")
	for _, part := range strings.Split(rest, "\n") {
		part = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(part), "-"))
		part = strings.TrimSpace(strings.TrimPrefix(part, ":"))
		if part != "" && !slices.Contains(out, part) {
			out = append(out, part)
		}
	}
	return out
}

// NeededPermission is the permission the refused call needs, as a
// `permissions:` entry ("pull-requests: write"): GitHub's
// X-Accepted-GitHub-Permissions header when it sent one, else ghapi's own
// knowledge of the call.
func (e *APIError) NeededPermission() string {
	if a := strings.TrimSpace(e.Accepted); a != "" {
		// "contents=write" or "contents=write; pull_requests=write" (any of).
		first, _, _ := strings.Cut(a, ";")
		first, _, _ = strings.Cut(first, ",")
		if k, v, ok := strings.Cut(strings.TrimSpace(first), "="); ok {
			return strings.ReplaceAll(k, "_", "-") + ": " + v
		}
	}
	return e.Permission
}

// Advice says, in one sentence, what a maintainer changes so the refused
// call goes through, and where; "" when the refusal is not one ghapi knows.
func (e *APIError) Advice() string {
	switch e.Refusal {
	case RefusalActionsCannotCreatePRs:
		return "turn on " + SettingActionsCreatePRs + " in the repository (for an organization's repository, the organization's " +
			"Settings → Actions → General must allow it first), or pass a GitHub App token as `github-token`; " +
			"the workflow's `pull-requests: write` alone is not enough"
	case RefusalTokenPermission:
		perm := e.NeededPermission()
		if perm == "" {
			return "give the workflow token the permission this call needs in the workflow's `permissions:` block"
		}
		return fmt.Sprintf("add `%s` to the workflow's `permissions:` block (a job's own `permissions:` replaces the workflow's; "+
			"a pull request from a fork always gets a read-only token)", perm)
	case RefusalRuleset:
		return "a repository ruleset refuses it: in Settings → Rules → Rulesets, add the workflow's actor (GitHub Actions, or the " +
			"GitHub App whose token you pass) to the ruleset's bypass list, or exclude the branch from the ruleset's target"
	case RefusalProtectedBranch:
		return "branch protection refuses the update: in Settings → Branches, let the workflow's actor push to the branch"
	case RefusalSecondaryRateLimit:
		return "GitHub's secondary rate limit did not clear within the retries (too many writes at once from this " +
			"repository's workflows): rerun the job in a few minutes, and keep parallel runs down with `concurrency:`"
	case RefusalRateLimit:
		if !e.RetryAt.IsZero() {
			return "the token's hourly API rate limit is spent: rerun the job after " + e.RetryAt.UTC().Format("15:04 MST")
		}
		return "the token's hourly API rate limit is spent: rerun the job in an hour"
	}
	return ""
}
