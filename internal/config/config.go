// Package config owns the repository's mini-agent policy file,
// `.github/mini-agent.yml`: its keys, their defaults and their validation.
// The file is read through the GitHub API from the default branch (see Load),
// so a pull request can never loosen the policy applied to itself.
//
// Job level: asked by the router and the publisher; imports only the GitHub client.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/org/mini-agent/internal/protect"
	"go.yaml.in/yaml/v3"
)

// DefaultPath is where the policy file lives in the repository.
const DefaultPath = ".github/mini-agent.yml"

// Defaults and bounds.
const (
	DefaultOffLabel      = "mini-agent:off"
	DefaultReadOnlyLabel = "mini-agent:read-only"
	DefaultPushLabel     = "mini-agent:push"
	DefaultBranchPrefix  = "mini-agent/"
	DefaultMaxFiles      = 20
	DefaultMaxLines      = 1000
	DefaultMaxAttempts   = 3

	// MaxFileBytes bounds the policy file; anything larger is refused.
	MaxFileBytes = 64 << 10
	// maxListItems bounds every list in the file.
	maxListItems = 100
	// MaxMinutes bounds a run's time limit (a week, past any runner's job
	// limit); larger values would overflow a time.Duration.
	MaxMinutes = 7 * 24 * 60
)

// On-failure behaviours: what publishing does with a run that did not end in
// a validated fix.
const (
	OnFailureComment = "comment"
	OnFailureDraft   = "draft"
)

// DefaultAssociations may run comment commands unless the file says otherwise.
var DefaultAssociations = []string{"OWNER", "MEMBER", "COLLABORATOR"}

// AllowableAssociations is the widest set the file may allow. Strangers
// (NONE, FIRST_TIMER, FIRST_TIME_CONTRIBUTOR, MANNEQUIN) can never command
// the agent, which is also what lets routing refuse them with no API call.
var AllowableAssociations = []string{"OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR"}

// Config is the parsed, validated policy.
type Config struct {
	Labels Labels `yaml:"labels"`
	// Protected are globs added to the default protected paths
	// (protect.Defaults); they never replace them.
	Protected []string `yaml:"protected-paths"`
	MaxDiff   MaxDiff  `yaml:"max-diff"`
	// Associations may run comment commands (author_association values).
	Associations []string `yaml:"allowed-associations"`
	// Bots are exact logins (e.g. "renovate[bot]") allowed to run commands.
	Bots []string `yaml:"allowed-bots"`
	// BranchPrefix starts every branch mini-agent creates; runs on such
	// branches are never fixed (loop guard).
	BranchPrefix string `yaml:"branch-prefix"`
	// Draft opens proposal PRs as drafts.
	Draft bool `yaml:"draft"`
	// Reviewers are requested on new PRs: logins, or "org/team-slug".
	Reviewers []string `yaml:"reviewers"`
	// MaxAttempts bounds runs for one failure signature.
	MaxAttempts int `yaml:"max-attempts"`
	// AllowForks lets mini-agent work on failures of fork heads (proposals
	// only: it never writes to a fork).
	AllowForks bool `yaml:"allow-forks"`
	// OnFailure is OnFailureComment or OnFailureDraft.
	OnFailure string `yaml:"on-failure"`
	// Defaults fill action inputs left empty.
	Defaults Defaults `yaml:"defaults"`
	// TestEnv names extra environment variables the test command keeps
	// (its environment is an allow-list; secret-looking names never pass).
	TestEnv []string `yaml:"test-env"`
	// TestWritable are extra absolute directories the test command may
	// write to under the Linux kernel sandbox.
	TestWritable []string `yaml:"test-writable"`
	// Flaky configures the scheduled flaky-test mode (`mode: flaky`).
	Flaky Flaky `yaml:"flaky"`
}

// Labels name the PR labels of the write policy.
type Labels struct {
	Off      string `yaml:"off"`
	ReadOnly string `yaml:"read-only"`
	Push     string `yaml:"push"`
}

// MaxDiff bounds a change mini-agent may publish.
type MaxDiff struct {
	Files int `yaml:"files"`
	Lines int `yaml:"lines"`
}

// Defaults are provider and budget defaults; action inputs win over them.
type Defaults struct {
	Provider    string  `yaml:"provider"`
	Model       string  `yaml:"model"`
	BaseURL     string  `yaml:"base-url"`
	MaxSteps    int     `yaml:"max-steps"`
	MaxMinutes  int     `yaml:"max-minutes"`
	MaxCostUSD  float64 `yaml:"max-cost-usd"`
	TestCommand string  `yaml:"test-command"`
	// PriceIn and PriceOut are the model's price in USD per million input
	// and output tokens, for a model the built-in table does not know (a
	// dollar budget on an unpriced model is refused). nil: not given.
	PriceIn  *float64 `yaml:"price-in"`
	PriceOut *float64 `yaml:"price-out"`
}

// MaxPrice bounds a price per million tokens.
const MaxPrice = 1e6

// Default returns the policy used when the repository has no file.
func Default() *Config {
	c := &Config{}
	c.fillDefaults()
	return c
}

func (c *Config) fillDefaults() {
	c.Labels.Off = or(c.Labels.Off, DefaultOffLabel)
	c.Labels.ReadOnly = or(c.Labels.ReadOnly, DefaultReadOnlyLabel)
	c.Labels.Push = or(c.Labels.Push, DefaultPushLabel)
	if c.MaxDiff.Files == 0 {
		c.MaxDiff.Files = DefaultMaxFiles
	}
	if c.MaxDiff.Lines == 0 {
		c.MaxDiff.Lines = DefaultMaxLines
	}
	if c.Associations == nil {
		c.Associations = slices.Clone(DefaultAssociations)
	}
	c.BranchPrefix = or(c.BranchPrefix, DefaultBranchPrefix)
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	c.OnFailure = or(c.OnFailure, OnFailureComment)
	c.Flaky.fillDefaults()
}

// ProtectedPaths is the default protected globs plus the file's.
func (c *Config) ProtectedPaths() []string {
	return append(protect.Defaults(), c.Protected...)
}

// ProtectedSet is the protected-path set the policy gives: the defaults,
// the file's globs and git's data. A parsed Config's globs are valid; a
// Config built by hand with a bad glob gets the error.
func (c *Config) ProtectedSet() (*protect.Set, error) {
	return protect.WithDefaults(c.Protected)
}

// AllowsAssociation reports whether a commenter with association a may run
// commands.
func (c *Config) AllowsAssociation(a string) bool {
	return slices.Contains(c.Associations, strings.ToUpper(a))
}

// AllowsBot reports whether bot login may run commands (exact match, case
// insensitive as GitHub logins are).
func (c *Config) AllowsBot(login string) bool {
	return slices.ContainsFunc(c.Bots, func(b string) bool { return strings.EqualFold(b, login) })
}

// Error is a configuration error: the file is wrong, and nothing ran.
type Error struct {
	// Path is the file's path in the repository.
	Path string
	// Problems lists what is wrong, one per key.
	Problems []string
}

func (e *Error) Error() string {
	return fmt.Sprintf("configuration %s: %s", e.Path, strings.Join(e.Problems, "; "))
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// Parse decodes and validates a policy file. name is used in messages. An
// empty document gives the defaults.
func Parse(name string, data []byte) (*Config, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{Path: name, Problems: []string{fmt.Sprintf("file is %d bytes, more than %d", len(data), MaxFileBytes)}}
	}
	c := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, &Error{Path: name, Problems: yamlProblems(err)}
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Error{Path: name, Problems: []string{"more than one YAML document"}}
	}
	if probs := c.validate(); len(probs) > 0 {
		return nil, &Error{Path: name, Problems: withKeyLines(data, probs)}
	}
	c.fillDefaults()
	return c, nil
}

var (
	loginRE  = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	botRE    = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\[bot\]$`)
	teamRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	prefixRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*/$`)
)

// validate checks values before defaults are filled (zero means "default").
func (c *Config) validate() []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }

	labels := map[string]string{}
	for _, l := range []struct{ key, val string }{{"labels.off", c.Labels.Off}, {"labels.read-only", c.Labels.ReadOnly}, {"labels.push", c.Labels.Push}} {
		if l.val == "" {
			continue
		}
		if strings.TrimSpace(l.val) != l.val || len(l.val) > 50 || strings.ContainsAny(l.val, ",\n") {
			add("%s: %q is not a usable label name", l.key, l.val)
		}
		if other, dup := labels[strings.ToLower(l.val)]; dup {
			add("%s: %q is also %s", l.key, l.val, other)
		}
		labels[strings.ToLower(l.val)] = l.key
	}
	for _, g := range c.Protected {
		if err := protect.Check(g); err != nil {
			add("protected-paths: %q: %v", g, err)
		}
	}
	for _, n := range c.TestEnv {
		if !envNameRE.MatchString(n) {
			add("test-env: %q is not an environment variable name", n)
		}
	}
	for _, d := range c.TestWritable {
		if !path.IsAbs(d) || path.Clean(d) != d || d == "/" {
			add("test-writable: %q must be a clean absolute directory other than /", d)
		}
	}
	if len(c.TestEnv) > maxListItems || len(c.TestWritable) > maxListItems {
		add("test-env, test-writable: at most %d entries each", maxListItems)
	}
	if c.MaxDiff.Files < 0 || c.MaxDiff.Lines < 0 {
		add("max-diff: files and lines must be positive")
	}
	for _, a := range c.Associations {
		if !slices.Contains(AllowableAssociations, a) {
			add("allowed-associations: %q is not one of %s", a, strings.Join(AllowableAssociations, ", "))
		}
	}
	if c.Associations != nil && len(c.Associations) == 0 {
		add("allowed-associations: empty (omit the key for the defaults, or set labels.off on PRs to disable)")
	}
	for _, b := range c.Bots {
		if !botRE.MatchString(b) {
			add("allowed-bots: %q is not an exact bot login such as \"renovate[bot]\" (no wildcards)", b)
		}
	}
	if c.BranchPrefix != "" && (!prefixRE.MatchString(c.BranchPrefix) || strings.Contains(c.BranchPrefix, "..") || strings.Contains(c.BranchPrefix, "//")) {
		add("branch-prefix: %q must be a branch-name prefix ending in \"/\", e.g. %q", c.BranchPrefix, DefaultBranchPrefix)
	}
	for _, r := range c.Reviewers {
		if !loginRE.MatchString(r) && !teamRE.MatchString(r) {
			add("reviewers: %q is neither a login nor \"org/team-slug\"", r)
		}
	}
	if c.MaxAttempts < 0 {
		add("max-attempts: must be positive")
	}
	switch c.OnFailure {
	case "", OnFailureComment, OnFailureDraft:
	default:
		add("on-failure: %q is not %q or %q", c.OnFailure, OnFailureComment, OnFailureDraft)
	}
	p = append(p, c.Defaults.validate()...)
	if set, err := protect.WithDefaults(c.Protected); err == nil {
		p = append(p, c.Flaky.validate(set)...)
	}
	for _, l := range [][]string{c.Protected, c.Associations, c.Bots, c.Reviewers} {
		if len(l) > maxListItems {
			add("a list has %d items, more than %d", len(l), maxListItems)
			break
		}
	}
	return p
}

func (d Defaults) validate() []string {
	var p []string
	switch d.Provider {
	case "", "openai", "anthropic", "script":
	default:
		p = append(p, fmt.Sprintf("defaults.provider: %q is not openai, anthropic or script", d.Provider))
	}
	if d.BaseURL != "" && !strings.HasPrefix(d.BaseURL, "https://") && !strings.HasPrefix(d.BaseURL, "http://") {
		p = append(p, fmt.Sprintf("defaults.base-url: %q is not an http(s) URL", d.BaseURL))
	}
	if d.MaxSteps < 0 || d.MaxMinutes < 0 || d.MaxCostUSD < 0 {
		p = append(p, "defaults: max-steps, max-minutes and max-cost-usd must be positive")
	}
	if d.MaxMinutes > MaxMinutes {
		p = append(p, fmt.Sprintf("defaults.max-minutes: %d is more than %d", d.MaxMinutes, MaxMinutes))
	}
	if math.IsNaN(d.MaxCostUSD) || math.IsInf(d.MaxCostUSD, 0) {
		p = append(p, "defaults.max-cost-usd: not a number of dollars (a NaN budget would never stop a run)")
	}
	if (d.PriceIn == nil) != (d.PriceOut == nil) {
		p = append(p, "defaults: price-in and price-out go together (USD per million input and output tokens)")
	}
	for i, v := range []*float64{d.PriceIn, d.PriceOut} {
		if v != nil && !(*v >= 0 && *v <= MaxPrice) { // NaN fails both
			p = append(p, fmt.Sprintf("defaults.%s: %v is not a price in USD per million tokens (0 to %g)",
				[]string{"price-in", "price-out"}[i], *v, float64(MaxPrice)))
		}
	}
	return p
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
