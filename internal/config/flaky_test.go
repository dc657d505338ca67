package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/flakyissue"
)

func intPtr(n int) *int { return &n }

// TestFlakyDefaults: without a flaky section the documented defaults
// apply, and an explicit 0 budget turns that output off.
func TestFlakyDefaults(t *testing.T) {
	t.Parallel()
	d := config.Default().Flaky
	want := config.Flaky{WindowDays: 14, Label: "flaky-test", MaxRuns: 40, MaxMinutes: 10}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if d.Fixes() != 3 || d.PRs() != 3 || d.Issues() != 5 || d.QuarantineFile != "" {
		t.Errorf("budgets %d/%d/%d, quarantine %q; want 3/3/5 and off", d.Fixes(), d.PRs(), d.Issues(), d.QuarantineFile)
	}
	if config.DefaultFlakyLabel != flakyissue.DefaultLabel || config.DefaultFlakyMaxIssues != flakyissue.DefaultMaxNewIssues {
		t.Error("config's flaky defaults drifted from internal/flakyissue's")
	}
	c, err := config.Parse("x.yml", []byte("flaky:\n  max-prs: 0\n  window-days: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Flaky.PRs() != 0 || c.Flaky.Fixes() != 3 || c.Flaky.WindowDays != 1 {
		t.Errorf("max-prs 0: %+v", c.Flaky)
	}
}

func TestFlakyErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ data, want string }{
		{"flaky: {window-days: 91}\n", "flaky.window-days: 91"},
		{"flaky: {window-days: -1}\n", "flaky.window-days: -1"},
		{"flaky: {max-fixes: -1}\n", "flaky.max-fixes: -1"},
		{"flaky: {max-prs: 51}\n", "flaky.max-prs: 51"},
		{"flaky: {max-issues: 1000}\n", "flaky.max-issues: 1000"},
		{"flaky: {max-runs: -3}\n", "flaky.max-runs: -3"},
		{"flaky: {max-minutes: 20000000}\n", "flaky.max-minutes"},
		{"flaky: {label: \" x\"}\n", "flaky.label"},
		{"flaky: {quarantine-file: ../x.txt}\n", "must be a clean file path"},
		{"flaky: {quarantine-file: /etc/x}\n", "must be a clean file path"},
		{"flaky: {quarantine-file: a/./b}\n", "must be a clean file path"},
		{"flaky: {quarantine-file: dir/}\n", "must be a clean file path"},
		{"flaky: {quarantine-file: .github/flaky.txt}\n", "is a protected path"},
		{"flaky: {quarantine-file: .GitHub/flaky.txt}\n", "is a protected path"},
		{"flaky: {quarantine-file: .git/info/x}\n", "is a protected path"},
		{"protected-paths: [\"ci/**\"]\nflaky: {quarantine-file: ci/q.txt}\n", "is a protected path"},
		{"flaky: {quarantine-file: \"a\\nb\"}\n", "not a usable path"},
		{"flaky: {window_days: 3}\n", `unknown key "window_days"`},
		{"flaky: {seed: -1}\n", "flaky.seed: -1"},
		{"flaky: {seed: x}\n", "line 1: cannot unmarshal"},
	} {
		_, err := config.Parse("inline.yml", []byte(tt.data))
		var ce *config.Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want a *config.Error with %q", tt.data, err, tt.want)
		}
	}
	for _, ok := range []string{"flaky: {quarantine-file: flaky-quarantine.txt}\n", "flaky: {window-days: 90, max-fixes: 0, max-issues: 50}\n", "flaky: {seed: 1}\n"} {
		if _, err := config.Parse("inline.yml", []byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}
