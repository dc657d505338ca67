package tools

import (
	"slices"
	"testing"
)

func TestCommandFileDirs(t *testing.T) {
	t.Parallel()
	env := []string{"GITHUB_ENV=/r/_temp/_runner_file_commands/set_env_1", "GITHUB_PATH=/r/_temp/_runner_file_commands/add_path_1",
		"GITHUB_OUTPUT=relative/out", "RUNNER_TEMP=/r/_temp", "GITHUB_STEP_SUMMARY=/s/step_summary_1"}
	got := commandFileDirs(env)
	want := []string{"/r/_temp/_runner_file_commands", "/s"}
	if !slices.Equal(got, want) {
		t.Fatalf("commandFileDirs = %q, want %q", got, want)
	}
	if got := commandFileDirs([]string{"RUNNER_TEMP=/t"}); !slices.Equal(got, []string{"/t/_runner_file_commands"}) {
		t.Fatalf("from RUNNER_TEMP alone: %q", got)
	}
	if got := commandFileDirs(nil); len(got) != 0 {
		t.Fatalf("no runner: %q", got)
	}
}
