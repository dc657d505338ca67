// Package flakyissue reports flaky-test candidates (internal/flakyscan) as
// GitHub issues: one issue per cluster of tests failing together, found
// again on later scheduled runs by the hidden marker of each of its tests
// through the issues listing (not the search API, whose index lags).
//
// On a later run, a candidate whose tests already have an issue gets a
// comment only when it has failed attempts the issue does not list yet
// (the issue and mini-agent's comments carry the reported attempts in a
// hidden line); never a second issue. A closed issue means the maintainer
// dismissed it: it is not reopened, and is commented on under the same
// new-evidence rule, so the maintainer sees failures continue without
// being asked again. New issues are bounded per run (Options.MaxNewIssues,
// highest ranked first); a run with no candidates posts nothing. Every text
// from logs and the history is untrusted and rendered through
// route.Sanitize and report.Untrusted (nothing hidden from the reader, no
// hidden comment can forge a marker, no mention notifies anyone).
//
// Job level: uses flakyscan, ghapi, report and route.
package flakyissue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/flakyscan"
)

// Defaults.
const (
	// DefaultLabel marks the issues and narrows the listing that finds them.
	DefaultLabel = "flaky-test"
	// DefaultMaxNewIssues is the default budget of new issues per run.
	DefaultMaxNewIssues = 5
)

// MarkerPrefix starts the hidden marker naming one test.
const MarkerPrefix = "<!-- mini-agent:flaky id="

// seenPrefix starts the hidden line listing the reported failed attempts.
const seenPrefix = "<!-- mini-agent:flaky-seen "

// Marker is the hidden marker of test t: stable across runs as long as the
// workflow, job name, package and test id are.
func Marker(t flakyscan.TestRef) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%s\x00%s", t.WorkflowID, t.Job, t.Package, t.Test)))
	return MarkerPrefix + hex.EncodeToString(h[:8]) + " -->"
}

// occKey names a failed attempt of a job.
func occKey(o flakyscan.Occurrence) string {
	return fmt.Sprintf("%d.%d.%d", o.RunID, o.Attempt, o.JobID)
}

func seenOf(os []flakyscan.Occurrence) map[string]bool {
	m := map[string]bool{}
	for _, o := range os {
		m[occKey(o)] = true
	}
	return m
}

func seenLine(seen map[string]bool) string {
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return seenPrefix + strings.Join(keys, " ") + " -->"
}

var seenRE = regexp.MustCompile(`(?m)^<!-- mini-agent:flaky-seen ([0-9. ]*) -->\s*$`)

// parseSeen adds to seen the attempts listed in body's hidden lines.
func parseSeen(body string, seen map[string]bool) {
	for _, m := range seenRE.FindAllStringSubmatch(body, -1) {
		for _, k := range strings.Fields(m[1]) {
			seen[k] = true
		}
	}
}

// Proof is the local command's measurement of a test, when it ran (plain
// fields: the statistics are computed elsewhere).
type Proof struct {
	Runs, Failures int
	// Rate is Failures/Runs; Low and High its 95% interval.
	Rate, Low, High float64
	// Command reproduces the failure; Seed is the -shuffle seed, if any.
	Command, Seed string
}

// Client is the GitHub side; *ghapi.Client implements it.
type Client interface {
	ListIssues(ctx context.Context, owner, repo string, f ghapi.IssueFilter) ([]ghapi.Issue, error)
	CreateIssue(ctx context.Context, owner, repo string, n ghapi.NewIssue) (*ghapi.Issue, error)
	ListComments(ctx context.Context, owner, repo string, number int) ([]ghapi.Comment, error)
	CreateComment(ctx context.Context, owner, repo string, number int, body string) (*ghapi.Comment, error)
}

// Options configure Publish. Owner and Repo are required.
type Options struct {
	Owner, Repo string
	// Label is put on new issues and narrows the listing that finds them
	// again (removing it from an issue makes mini-agent forget it); empty
	// means DefaultLabel.
	Label string
	// MaxNewIssues bounds the issues opened per run; 0 means
	// DefaultMaxNewIssues, a negative value opens none (comments only).
	MaxNewIssues int
	// Proofs are the local command's measurements, by test; a cluster
	// shows the first of its tests that has one.
	Proofs map[flakyscan.TestRef]Proof
}

// Outcome says what Publish did.
type Outcome struct {
	// Created, Commented and Unchanged are issue numbers.
	Created   []int
	Commented []int
	// Unchanged had an issue already listing every failed attempt.
	Unchanged []int
	// Deferred are the candidates (their first test) left for a later run
	// by the new-issue budget.
	Deferred []string
	// Issues is the issue of each candidate, by its index in the result's
	// Candidates (0: none, e.g. deferred); shorter when Publish stopped early.
	Issues []int
}

// Publish files or updates the issues for res's candidates, in rank order.
// It stops at the first API error, keeping what was done in the Outcome.
func Publish(ctx context.Context, c Client, res *flakyscan.Result, opt Options) (*Outcome, error) {
	out := &Outcome{}
	if opt.Owner == "" || opt.Repo == "" {
		return out, errors.New("flakyissue: owner and repository are required")
	}
	if res == nil || len(res.Candidates) == 0 {
		return out, nil // nothing found, nothing posted (not even a listing)
	}
	label := opt.Label
	if label == "" {
		label = DefaultLabel
	}
	budget := opt.MaxNewIssues
	if budget == 0 {
		budget = DefaultMaxNewIssues
	}
	issues, err := c.ListIssues(ctx, opt.Owner, opt.Repo, ghapi.IssueFilter{State: "all", Labels: []string{label}})
	if err != nil {
		return out, fmt.Errorf("flakyissue: %w", err)
	}
	// Only issues mini-agent opened (a bot's) can be found again: a person
	// pasting a marker must not capture the reports.
	var ours []ghapi.Issue
	for _, is := range issues {
		if is.AuthorType == "Bot" {
			ours = append(ours, is)
		}
	}
	for i, cand := range res.Candidates {
		out.Issues = append(out.Issues, 0)
		if len(cand.Tests) == 0 {
			continue
		}
		proof := proofOf(cand, opt.Proofs)
		is := find(ours, cand)
		if is == nil {
			if len(out.Created) >= budget {
				out.Deferred = append(out.Deferred, cand.Tests[0].Test)
				continue
			}
			created, err := c.CreateIssue(ctx, opt.Owner, opt.Repo, ghapi.NewIssue{
				Title: Title(cand), Body: clamp(Body(cand, res, proof)), Labels: []string{label}})
			if err != nil {
				return out, fmt.Errorf("flakyissue: %w", err)
			}
			out.Created = append(out.Created, created.Number)
			out.Issues[i] = created.Number
			if !slices.ContainsFunc(created.Labels, func(l string) bool { return strings.EqualFold(l, label) }) {
				// The issue cannot be found again through the label: every
				// later run would open a duplicate. Stop here.
				return out, fmt.Errorf("flakyissue: GitHub dropped the label %q from new issue #%d (the token needs permission to label issues); no more issues opened", label, created.Number)
			}
			// A later candidate sharing a test lands on this issue.
			created.Body = Body(cand, res, proof)
			created.AuthorType = "Bot"
			ours = append(ours, *created)
			continue
		}
		out.Issues[i] = is.Number
		seen := map[string]bool{}
		parseSeen(is.Body, seen)
		cs, err := c.ListComments(ctx, opt.Owner, opt.Repo, is.Number)
		if err != nil {
			return out, fmt.Errorf("flakyissue: %w", err)
		}
		for _, cm := range cs {
			if cm.AuthorType == "Bot" {
				parseSeen(cm.Body, seen)
			}
		}
		var fresh []flakyscan.Occurrence
		for _, o := range cand.Failures {
			if !seen[occKey(o)] {
				fresh = append(fresh, o)
			}
		}
		if len(fresh) == 0 {
			out.Unchanged = append(out.Unchanged, is.Number)
			continue
		}
		body := clamp(Comment(cand, res, proof, fresh))
		if _, err := c.CreateComment(ctx, opt.Owner, opt.Repo, is.Number, body); err != nil {
			return out, fmt.Errorf("flakyissue: %w", err)
		}
		out.Commented = append(out.Commented, is.Number)
		for k := range seenOf(fresh) {
			seen[k] = true
		}
		is.Body += "\n" + seenLine(seen) + "\n" // a later candidate on the same issue sees them
	}
	return out, nil
}

// find returns the lowest-numbered issue carrying a marker of one of c's
// tests, or nil.
func find(issues []ghapi.Issue, c flakyscan.Candidate) *ghapi.Issue {
	var best *ghapi.Issue
	for i := range issues {
		for _, t := range c.Tests {
			if issues[i].Carries(Marker(t)) && (best == nil || issues[i].Number < best.Number) {
				best = &issues[i]
			}
		}
	}
	return best
}

func proofOf(c flakyscan.Candidate, proofs map[flakyscan.TestRef]Proof) *Proof {
	for _, t := range c.Tests {
		if p, ok := proofs[t]; ok {
			return &p
		}
	}
	return nil
}

// clamp keeps a body under GitHub's limit, cutting evidence rows rather
// than the hidden lines at its end.
func clamp(body string) string {
	if len(body) <= ghapi.MaxCommentBytes {
		return body
	}
	i := strings.Index(body, "\n"+MarkerPrefix)
	if j := strings.Index(body, "\n"+seenPrefix); i < 0 || (j >= 0 && j < i) {
		i = j
	}
	tail := body[i:]
	note := "\n\n_…evidence cut to fit GitHub's limit._\n"
	cut := max(ghapi.MaxCommentBytes-len(tail)-len(note), 0)
	for cut > 0 && body[cut]&0xC0 == 0x80 {
		cut--
	}
	return body[:cut] + note + tail
}
