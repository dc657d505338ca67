package testcmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// argFileWorkspace is a workspace holding "@args.txt" (what pytest would
// read as more arguments) and a pytest command over it.
func argFileWorkspace(t *testing.T) (Workspace, *Command) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "@args.txt"), []byte("-p\nevil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return openDir(t, dir), mustParse(t, "pytest")
}

// pytest (8.2+) reads "@file" arguments as more arguments, flags included:
// a narrowing entry may not start with '@' any more than with '-'.
func TestNarrowingRefusesArgumentFiles(t *testing.T) {
	t.Parallel()
	ws, cmd := argFileWorkspace(t)
	for _, c := range []struct{ tests, packages []string }{
		{packages: []string{"@args.txt"}},
		{tests: []string{"@args.txt::test_a"}},
	} {
		inv, err := cmd.Argv(ws, Selection{Tests: c.tests, Packages: c.packages}, Plain)
		if !errors.Is(err, ErrNarrowing) || !strings.Contains(err.Error(), "'@'") {
			t.Errorf("tests %q packages %q: %+v, err %v; want a refusal naming '@'", c.tests, c.packages, inv, err)
		}
	}
}

// "./@file" is the way to name such a path: it must reach the runner with
// its "./", not cleaned back into an argument file.
func TestNarrowingKeepsDotSlashBeforeAt(t *testing.T) {
	t.Parallel()
	ws, cmd := argFileWorkspace(t)
	for _, c := range []struct{ tests, packages []string }{
		{packages: []string{"./@args.txt"}},
		{tests: []string{"./@args.txt::test_a"}},
	} {
		inv, err := cmd.Argv(ws, Selection{Tests: c.tests, Packages: c.packages}, Plain)
		if err != nil {
			t.Fatalf("tests %q packages %q: %v", c.tests, c.packages, err)
		}
		for _, a := range inv.Argv {
			if strings.HasPrefix(a, "@") {
				t.Errorf("argv %q holds an argument file", inv.Argv)
			}
		}
	}
}

// checkFinalArgv is the last line of defence: whatever a mapping does, a
// word the model contributed cannot start with '-' or '@'.
func TestCheckFinalArgv(t *testing.T) {
	t.Parallel()
	cmd := []string{"go", "test", "-v", "./..."}
	for _, argv := range [][]string{
		{"go", "test", "-v", "-exec=x"},
		{"go", "test", "-v", "-run", "^(A)$", "--toolexec", "x"},
		{"pytest", "@args"},
	} {
		if err := checkFinalArgv(cmd, argv); err == nil {
			t.Errorf("checkFinalArgv(%q) accepted a model flag", argv)
		}
	}
	if err := checkFinalArgv(cmd, []string{"go", "test", "-v", "-run", "^(A)$", "./pkg", "--", "x"}); err != nil {
		t.Errorf("an ordinary narrowing was refused: %v", err)
	}
}

// lyingWorkspace resolves every path outside itself, as a broken Workspace
// might: argv building does not pass that on.
type lyingWorkspace struct{ Workspace }

func (lyingWorkspace) Resolve(p string) (string, error) { return "../../etc", nil }

func TestNarrowingDoesNotTrustAResolvedPathOutside(t *testing.T) {
	t.Parallel()
	ws := lyingWorkspace{mappingWorkspace(t)}
	for _, line := range []string{"go test ./...", "pytest", "npx jest"} {
		inv, err := mustParse(t, line).Argv(ws, Selection{Packages: []string{"pkg"}}, Plain)
		if !errors.Is(err, ErrNarrowing) || !strings.Contains(err.Error(), "outside the workspace") {
			t.Errorf("%s: %+v, err %v; want a refusal", line, inv, err)
		}
	}
}
