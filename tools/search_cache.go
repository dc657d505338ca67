package tools

import (
	"context"
	"runtime"
	"sync"
	"weak"
)

// fileListCache keeps the workspace's file listing between searches of one
// run: listing a large tree (git ls-files, or the walking fallback) costs
// more than a selective search itself. Whatever may change the tree drops
// it: apply_patch after writing, run_test after its command (a test may
// create or delete files), through Workspace.InvalidateFileList.
//
// The zero value is an empty cache.
type fileListCache struct {
	mu    sync.Mutex
	gen   uint64   // bumped by every invalidation
	files []string // the listing of generation valid; nil when none
	valid uint64
}

// get returns the cached listing, or lists and caches it. The result is
// shared: callers must not modify it. A listing taken while an
// invalidation happened is returned to its caller (it reflects the tree at
// or after the call began) but not kept.
func (c *fileListCache) get(ctx context.Context, list func(context.Context) ([]string, error)) ([]string, error) {
	c.mu.Lock()
	if c.files != nil && c.valid == c.gen {
		files := c.files
		c.mu.Unlock()
		return files, nil
	}
	gen := c.gen
	c.mu.Unlock()

	files, err := list(ctx)
	if err != nil {
		return nil, err
	}
	if files == nil {
		files = []string{}
	}
	c.mu.Lock()
	if c.gen == gen {
		c.files, c.valid = files, gen
	}
	c.mu.Unlock()
	return files, nil
}

// invalidate drops the cached listing.
func (c *fileListCache) invalidate() {
	c.mu.Lock()
	c.gen++
	c.files = nil
	c.mu.Unlock()
}

// workspaceListCaches holds each Workspace's listing cache, beside the
// Workspace rather than in it so that the cache stays search's own concern.
// Entries are keyed by weak pointer and removed when their workspace is
// garbage collected, so an eval opening many workspaces keeps no old list.
var workspaceListCaches sync.Map // weak.Pointer[Workspace] -> *fileListCache

func (w *Workspace) listCache() *fileListCache {
	key := weak.Make(w)
	if c, ok := workspaceListCaches.Load(key); ok {
		return c.(*fileListCache)
	}
	c, loaded := workspaceListCaches.LoadOrStore(key, &fileListCache{})
	if !loaded {
		runtime.AddCleanup(w, func(k weak.Pointer[Workspace]) { workspaceListCaches.Delete(k) }, key)
	}
	return c.(*fileListCache)
}

// cachedListFiles is listFiles, cached until the next InvalidateFileList.
// The slice is shared between callers and must not be modified.
func (w *Workspace) cachedListFiles(ctx context.Context) ([]string, error) {
	return w.listCache().get(ctx, w.listFiles)
}

// InvalidateFileList drops the cached list of searchable files, so that the
// next search lists the tree again. Call it after anything that may have
// added, removed or renamed files, or changed a .gitignore: apply_patch and
// run_test do.
func (w *Workspace) InvalidateFileList() {
	if w == nil {
		return
	}
	w.listCache().invalidate()
}
