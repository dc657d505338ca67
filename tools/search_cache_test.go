package tools

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"
	"weak"

	"github.com/org/mini-agent/internal/testcmd"
)

// invalidateForBench drops ws's cached file list (BenchmarkSearch's cold
// variant).
func invalidateForBench(ws *Workspace) { ws.InvalidateFileList() }

// cacheFixture is a git work tree with a tracked file, an ignored folder
// and an ignore rule for logs.
func cacheFixture(t *testing.T) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	fxWrite(t, dir, map[string]string{
		".gitignore": "ignored/\n*.log\n",
		"a.go":       "needle a\n",
	})
	fxGit(t, dir, "init", "-q")
	fxGit(t, dir, "add", ".")
	return fxWorkspace(t, dir), dir
}

// searchHits runs the search tool for "needle" and returns the hit paths.
func searchHits(t *testing.T, s *Search) []string {
	t.Helper()
	text, code := searchRun(t, s, `{"query":"needle","max_results":500}`)
	if code != "" {
		t.Fatalf("search: %s %s", code, text)
	}
	return hitPaths(text)
}

func wantHits(t *testing.T, step string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: hits %q, want %q", step, got, want)
	}
}

// TestSearchCacheApplyPatch: a file apply_patch adds is found by the next
// search, the ignore rules still apply to what it adds, and a .gitignore
// it edits takes effect at once.
func TestSearchCacheApplyPatch(t *testing.T) {
	t.Parallel()
	ws, dir := cacheFixture(t)
	s := NewSearch(ws)
	ap := NewApplyPatch(ws)
	wantHits(t, "first search", searchHits(t, s), "a.go:1")

	// A file written behind the tools' back is not seen: the list is
	// cached (this is what makes repeated searches cheap).
	fxWrite(t, dir, map[string]string{"behind.go": "needle behind\n"})
	wantHits(t, "cached", searchHits(t, s), "a.go:1")

	patch := "--- /dev/null\n+++ b/fresh.go\n@@ -0,0 +1 @@\n+needle fresh\n" +
		"--- /dev/null\n+++ b/ignored/hidden.go\n@@ -0,0 +1 @@\n+needle hidden\n" +
		"--- /dev/null\n+++ b/x.log\n@@ -0,0 +1 @@\n+needle log\n"
	res, err := ap.Execute(context.Background(), apArgs(t, patch))
	if err != nil || res.IsError {
		t.Fatalf("apply_patch: %v %s", err, res.Text)
	}
	wantHits(t, "after apply_patch", searchHits(t, s), "a.go:1", "behind.go:1", "fresh.go:1")

	// Ignoring fresh.go by a patch to .gitignore hides it from the next search.
	patch = "--- a/.gitignore\n+++ b/.gitignore\n@@ -1,2 +1,3 @@\n ignored/\n *.log\n+fresh.go\n"
	res, err = ap.Execute(context.Background(), apArgs(t, patch))
	if err != nil || res.IsError {
		t.Fatalf("apply_patch .gitignore: %v %s", err, res.Text)
	}
	wantHits(t, "after .gitignore edit", searchHits(t, s), "a.go:1", "behind.go:1")

	// Deleting a file by patch drops it from the list too.
	patch = "--- a/a.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-needle a\n"
	res, err = ap.Execute(context.Background(), apArgs(t, patch))
	if err != nil || res.IsError {
		t.Fatalf("apply_patch delete: %v %s", err, res.Text)
	}
	wantHits(t, "after delete", searchHits(t, s), "behind.go:1")
}

// TestSearchCacheRunTest: files the test command creates are found by the
// next search, whether the model ran it (Execute) or the harness did
// (Run); ignored ones still are not.
func TestSearchCacheRunTest(t *testing.T) {
	t.Parallel()
	ws, _ := cacheFixture(t)
	s := NewSearch(ws)
	wantHits(t, "first search", searchHits(t, s), "a.go:1")

	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "echo needle made > made.go && echo needle log > run.log && mkdir -p ignored && echo needle > ignored/i.go")})
	res, err := rt.Execute(context.Background(), nil)
	if err != nil || res.IsError {
		t.Fatalf("run_test: %v %s", err, res.Text)
	}
	wantHits(t, "after run_test", searchHits(t, s), "a.go:1", "made.go:1")

	rt = NewRunTest(ws, RunTestConfig{Command: mustParse(t, "rm made.go && echo needle harness > harness.go")})
	if _, err := rt.Run(context.Background(), testcmd.Selection{}, testcmd.Plain); err != nil {
		t.Fatalf("Run: %v", err)
	}
	wantHits(t, "after Run", searchHits(t, s), "a.go:1", "harness.go:1")

	// A failing command may have changed the tree as much as a passing one.
	rt = NewRunTest(ws, RunTestConfig{Command: mustParse(t, "echo needle failing > failing.go; exit 3")})
	res, err = rt.Execute(context.Background(), nil)
	if err != nil || !res.IsError {
		t.Fatalf("failing run_test: %v %s", err, res.Text)
	}
	wantHits(t, "after failing run_test", searchHits(t, s), "a.go:1", "failing.go:1", "harness.go:1")
}

// TestSearchCacheWithoutGit: the walking fallback is cached and dropped
// the same way.
func TestSearchCacheWithoutGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fxWrite(t, dir, map[string]string{".gitignore": "*.tmp\n", "a.txt": "needle a\n"})
	ws := fxWorkspace(t, dir)
	s := NewSearch(ws)
	wantHits(t, "first search", searchHits(t, s), "a.txt:1")
	patch := "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+needle b\n--- /dev/null\n+++ b/c.tmp\n@@ -0,0 +1 @@\n+needle c\n"
	if res, err := NewApplyPatch(ws).Execute(context.Background(), apArgs(t, patch)); err != nil || res.IsError {
		t.Fatalf("apply_patch: %v %s", err, res.Text)
	}
	wantHits(t, "after apply_patch", searchHits(t, s), "a.txt:1", "b.txt:1")
}

// TestFileListCache checks the cache itself: one listing while valid, a
// new one after invalidate, no caching of a listing an invalidation
// overtook, nor of an error.
func TestFileListCache(t *testing.T) {
	t.Parallel()
	var c fileListCache
	ctx := context.Background()
	calls := 0
	var during func()
	list := func(context.Context) ([]string, error) {
		calls++
		if during != nil {
			during()
		}
		return []string{"f" + string(rune('0'+calls))}, nil
	}
	get := func() []string {
		t.Helper()
		files, err := c.get(ctx, list)
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	if got := get(); !slices.Equal(got, []string{"f1"}) || calls != 1 {
		t.Fatalf("first: %q after %d listings", got, calls)
	}
	if got := get(); !slices.Equal(got, []string{"f1"}) || calls != 1 {
		t.Fatalf("cached: %q after %d listings", got, calls)
	}
	c.invalidate()
	if got := get(); !slices.Equal(got, []string{"f2"}) || calls != 2 {
		t.Fatalf("after invalidate: %q after %d listings", got, calls)
	}
	// An invalidation while listing: the caller gets that listing, the
	// next call lists again.
	c.invalidate()
	during = c.invalidate
	if got := get(); !slices.Equal(got, []string{"f3"}) {
		t.Fatalf("raced: %q", got)
	}
	during = nil
	if got := get(); !slices.Equal(got, []string{"f4"}) || calls != 4 {
		t.Fatalf("after a raced listing: %q after %d listings", got, calls)
	}
	// An error is returned and not cached.
	c.invalidate()
	boom := errors.New("boom")
	if _, err := c.get(ctx, func(context.Context) ([]string, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("error: %v", err)
	}
	if got := get(); !slices.Equal(got, []string{"f5"}) {
		t.Fatalf("after error: %q", got)
	}
	// An empty listing is cached too.
	c.invalidate()
	empty := 0
	for range 2 {
		files, err := c.get(ctx, func(context.Context) ([]string, error) { empty++; return nil, nil })
		if err != nil || len(files) != 0 {
			t.Fatalf("empty: %q %v", files, err)
		}
	}
	if empty != 1 {
		t.Fatalf("empty listing listed %d times", empty)
	}
}

// TestInvalidateFileListNil: a tool built on a nil workspace (as specs are)
// does not panic on invalidation.
func TestInvalidateFileListNil(t *testing.T) {
	var w *Workspace
	w.InvalidateFileList()
}

// TestFileListCacheDroppedWithWorkspace: a workspace's cache entry goes
// when the workspace is garbage collected, so opening many workspaces (an
// eval) keeps no old listing alive.
func TestFileListCacheDroppedWithWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fxWrite(t, dir, map[string]string{"a.txt": "needle\n"})
	key := func() weak.Pointer[Workspace] {
		ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		if hits := searchHits(t, NewSearch(ws)); !slices.Equal(hits, []string{"a.txt:1"}) {
			t.Fatalf("hits %q", hits)
		}
		k := weak.Make(ws)
		if _, ok := workspaceListCaches.Load(k); !ok {
			t.Fatal("no cache entry after a search")
		}
		return k
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if _, ok := workspaceListCaches.Load(key); !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("cache entry still held 10s after its workspace became unreachable")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
