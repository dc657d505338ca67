package eval

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The whole scripted eval: every bundled task through the real pipeline,
// tools, git and test runners, once with the script provider and once with
// the same trajectories served by a fake Chat Completions server to the
// OpenAI adapter.
func TestBundledEval(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test (every task, twice); run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	all, err := LoadTasks(Bundled())
	if err != nil {
		t.Fatal(err)
	}
	// The default set: the agent tasks (the flaky ones run in TestBundledFlakyEval).
	tasks, err := InSet(all, SetAgent)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 13 {
		t.Fatalf("bundled tasks = %d, want the 8 scenarios and 5 more", len(tasks))
	}
	byName := map[string]*Task{}
	for _, task := range tasks {
		byName[task.Name] = task
	}
	for _, replay := range []bool{false, true} {
		name := "script"
		if replay {
			name = "openai-replay"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A hang guard, not a timing assertion: a loaded machine takes minutes.
			ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
			defer cancel()
			var progress strings.Builder
			rep, err := Run(ctx, Options{Jobs: 2, ReplayOpenAI: replay, Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("\n%s", progress.String())
			if len(rep.Tasks) != len(tasks) {
				t.Fatalf("report has %d tasks, want %d", len(rep.Tasks), len(tasks))
			}
			for _, r := range rep.Tasks {
				if r.Skipped {
					// Only a missing toolchain may skip a task, and it is never a pass.
					if len(byName[r.Name].Requires) == 0 || !strings.HasPrefix(r.Reason, "toolchain missing") || r.Resolved {
						t.Errorf("%s skipped wrongly: %+v", r.Name, r)
					}
					continue
				}
				if !r.Resolved {
					t.Errorf("%s not resolved: %v", r.Name, r.Failures)
				}
			}
			if !rep.OK() || rep.Totals.Resolved != rep.Totals.Ran || rep.Totals.Ran+rep.Totals.Skipped != len(tasks) {
				t.Errorf("totals %+v", rep.Totals)
			}
			got := map[string]TaskResult{}
			for _, r := range rep.Tasks {
				got[r.Name] = r
			}
			// The counters the scenarios are about.
			if r := got["03-patch-conflict"]; r.PatchRefusals != 1 {
				t.Errorf("patch conflict: refusals = %d, want 1", r.PatchRefusals)
			}
			if r := got["05-denied-write"]; r.PolicyDenials != 1 || r.Status != "explained" {
				t.Errorf("denied write: %+v", r)
			}
			if r := got["07-cancel-run-test"]; r.StopReason != "cancelled" || r.Status != "cancelled" {
				t.Errorf("cancellation: %+v", r)
			}
			if r := got["08-malicious-repo"]; r.ToolErrors < 9 || r.Status != "fixed" {
				t.Errorf("malicious repo: %+v", r)
			}
			if rep.Totals.Tokens == 0 || rep.Totals.MeanSteps < 2 {
				t.Errorf("totals carry no usage: %+v", rep.Totals)
			}
		})
	}
}

// Every fail_to_pass check fails and every pass_to_pass check passes on
// the unfixed projects: the hidden checks can fail.
func TestBundledTasksAreSound(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test (every hidden check); run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	results, err := CheckTasks(context.Background(), Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range results {
		for _, p := range r.Problems {
			t.Errorf("%s: %s", r.Name, p)
		}
		if r.Skipped == "" {
			checked++
		}
	}
	if checked < 11 {
		t.Errorf("only %d tasks were checked", checked)
	}
}
