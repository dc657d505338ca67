package action

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
)

// The action's outputs live in RUNNER_TEMP, outside the workspace. Here
// RUNNER_TEMP is in the temp dir, which the sandboxed test code may write
// to (on a runner it is not): the test code finds it in its environment and
// plants symlinks at the bundle and trace paths, to files outside. The
// action writes through neither, warns, leaves the outputs empty, and still
// publishes the fix it holds in memory.
func TestActionNeverWritesOutputsThroughPlantedLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	rt, outside := t.TempDir(), t.TempDir()
	victims := map[string]string{}
	var plant strings.Builder
	fmt.Fprintf(&plant, "package cart\n\nimport (\n\t\"os\"\n\t\"path/filepath\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n"+
		"\tif rt := os.Getenv(\"RUNNER_TEMP\"); rt == %q {\n", rt)
	for _, name := range []string{"bundle.json", "trace.jsonl"} {
		victims[name] = filepath.Join(outside, name)
		writeFile(t, victims[name], "victim\n")
		fmt.Fprintf(&plant, "\t\tos.Remove(filepath.Join(rt, \"mini-agent\", %q))\n\t\tos.Symlink(%q, filepath.Join(rt, \"mini-agent\", %q))\n",
			name, victims[name], name)
	}
	plant.WriteString("\t}\n\tos.Exit(m.Run())\n}\n")
	sc := newSceneWith(t, "", map[string]string{"plant_test.go": plant.String()})
	sc.s.AddRun(testRepo, ghtest.Run{ID: 101, HeadBranch: "main", HeadSHA: sc.fake, Jobs: []ghtest.Job{
		{ID: 7001, Name: "test", FailedStep: "Run go test ./...", Log: sc.failingLog(t)},
	}})
	env, vars, stdout := sc.env(t, "workflow_run", workflowRunPayload(101, sc.head, "main", nil), nil)
	vars["RUNNER_TEMP"] = rt
	for i, kv := range env.Environ {
		if strings.HasPrefix(kv, "RUNNER_TEMP=") {
			env.Environ[i] = "RUNNER_TEMP=" + rt
		}
	}
	code := actionMain(t.Context(), env)

	for name, v := range victims {
		if data, _ := os.ReadFile(v); string(data) != "victim\n" {
			t.Errorf("%s: the file outside was written through the link: %q", name, data)
		}
		if fi, err := os.Lstat(filepath.Join(rt, "mini-agent", name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: no link was planted (the test proves nothing): %v", name, err)
		}
	}
	log := stdout.String()
	for _, want := range []string{
		"::warning::an output could not be written: trace: " + filepath.Join(rt, "mini-agent", "trace.jsonl") + " was replaced while mini-agent wrote it (by a symbolic link)",
		"write bundle: " + filepath.Join(rt, "mini-agent", "bundle.json") + " is a symbolic link: mini-agent does not write through links",
		"::warning::output bundle left empty: ", "::warning::output trace left empty: ",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
	out := outputs(t, vars["GITHUB_OUTPUT"])
	if out["bundle"] != "" || out["trace"] != "" {
		t.Errorf("outputs name the planted links: bundle=%q trace=%q", out["bundle"], out["trace"])
	}
	if code != 0 || out["status"] != "fixed" || len(sc.s.Pulls(testRepo)) != 1 {
		t.Errorf("exit %d, status %q, %d PRs: the fix was not published\n%s", code, out["status"], len(sc.s.Pulls(testRepo)), log)
	}
}
