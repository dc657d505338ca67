package failure

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCIMachine(t *testing.T) {
	t.Parallel()
	// A job log as GitHub serves it: BOM, timestamps, groups, ANSI colours.
	log := "\ufeff2024-05-01T12:00:00.1234567Z Current runner version: '2.316.1'\n" +
		"2024-05-01T12:00:00.2469134Z ##[group]Operating System\n" +
		"2024-05-01T12:00:00.3703701Z Ubuntu\n" +
		"2024-05-01T12:00:00.4938268Z 22.04.4\n" +
		"2024-05-01T12:00:00.6172835Z LTS\n" +
		"2024-05-01T12:00:00.7407402Z ##[endgroup]\n" +
		"2024-05-01T12:00:00.8641969Z ##[group]Runner Image\n" +
		"2024-05-01T12:00:00.9876536Z Image: ubuntu-22.04\n" +
		"2024-05-01T12:00:01.1111103Z Version: 20240514.2.0\n" +
		"2024-05-01T12:00:01.2345670Z ##[endgroup]\n" +
		"2024-05-01T12:00:02.5925907Z ##[group]Run actions/setup-go@v5\n" +
		"2024-05-01T12:00:02.7160474Z with:\n" +
		"2024-05-01T12:00:02.8395041Z   go-version: 1.22\n" +
		"2024-05-01T12:00:03.0864175Z ##[endgroup]\n" +
		"2024-05-01T12:00:03.1000000Z go version go1.22.3 linux/amd64\n" +
		"2024-05-01T12:00:04.6913546Z ##[group]Run go test ./...\n" +
		"2024-05-01T12:00:04.8148113Z \x1b[36;1mgo test ./...\x1b[0m\n" +
		"2024-05-01T12:00:04.9382680Z shell: /usr/bin/bash -e {0}\n" +
		"2024-05-01T12:00:05.0000000Z env:\n" +
		"2024-05-01T12:00:05.0000001Z   GOFLAGS: -race\n" +
		"2024-05-01T12:00:05.0000002Z   API_TOKEN: ***\n" +
		"2024-05-01T12:00:05.0000003Z   GOFLAGS: -race\n" +
		"2024-05-01T12:00:05.0000004Z ##[endgroup]\n" +
		"2024-05-01T12:00:06.0000000Z   NOT_ENV: outside the env block\n" +
		"2024-05-01T12:00:06.1000000Z --- FAIL: TestAdd (0.00s)\n"
	dir := t.TempDir()
	p := filepath.Join(dir, "job.log")
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := CIMachine(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"runner: 2.316.1",
		"os: Ubuntu 22.04.4 LTS",
		"image: ubuntu-22.04 20240514.2.0",
		"go: go1.22.3 linux/amd64",
		"env set by its steps: GOFLAGS, API_TOKEN",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CIMachine (-want +got):\n%s", d)
	}
	for _, l := range got {
		if strings.Contains(l, "***") || strings.Contains(l, "-race") {
			t.Errorf("a value of an env block leaked: %q", l)
		}
	}
}

func TestCIMachineBoundsAndPlainLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.log")
	if err := os.WriteFile(plain, []byte("--- FAIL: TestAdd (0.00s)\n    add_test.go:9: got 3\nFAIL\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := CIMachine(plain)
	if err != nil || len(got) != 0 {
		t.Fatalf("a plain test log: %v, %v; want nothing", got, err)
	}

	var b strings.Builder
	b.WriteString("##[group]Runner Image\nImage: " + strings.Repeat("x", 500) + "\n##[endgroup]\n##[group]Run make\nenv:\n")
	for i := range 100 {
		b.WriteString("  V" + strings.Repeat("A", i%3) + string(rune('A'+i%26)) + string(rune('A'+i/26)) + ": 1\n")
	}
	b.WriteString("##[endgroup]\n")
	hostile := filepath.Join(dir, "hostile.log")
	if err := os.WriteFile(hostile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = CIMachine(hostile)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0]) > len("image: ")+maxMachineValue+len("…") {
		t.Fatalf("not bounded: %q", got)
	}
	if names := strings.Split(strings.TrimPrefix(got[1], "env set by its steps: "), ", "); len(names) != maxEnvNames+1 || names[maxEnvNames] != "…" {
		t.Fatalf("env names not capped at %d: %d", maxEnvNames, len(names))
	}
	if _, err := CIMachine(filepath.Join(dir, "missing.log")); err == nil {
		t.Fatal("a missing log gave no error")
	}
	if slices.Contains(got, "") {
		t.Fatal("empty line")
	}
}
