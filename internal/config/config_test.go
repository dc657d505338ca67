package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/config"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseFull(t *testing.T) {
	t.Parallel()
	c, err := config.Parse("full.yml", read(t, "full.yml"))
	if err != nil {
		t.Fatal(err)
	}
	want := &config.Config{
		Labels:       config.Labels{Off: "bot:off", ReadOnly: "bot:explain-only", Push: "bot:may-push"},
		Protected:    []string{"migrations/**", "**/*.pem"},
		MaxDiff:      config.MaxDiff{Files: 5, Lines: 200},
		Associations: []string{"OWNER", "MEMBER"},
		Bots:         []string{"renovate[bot]"},
		BranchPrefix: "bots/fixer/",
		Draft:        true,
		Reviewers:    []string{"alice", "octo-org/platform"},
		MaxAttempts:  2,
		AllowForks:   true,
		OnFailure:    config.OnFailureDraft,
		Defaults: config.Defaults{Provider: "anthropic", Model: "claude-sonnet-4-5", BaseURL: "https://llm.example.com/v1",
			MaxSteps: 12, MaxMinutes: 15, MaxCostUSD: 1.5, TestCommand: "make test", PriceIn: ptr(0.5), PriceOut: ptr(1.5)},
		TestEnv:      []string{"DATABASE_URL", "APP_MODE"},
		TestWritable: []string{"/var/cache/app"},
		Flaky: config.Flaky{WindowDays: 30, MaxFixes: intPtr(1), MaxPRs: intPtr(0), MaxIssues: intPtr(2), Label: "flake",
			QuarantineFile: "ci/flaky-quarantine.txt", MaxRuns: 60, MaxMinutes: 20, Seed: 7},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{".github/**", "**/.env", "**/.env.*", "migrations/**", "**/*.pem"}, c.ProtectedPaths()); diff != "" {
		t.Errorf("ProtectedPaths (-want +got):\n%s\nthe file's globs must add to the defaults, never replace them", diff)
	}
	if c.AllowsAssociation("COLLABORATOR") || !c.AllowsAssociation("member") {
		t.Error("AllowsAssociation does not follow the file")
	}
	if !c.AllowsBot("Renovate[bot]") || c.AllowsBot("renovate") || c.AllowsBot("evil-renovate[bot]") {
		t.Error("AllowsBot must match exact logins only")
	}
}

func TestParseDefaults(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"empty.yml", ""} {
		var data []byte
		if name != "" {
			data = read(t, name)
		}
		c, err := config.Parse("x.yml", data)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if diff := cmp.Diff(config.Default(), c); diff != "" {
			t.Errorf("%q: Parse differs from the defaults (-want +got):\n%s", name, diff)
		}
	}
	d := config.Default()
	if d.Labels != (config.Labels{Off: "mini-agent:off", ReadOnly: "mini-agent:read-only", Push: "mini-agent:push"}) ||
		d.BranchPrefix != "mini-agent/" || d.OnFailure != "comment" || d.Draft ||
		!cmp.Equal(d.Associations, []string{"OWNER", "MEMBER", "COLLABORATOR"}) || d.AllowForks ||
		!cmp.Equal(d.ProtectedPaths(), []string{".github/**", "**/.env", "**/.env.*"}) {
		t.Errorf("defaults = %+v", d)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		data string
		want []string // substrings of the error
	}{
		{file: "unknown_key.yml", want: []string{"unknown_key.yml", `line 3: unknown key "max_diff"`}},
		{file: "wrong_type.yml", want: []string{"line 2", "many"}},
		{file: "bad_values.yml", want: []string{
			`labels.push: "mini-agent:off" is also labels.off`,
			`allowed-associations: "NONE" is not one of`,
			`allowed-bots: "*[bot]"`, `allowed-bots: "dependabot"`,
			`branch-prefix: "no-slash"`, `on-failure: "ignore"`, "max-attempts: must be positive",
			`protected-paths: "[unclosed"`, `defaults.provider: "gpt"`,
		}},
		{data: "labels: [a, b]\n", want: []string{"cannot unmarshal"}},
		{data: "a: 1\n---\nb: 2\n", want: []string{"unknown key \"a\""}},
		{data: "draft: true\n---\ndraft: false\n", want: []string{"more than one YAML document"}},
		{data: "allowed-associations: []\n", want: []string{"allowed-associations: empty"}},
		{data: "reviewers: [\"a b\"]\n", want: []string{"reviewers"}},
		{data: "defaults: {base-url: ftp://x}\n", want: []string{"defaults.base-url"}},
		{data: "defaults: {max-cost-usd: .nan}\n", want: []string{"max-cost-usd"}},
		{data: "defaults: {max-cost-usd: .inf}\n", want: []string{"max-cost-usd"}},
		{data: "defaults: {max-minutes: 200000000}\n", want: []string{"max-minutes"}},
		{data: "defaults: {price-in: 1}\n", want: []string{"price-in and price-out go together"}},
		{data: "defaults: {price-out: 1}\n", want: []string{"price-in and price-out go together"}},
		{data: "defaults: {price-in: -1, price-out: 2}\n", want: []string{"defaults.price-in: -1"}},
		{data: "defaults: {price-in: 1, price-out: .nan}\n", want: []string{"defaults.price-out: NaN"}},
		{data: "defaults: {price-in: 1, price-out: .inf}\n", want: []string{"defaults.price-out: +Inf"}},
		{data: strings.Repeat("#", config.MaxFileBytes+1), want: []string{"more than"}},
		{data: "test-env: [\"A=B\"]\n", want: []string{`test-env: "A=B" is not an environment variable name`}},
		{data: "test-env: [\"-x\"]\n", want: []string{`test-env: "-x"`}},
		{data: "test-writable: [relative/dir]\n", want: []string{`test-writable: "relative/dir" must be a clean absolute directory`}},
		{data: "test-writable: [/]\n", want: []string{`test-writable: "/"`}},
		{data: "test-writable: [/a/../etc]\n", want: []string{`test-writable: "/a/../etc"`}},
	}
	for _, tt := range tests {
		data := []byte(tt.data)
		name := "inline.yml"
		if tt.file != "" {
			data, name = read(t, tt.file), tt.file
		}
		_, err := config.Parse(name, data)
		var ce *config.Error
		if !errors.As(err, &ce) {
			t.Errorf("%s %q: err = %v, want *config.Error", tt.file, tt.data, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %.30q: error %q lacks %q", tt.file, tt.data, err, w)
			}
		}
	}
}

func TestLoadReadsTheDefaultBranchOnly(t *testing.T) {
	t.Parallel()
	const token = "ghs_config_test"
	s := ghtest.NewServer(t, token)
	s.AddRepo("octo/app", "trunk", map[string]string{config.DefaultPath: "max-attempts: 7\n"})
	// A PR branch that tries to loosen the policy.
	s.Push("octo/app", "feature", map[string]string{config.DefaultPath: "max-attempts: 99\nallow-forks: true\n"})
	s.AddRepo("octo/bare", "main", map[string]string{"README.md": "hi\n"})
	s.AddRepo("octo/broken", "main", map[string]string{config.DefaultPath: "nope: 1\n"})
	c, err := ghapi.New(t.Context(), ghapi.Options{Token: token, BaseURL: s.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	l, err := config.Load(ctx, c, "octo", "app", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if l.MaxAttempts != 7 || l.AllowForks || l.DefaultBranch != "trunk" || l.Origin != ".github/mini-agent.yml on trunk" {
		t.Errorf("Load = %+v (origin %q)", l.Config, l.Origin)
	}
	var refs []string
	for _, r := range s.Requests() {
		if strings.Contains(r.Path, "/contents/") {
			refs = append(refs, r.Query.Get("ref"))
		}
	}
	if diff := cmp.Diff([]string{"trunk"}, refs); diff != "" {
		t.Errorf("contents read at other refs than the default branch (-want +got):\n%s", diff)
	}

	before := len(s.Requests())
	l, err = config.Load(ctx, c, "octo", "bare", "main", "")
	if err != nil || !strings.HasPrefix(l.Origin, "defaults") {
		t.Errorf("missing file: %+v, %v; want the defaults", l, err)
	} else if diff := cmp.Diff(config.Default(), l.Config); diff != "" {
		t.Errorf("missing file: config differs from the defaults (-want +got):\n%s", diff)
	}
	if n := len(s.Requests()) - before; n != 1 {
		t.Errorf("a known default branch should cost 1 request, got %d", n)
	}

	if _, err := config.Load(ctx, c, "octo", "broken", "main", ""); err == nil || !strings.Contains(err.Error(), `unknown key "nope"`) {
		t.Errorf("bad file: err = %v", err)
	}
	if _, err := config.Load(ctx, c, "octo", "nosuch", "", ""); err == nil || !errors.Is(err, ghapi.ErrNotFound) {
		t.Errorf("missing repository: err = %v, want a not-found error (not silent defaults)", err)
	}
	if _, err := config.Load(ctx, c, "octo", "app", "trunk", "../secrets.yml"); err == nil {
		t.Error("a config path outside the repository was accepted")
	}
}

func ptr(f float64) *float64 { return &f }

// The policy's protected set is the defaults plus the file's globs, matched
// ignoring case, with git's data always in; a bad glob in a Config built by
// hand is an error, never a glob that silently protects nothing.
func TestProtectedSet(t *testing.T) {
	t.Parallel()
	c, err := config.Parse("p.yml", []byte("protected-paths: [\"migrations/**\", \"**/*.pem\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := c.ProtectedSet()
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"Migrations/001.sql": "migrations/**", "certs/KEY.PEM": "**/*.pem",
		".GITHUB/workflows/x.yml": ".github/**", ".GIT/hooks/x": ".git/**", "main.go": "",
	} {
		if g, ok := set.Match(p); g != want || ok != (want != "") {
			t.Errorf("Match(%q) = %q, %v; want %q", p, g, ok, want)
		}
	}
	bad := config.Default()
	bad.Protected = []string{"ok/**", "[unclosed"}
	if _, err := bad.ProtectedSet(); err == nil || !strings.Contains(err.Error(), "[unclosed") {
		t.Errorf("ProtectedSet with a bad glob = %v", err)
	}
}

// TestParseErrorLines: every problem names the line an editor shows (1-based),
// whether the YAML scanner, the YAML parser, the decoder or the validation
// found it. (go.yaml.in/yaml/v3 prints its parser's lines 0-based, and none
// at all on the first line.)
func TestParseErrorLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, data, want string
	}{
		{"parser: a list item among keys", "max-attempts: 3\ndraft: true\n- oops\n", "line 3: did not find expected key"},
		{"parser: an unclosed flow mapping", "max-attempts: 3\nmax-diff: {files: 2\ndraft: true\n", "line 2: did not find expected ',' or '}'"},
		{"parser: on the first line", "- a\nb: 1\n", "line 2: did not find expected '-' indicator"},
		{"scanner: bad indentation", "max-attempts: 3\n  draft: true\n", "line 2: mapping values are not allowed in this context"},
		{"scanner: on the first line", "draft: true: false\n", "line 1: mapping values are not allowed in this context"},
		{"scanner: a tab", "draft: true\n\tmax-attempts: 3\n", "line 2: found a tab character that violates indentation"},
		{"decoder: unknown key", "draft: true\n\nmax_attempts: 3\n", `line 3: unknown key "max_attempts"`},
		{"decoder: wrong type", "draft: true\nmax-attempts: many\n", "line 2: cannot unmarshal"},
		{"validation: top-level key", "draft: true\n\nreviewers: [\"a b\"]\n", `line 3: reviewers: "a b" is neither`},
		{"validation: nested key", "draft: true\ndefaults:\n  model: x\n  provider: gpt\n", `line 4: defaults.provider: "gpt"`},
		{"validation: flaky key", "flaky:\n  window-days: 400\n", "line 2: flaky.window-days: 400"},
	} {
		_, err := config.Parse("p.yml", []byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}
