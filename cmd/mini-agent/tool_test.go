package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestToolCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	ws := workspace(t)
	os.MkdirAll(filepath.Join(ws, ".github/workflows"), 0o755)
	os.WriteFile(filepath.Join(ws, ".github/workflows/ci.yml"), []byte("name: ci\n"), 0o644)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"read ok", []string{"read_file", "--workdir", ws, `{"path":"cart.go","start_line":12,"end_line":14}`}, 0, "func Total"},
		{"escape refused", []string{"read_file", "--workdir", ws, `{"path":"../../etc/passwd"}`}, 1, ".."},
		{"git refused", []string{"read_file", "--workdir", ws, `{"path":".git/config"}`}, 1, ".git"},
		{"schema violation", []string{"read_file", "--workdir", ws, `{"path":3}`}, 1, "INVALID_ARGUMENT"},
		{"search", []string{"search", "--workdir", ws, `{"query":"Price \\*"}`}, 0, "cart.go:15:"},
		{"bad regex", []string{"search", "--workdir", ws, `{"query":"(unclosed"}`}, 1, "missing closing )"},
		{"protected write", []string{"apply_patch", "--workdir", ws,
			`{"patch":"--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n@@ -1 +1 @@\n-name: ci\n+name: x\n"}`}, 1, "Denied by policy"},
		{"run_test narrowed", []string{"run_test", "--workdir", ws, "--test-command", "go test ./...", `{"tests":["TestTotalEmpty"]}`}, 0, "exit_code: 0"},
		{"run_test failing", []string{"run_test", "--workdir", ws, "--test-command", "go test ./...", `{}`}, 1, "TestTotal"},
		{"hostile narrowing", []string{"run_test", "--workdir", ws, "--test-command", "go test ./...", `{"tests":["-exec=sh"]}`}, 1, "INVALID_ARGUMENT"},
		{"unknown tool", []string{"rm_rf", "--workdir", ws, `{}`}, 2, "unknown tool"},
		{"run_test without command", []string{"run_test", "--workdir", ws, `{}`}, 2, "--test-command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runBinary(t, context.Background(), nil, append([]string{"tool"}, c.args...)...)
			if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.want) {
				t.Fatalf("exit %d (want %d), want %q in:\n%s\n%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
		})
	}
	ci, _ := os.ReadFile(filepath.Join(ws, ".github/workflows/ci.yml"))
	if string(ci) != "name: ci\n" {
		t.Fatal("protected file changed")
	}
}
