package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/eval"
)

// The eval command end to end through the built binary: run, shard, merge,
// exit codes. Only fast tasks are used; eval's own tests run them all.
func TestEvalCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	ctx := context.Background()

	r := runBinary(t, ctx, nil, "eval", "--tasks", "01-explain-localize,05-denied-write", "--json", out("all.json"),
		"--artifacts", out("artifacts"))
	if r.code != 0 || !strings.Contains(r.stdout, "| 01-explain-localize | yes | final_message |") ||
		!strings.Contains(r.stdout, "**2/2 (100%)**") || !strings.Contains(r.stderr, "PASS 05-denied-write") {
		t.Fatalf("eval: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rep, err := eval.ReadReport(out("all.json"))
	if err != nil || len(rep.Tasks) != 2 || rep.Totals.Resolved != 2 {
		t.Fatalf("report %+v %v", rep, err)
	}
	if _, err := os.Stat(out("artifacts/05-denied-write/bundle.json")); err != nil {
		t.Errorf("artifacts not kept: %v", err)
	}

	// Two shards cover the two tasks once each; merging gives the whole.
	for _, s := range []string{"1", "2"} {
		r := runBinary(t, ctx, nil, "eval", "--tasks", "^0[15]-", "--shard", s+"/2", "--json", out("shard-"+s+".json"))
		if r.code != 0 || strings.Count(r.stdout, "| yes |") != 1 || !strings.Contains(r.stdout, "(shard "+s+"/2)") {
			t.Fatalf("shard %s: exit %d\n%s\n%s", s, r.code, r.stdout, r.stderr)
		}
	}
	r = runBinary(t, ctx, nil, "eval", "merge", "--json", out("merged.json"), out("shard-1.json"), out("shard-2.json"))
	if r.code != 0 || !strings.Contains(r.stdout, "**2/2 (100%)**") {
		t.Fatalf("merge: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	merged, err := eval.ReadReport(out("merged.json"))
	if err != nil || merged.Tasks[0].Name != "01-explain-localize" || merged.Tasks[1].Name != "05-denied-write" {
		t.Fatalf("merged %+v %v", merged, err)
	}
	if r := runBinary(t, ctx, nil, "eval", "merge", out("shard-1.json"), out("shard-1.json")); r.code != 2 {
		t.Errorf("overlapping shards merged: exit %d", r.code)
	}
}

func TestEvalCommandFailsAnUnresolvedTask(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	root := t.TempDir()
	sub, err := fs.Sub(eval.Bundled(), "01-explain-localize")
	if err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(root, "wrong-line")
	if err := os.CopyFS(task, sub); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(task, "task.json")
	data, _ := os.ReadFile(p)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["expect"].(map[string]any)["message_matches"] = []any{`discount\.go:99\b`}
	data, _ = json.Marshal(m)
	os.WriteFile(p, data, 0o644)
	r := runBinary(t, context.Background(), nil, "eval", "--tasks-dir", root)
	if r.code != 1 || !strings.Contains(r.stdout, "| wrong-line | **no** |") || !strings.Contains(r.stderr, "final message does not match") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestEvalCommandUsage(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	ctx := context.Background()
	for _, args := range [][]string{
		{"eval", "--shard", "3/2"},
		{"eval", "--tasks", "no-such-task-anywhere"},
		{"eval", "--tasks-dir", "/nonexistent"},
		{"eval", "extra"},
		{"eval", "merge"},
		{"eval", "--provider", "openai", "--replay-openai"},
	} {
		if r := runBinary(t, ctx, nil, args...); r.code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
	r := runBinary(t, ctx, nil, "eval", "--check-tasks", "--tasks", "02-fix-single-file")
	if r.code != 0 || !strings.Contains(r.stdout, "ok   02-fix-single-file") {
		t.Errorf("check-tasks: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestEvalSetAndSourceFlags: a bad --set, --source or --timeout is a usage
// error naming the flag, before any task runs; a flaky task whose fixture
// is not under --source is not resolved (exit 1), with the flaky table.
func TestEvalSetAndSourceFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--set", "flakey"}, `--set "flakey": want one of agent, flaky, all`},
		{[]string{"eval", "--set", "flaky", "--source", filepath.Join(dir, "none")}, "--source " + filepath.Join(dir, "none") + " is not a directory"},
		{[]string{"eval", "--timeout", "-1s"}, "--timeout -1s is negative"},
		{[]string{"eval", "--tasks", "14-flaky-order"}, "in the agent set; --set all selects from every task"},
	} {
		code, out, errOut := run(t, c.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) || !strings.HasPrefix(errOut, "mini-agent eval: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, out, errOut, c.want)
		}
	}
	code, out, errOut := run(t, "eval", "--set", "flaky", "--tasks", "14-flaky-order", "--source", dir)
	if code != 1 || !strings.Contains(out, "| 14-flaky-order | **no** |") || !strings.Contains(out, "#### Flaky tasks") ||
		!strings.Contains(errOut, "setup: fixture internal/flaky/testdata/fixtures/order is not a directory of the source tree") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
