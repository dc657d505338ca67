package flakyjob

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/agent/provider"
	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/flaky/flakytest"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/shaproxy"
	"github.com/org/mini-agent/internal/testcmd"
)

const (
	testToken = "ghs_flakyjob_test_token_0123456789"
	testRepo  = "octo/app"
	fixtures  = "../flaky/testdata/fixtures"
)

// scene is a checkout of a real flaky module (a git repository), the same
// files in the fake GitHub, and a CI history over its tests.
type scene struct {
	s     *ghtest.Server
	gh    *ghapi.Client
	ws    string
	head  string
	now   time.Time
	model provider.Selected
}

// module lays out a workspace: dir → fixture copied there ("." for the
// root), plus extra files; one go.mod at the root.
func newScene(t *testing.T, layout map[string]string, extra map[string]string, h ghtest.FixtureHistory) *scene {
	t.Helper()
	ws := t.TempDir()
	for dir, fixture := range layout {
		src := flakytest.CopyModule(t, filepath.Join(fixtures, fixture))
		if err := os.CopyFS(filepath.Join(ws, dir), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		if dir != "." {
			os.Remove(filepath.Join(ws, dir, "go.mod"))
		}
	}
	for p, c := range extra {
		writeFile(t, filepath.Join(ws, p), c)
	}
	head, files := flakytest.Commit(t, ws)
	sc := &scene{ws: ws, head: head, now: time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)}
	sc.s = ghtest.NewServer(t, testToken)
	fake := sc.s.AddRepo(testRepo, "main", files)
	proxy := shaproxy.New(t, sc.s.URL)
	proxy.Alias(sc.head, fake)
	ghtest.SeedFixtureHistory(sc.s, testRepo, sc.now, h)
	var err error
	sc.gh, err = ghapi.New(t.Context(), ghapi.Options{Token: testToken, BaseURL: proxy.URL, WriteInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// script makes the scripted model apply the patches, one per fix attempt.
func (sc *scene) script(t *testing.T, patches ...string) {
	t.Helper()
	var b strings.Builder
	for _, p := range patches {
		step, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"name": "apply_patch", "arguments": map[string]string{"patch": p}}}})
		b.Write(step)
		b.WriteString("\n" + `{"message":"## Summary\nFixed the flaky test.\n\n## Root cause\nShared state between tests.\n\n## Assumptions\nnone"}` + "\n")
	}
	path := filepath.Join(t.TempDir(), "script.jsonl")
	writeFile(t, path, b.String())
	m, err := provider.Select(provider.Choice{Config: provider.Config{Provider: provider.ProviderScript, ScriptPath: path}})
	if err != nil {
		t.Fatal(err)
	}
	sc.model = m
}

func (sc *scene) job(t *testing.T, policy string) Job {
	t.Helper()
	cfg, err := config.Parse("mini-agent.yml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := testcmd.Parse("go test ./...")
	if err != nil {
		t.Fatal(err)
	}
	return Job{Owner: "octo", Repo: "app", DefaultBranch: "main", Workdir: sc.ws, Command: cmd, Config: cfg,
		Fix: pipeline.Job{Limits: agent.Limits{MaxSteps: 10, Timeout: 5 * time.Minute}, TestTimeout: 2 * time.Minute,
			Protected: cfg.ProtectedPaths(), Version: "v0.0.0-test"},
		Deps: pipeline.Deps{Model: sc.model}, OutDir: t.TempDir(), Trigger: "scheduled run (test)", End: sc.now, MinRuns: 8,
		Seed: 1} // reproducible orders: the order fixture's verdict does not depend on luck
}

func (sc *scene) run(t *testing.T, policy string) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	res, err := Run(ctx, sc.gh, sc.job(t, policy))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// writes counts the write requests the fake received.
func (sc *scene) writes() int {
	n := 0
	for _, r := range sc.s.Requests() {
		if r.Host == "api" && r.Method != "GET" && r.Method != "HEAD" {
			n++
		}
	}
	return n
}

func fixture(t *testing.T, name, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// orderSuite is the order fixture's suite as CI names it.
var orderSuite = []ghtest.GoPackage{{Path: "example.com/x", Tests: []ghtest.GoTest{{Name: "TestStartsEmpty"}, {Name: "TestRegister"}}}}
