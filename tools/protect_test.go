package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/protect"
)

// The workspace's write path asks the protected-path set: whatever the
// case, a patch to the workflows folder or to git's data changes nothing.
func TestApplyPatchProtectedAnyCase(t *testing.T) {
	t.Parallel()
	for _, p := range []string{".GITHUB/workflows/x.yml", ".Github/Workflows/ci.yml", ".git/config", ".GIT/hooks/x", "sub/.Env.local"} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			ws, dir := apWorkspace(t, map[string]apFile{"a.txt": {"a\n", 0}})
			res := apRun(t, ws, "*** Begin Patch\n*** Add File: a2.txt\n+ok\n*** Add File: "+p+"\n+evil\n*** End Patch\n")
			if !res.IsError || res.Code != agent.CodeDenied {
				t.Fatalf("result %+v, want DENIED", res)
			}
			apSameTree(t, apTree(t, dir), map[string]apFile{"a.txt": {"a\n", 0}})
		})
	}
}

// A caller's own globs replace the defaults, are matched ignoring case,
// and never unprotect git's data.
func TestWorkspaceUserGlobs(t *testing.T) {
	t.Parallel()
	set, err := protect.New([]string{"migrations/**", "**/*.PEM"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ws, err := OpenWorkspace(dir, WorkspaceOptions{Protected: set, RunsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for p, want := range map[string]string{
		"Migrations/001.sql": "migrations/**",
		"certs/key.pem":      "**/*.PEM",
		".git/config":        "",
		".Git/HEAD":          "",
	} {
		_, err := ws.CheckWrite(p)
		if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckWrite(%q) = %v, want ErrForbidden naming %q", p, err, want)
		}
	}
	if _, err := ws.CheckWrite("src/main.go"); err != nil {
		t.Errorf("an ordinary path was refused: %v", err)
	}
	if ws.Protected() != set {
		t.Error("Protected() is not the set given")
	}
	if _, err := os.Stat(filepath.Join(dir, "Migrations")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CheckWrite created something: %v", err)
	}
}
