package action

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
	"github.com/org/mini-agent/internal/fakellm"
)

// newOutage is a model endpoint that is down (every request answered 503),
// closed when the test ends.
func newOutage(t *testing.T) *fakellm.Outage {
	t.Helper()
	o := fakellm.NewOutage()
	t.Cleanup(o.Close)
	return o
}

// addFailedRun adds a failed workflow run of the scene's head, with the
// real failing test log.
func addFailedRun(t *testing.T, sc *scene, id int64) {
	t.Helper()
	sc.s.AddRun(testRepo, ghtest.Run{ID: id, HeadBranch: "main", HeadSHA: sc.fake, Jobs: []ghtest.Job{
		{ID: 7001, Name: "test", FailedStep: "Run go test ./...", Log: sc.failingLog(t)},
	}})
}

// outageWhy is how a report names a model endpoint that stayed down.
var outageWhy = regexp.MustCompile(`^Not fixed: the model API failed after 4 attempts: openai api: status 503 server_error: ` + regexp.QuoteMeta(fakellm.OutageMessage))

func TestActionModelOutageLeadsTheJobSummary(t *testing.T) {
	t.Parallel()
	srv := newOutage(t)
	sc := newScene(t, "")
	addFailedRun(t, sc, 101)
	env, vars, stdout := sc.env(t, "workflow_run", workflowRunPayload(101, sc.head, "main", nil),
		map[string]string{"provider": "openai", "base-url": srv.BaseURL(), "model": "gpt-4.1"})
	if code := actionMain(t.Context(), env); code != 1 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if n := srv.Requests(); n != 4 {
		t.Errorf("%d model requests, want 4", n)
	}
	summary, err := os.ReadFile(vars["GITHUB_STEP_SUMMARY"])
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(summary), "\n\n")
	first, _, _ := strings.Cut(rest, "\n")
	if head != "## mini-agent: not-fixed" || !outageWhy.MatchString(strings.TrimPrefix(first, "**")) {
		t.Errorf("job summary starts\n%.500s", summary)
	}
	if !strings.Contains(string(summary), "<sub>Written by mini-agent "+testVersion+".</sub>") {
		t.Error("the job summary does not say which version wrote it")
	}
	if got := outputs(t, vars["GITHUB_OUTPUT"])["status"]; got != "not-fixed" {
		t.Errorf("status %q", got)
	}
}

// TestActionCostCapRefused: the action refuses a dollar budget on an
// unpriced model before any model call (exit 2, the job summary says why),
// and accepts it with the price-in/price-out inputs.
func TestActionCostCapRefused(t *testing.T) {
	t.Parallel()
	srv := newOutage(t)
	sc := newScene(t, "")
	addFailedRun(t, sc, 101)
	in := map[string]string{"provider": "openai", "base-url": srv.BaseURL(), "model": "llama3.1:8b", "max-cost-usd": "0.01"}
	env, vars, stdout := sc.env(t, "workflow_run", workflowRunPayload(101, sc.head, "main", nil), in)
	if code := actionMain(t.Context(), env); code != 2 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if n := srv.Requests(); n != 0 {
		t.Errorf("%d model requests before the refusal", n)
	}
	summary, _ := os.ReadFile(vars["GITHUB_STEP_SUMMARY"])
	if !strings.HasPrefix(string(summary), "## mini-agent: failed\n\n") || !strings.Contains(string(summary), `max-cost-usd 0.01: model "llama3.1:8b" has no known price`) ||
		!strings.Contains(string(summary), "the price-in and price-out inputs") {
		t.Errorf("job summary:\n%s", summary)
	}
	// The action's user set inputs, not flags: no CLI flag is named.
	if strings.Contains(string(summary), "--") {
		t.Errorf("the job summary names a CLI flag:\n%s", summary)
	}

	in["price-in"], in["price-out"] = "0.1", "0.2"
	env, _, stdout = sc.env(t, "workflow_run", workflowRunPayload(101, sc.head, "main", nil), in)
	if code := actionMain(t.Context(), env); code != 1 {
		t.Fatalf("with a price: exit %d\n%s", code, stdout)
	}
	if n := srv.Requests(); n != 4 {
		t.Errorf("with a price: %d model requests, want 4 (the endpoint is down)", n)
	}
}

// TestActionConfigErrorNamesTheInput: a job the pipeline refuses (here a
// failure-log input that does not exist) is a configuration error (exit 2)
// whose message names the action's input, not the CLI's flag.
func TestActionConfigErrorNamesTheInput(t *testing.T) {
	t.Parallel()
	sc := newScene(t, "")
	env, vars, stdout := sc.env(t, "push", map[string]any{"ref": "refs/heads/main", "after": sc.head,
		"repository": map[string]any{"full_name": testRepo, "name": "shop", "default_branch": "main"}},
		map[string]string{"failure-log": "no-such.log"})
	if code := actionMain(t.Context(), env); code != 2 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	summary, _ := os.ReadFile(vars["GITHUB_STEP_SUMMARY"])
	if !strings.Contains(string(summary), "the failure-log input: ") || !strings.Contains(string(summary), "no-such.log") ||
		strings.Contains(string(summary), "--failure-log") {
		t.Errorf("job summary:\n%s", summary)
	}
}

// TestActionModelRefusalLeadsTheJobSummary (issue 22): a model that
// refuses ends the action not-fixed with exit code 5, and the job summary
// opens with what it said.
func TestActionModelRefusalLeadsTheJobSummary(t *testing.T) {
	t.Parallel()
	srv, err := fakellm.New([]byte(`{"refusal":"I can't help with that request."}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	sc := newScene(t, "")
	addFailedRun(t, sc, 101)
	env, vars, stdout := sc.env(t, "workflow_run", workflowRunPayload(101, sc.head, "main", nil),
		map[string]string{"provider": "openai", "base-url": srv.BaseURL(), "model": "gpt-4.1"})
	if code := actionMain(t.Context(), env); code != 5 {
		t.Fatalf("exit %d, want 5\n%s", code, stdout)
	}
	summary, err := os.ReadFile(vars["GITHUB_STEP_SUMMARY"])
	if err != nil {
		t.Fatal(err)
	}
	if want := "## mini-agent: not-fixed\n\n**The model refused: I can't help with that request (after 1 turn)**\n\n"; !strings.HasPrefix(string(summary), want) {
		t.Errorf("job summary starts\n%.500s\nwant\n%s", summary, want)
	}
	if got := outputs(t, vars["GITHUB_OUTPUT"])["status"]; got != "not-fixed" {
		t.Errorf("status %q", got)
	}
}
