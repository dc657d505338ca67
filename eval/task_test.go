package eval

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// copyTask copies a bundled task into a fresh tasks directory and applies
// edit to its task.json (decoded as generic JSON). It returns the
// directory holding the task.
func copyTask(t *testing.T, name string, edit func(m map[string]any)) string {
	t.Helper()
	root := t.TempDir()
	sub, err := fs.Sub(Bundled(), name)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, name)
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		p := filepath.Join(dir, TaskFile)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		if data, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func expectOf(m map[string]any) map[string]any { return m["expect"].(map[string]any) }

func TestLoadTaskRejectsMalformedTasks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"unknown field", func(m map[string]any) { m["tset_command"] = "go test" }, `unknown field "tset_command"`},
		{"unknown nested field", func(m map[string]any) { expectOf(m)["stop"] = "x" }, `unknown field "stop"`},
		{"bad mode", func(m map[string]any) { m["mode"] = "refactor" }, `mode "refactor"`},
		{"policy disagrees with mode", func(m map[string]any) { m["policy"] = map[string]any{"kind": "workspace-write"} }, "an explain task runs under"},
		{"no test command", func(m map[string]any) { m["test_command"] = " " }, "test_command is empty"},
		{"unknown status", func(m map[string]any) { expectOf(m)["status"] = "done" }, `expect.status "done"`},
		{"unknown stop reason", func(m map[string]any) { expectOf(m)["stop_reason"] = "finished" }, `expect.stop_reason "finished"`},
		{"bad regexp", func(m map[string]any) { expectOf(m)["message_matches"] = []any{"(unclosed"} }, "message_matches"},
		{"unknown event type", func(m map[string]any) {
			expectOf(m)["events"] = []any{map[string]any{"type": "tool.finish"}}
		}, `type "tool.finish"`},
		{"canary without a value", func(m map[string]any) { expectOf(m)["canaries"] = []any{"GITHUB_TOKEN"} }, "GITHUB_TOKEN is not set in env"},
		{"failure log missing", func(m map[string]any) { m["failure_log"] = "nope.log" }, "failure_log"},
		{"path escapes the task", func(m map[string]any) { m["script"] = "../other/script.jsonl" }, "not a path inside the task directory"},
		{"bad duration", func(m map[string]any) { m["limits"] = map[string]any{"timeout": "soon"} }, "soon"},
		{"bad cancel event", func(m map[string]any) { m["cancel"] = map[string]any{"after_event": "tool.begin"} }, "cancel.after_event"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := copyTask(t, "01-explain-localize", c.edit)
			_, err := LoadTasks(os.DirFS(root))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "01-explain-localize") {
				t.Fatalf("error %v, want one naming the task and %q", err, c.want)
			}
		})
	}
}

func TestLoadTaskRejectsABadScript(t *testing.T) {
	t.Parallel()
	root := copyTask(t, "01-explain-localize", nil)
	p := filepath.Join(root, "01-explain-localize", DefaultScript)
	if err := os.WriteFile(p, []byte(`{"tool_calls":[{"name":"read_file","argumnets":{}}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTasks(os.DirFS(root)); err == nil || !strings.Contains(err.Error(), "script line 1") {
		t.Fatalf("error %v", err)
	}
}

func TestBundledTasksLoad(t *testing.T) {
	t.Parallel()
	tasks, err := LoadTasks(Bundled())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if _, err := fs.Stat(task.fsys, RepoDir+"/go.mod"); err == nil {
			t.Errorf("%s: a go.mod in the source tree makes a nested module; store it as %s", task.Name, GoModName)
		}
		if task.Mode == "fix" && task.Expect.Status == "fixed" && len(task.Hidden.FailToPass) == 0 {
			t.Errorf("%s: a fix task without fail_to_pass checks", task.Name)
		}
	}
}

func names(tasks []*Task) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.Name)
	}
	return out
}

func fakeTasks(n int) []*Task {
	var out []*Task
	for i := 0; i < n; i++ {
		out = append(out, &Task{Name: fmt.Sprintf("t%02d", i)})
	}
	return out
}

func TestSelect(t *testing.T) {
	t.Parallel()
	tasks := fakeTasks(7)
	cases := []struct {
		filter string
		shard  Shard
		want   []string
		err    string
	}{
		{"", Shard{}, names(tasks), ""},
		{"t03,t01,t03", Shard{}, []string{"t01", "t03"}, ""},
		{"^t0[0-2]$", Shard{}, []string{"t00", "t01", "t02"}, ""},
		{"t0", Shard{}, names(tasks), ""}, // not a name: a regexp
		{"nothing", Shard{}, nil, "matches no task"},
		{"t(", Shard{}, nil, "neither a list of task names nor a valid regexp"},
		{"", Shard{2, 3}, []string{"t01", "t04"}, ""},
		{"^t0[0-3]$", Shard{1, 2}, []string{"t00", "t02"}, ""},
		{"t00", Shard{2, 2}, nil, ""}, // an empty shard is fine
	}
	for _, c := range cases {
		got, err := Select(tasks, c.filter, c.shard)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Select(%q, %v) error %v, want %q", c.filter, c.shard, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Select(%q, %v): %v", c.filter, c.shard, err)
		} else if diff := cmp.Diff(c.want, names(got)); diff != "" {
			t.Errorf("Select(%q, %v) tasks (-want +got):\n%s", c.filter, c.shard, diff)
		}
	}
}

// Shards partition the tasks: every task in exactly one shard, whatever n.
func TestShardsPartition(t *testing.T) {
	t.Parallel()
	tasks := fakeTasks(13)
	for n := 1; n <= 15; n++ {
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			got, err := Select(tasks, "", Shard{i, n})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) > (len(tasks)+n-1)/n {
				t.Errorf("shard %d/%d has %d tasks: unbalanced", i, n, len(got))
			}
			for _, x := range got {
				seen[x.Name]++
			}
		}
		for _, x := range tasks {
			if seen[x.Name] != 1 {
				t.Errorf("n=%d: %s in %d shards", n, x.Name, seen[x.Name])
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	t.Parallel()
	if s, err := ParseShard("2/4"); err != nil || s != (Shard{2, 4}) {
		t.Errorf("2/4: %v %v", s, err)
	}
	for _, bad := range []string{"", "0/4", "5/4", "1/0", "a/b", "1", "1/2/3"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) succeeded", bad)
		}
	}
}

func TestLoadTasksFromAnyFS(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"README.md": {Data: []byte("not a task")}}
	if _, err := LoadTasks(fsys); err == nil || !strings.Contains(err.Error(), "no tasks found") {
		t.Fatalf("error %v", err)
	}
}
