package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileFilter makes git run cmd as the clean filter of every .txt file:
// code under test can write .git/config, and the model can write
// .gitattributes, so the repository decides what `git add` executes.
func hostileFilter(t *testing.T, cmd string) string {
	t.Helper()
	dir := setup(t, true)
	write(t, dir, ".gitattributes", "*.txt filter=hostile\n", 0o644)
	run(t, dir, "git", "config", "filter.hostile.clean", cmd)
	return dir
}

// The harness's own git calls run after code the model wrote has run; they
// must not hand that code the secrets the test command's environment was
// scrubbed of.
func TestGitDoesNotSeeTheHarnessSecrets(t *testing.T) {
	const canary = "ghs_SNAPSHOTcanary0123456789abcdef"
	t.Setenv("GITHUB_TOKEN", canary)
	t.Setenv("OPENAI_API_KEY", canary+"2")
	t.Setenv("DEPLOY_PASS", canary+"3") // a --secret-env name snapshot cannot know
	dump := filepath.Join(t.TempDir(), "env")
	dir := hostileFilter(t, "env >> '"+dump+"'; cat")
	s, err := Take(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write(t, dir, "new.txt", "changed\n", 0o644)
	if _, _, err := s.Diff(context.Background()); err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the filter did not run, the test proves nothing: %v", err)
	}
	if strings.Contains(string(env), canary) {
		t.Fatal("git's children saw the harness's secrets")
	}
}

// A filter that never ends (or leaves a child holding git's output) must
// not hang the run past its context.
func TestGitHonoursTheContextWhenAFilterHangs(t *testing.T) {
	t.Parallel()
	dir := hostileFilter(t, "sleep 30 & sleep 30; cat")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	s, err := Take(ctx, dir)
	if err == nil {
		s.Close()
		t.Fatal("Take succeeded although its filter cannot finish in time")
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("Take returned after %v, long after its context ended", d)
	}
}

// A huge file left in the workspace (a test's output) is refused by name
// before the diff and the contents are read into memory.
func TestDiffRefusesAHugeChangedFile(t *testing.T) {
	t.Parallel()
	dir := setup(t, true)
	s, err := Take(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := os.Create(filepath.Join(dir, "huge.out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, _, err = s.Diff(context.Background())
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Path != "huge.out" {
		t.Fatalf("err %v, want a TooLargeError for huge.out", err)
	}
}

func TestTakeExcludingLeavesOutTheGivenFiles(t *testing.T) {
	t.Parallel()
	for _, withGit := range []bool{true, false} {
		dir := setup(t, withGit)
		trace := filepath.Join(dir, "out", "trace.jsonl")
		s, err := TakeExcluding(context.Background(), dir, []string{"", trace})
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, "out/trace.jsonl", "{}\n", 0o644)
		write(t, dir, "a.go", "package a\n\nfunc A() int { return 3 }\n", 0o644)
		_, changes, err := s.Diff(context.Background())
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) != 1 || changes[0].Path != "a.go" {
			t.Errorf("git %v: changes %+v, want only a.go", withGit, changes)
		}
	}
}
