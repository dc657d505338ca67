package cleantree

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strconv"

	"github.com/org/mini-agent/internal/gitexec"
)

// Hash returns the git tree id of the commit's tree with changes applied:
// the id GitHub's Git Data API returns when it creates a tree from the
// same base tree and entries. It is computed from the base tree's entries
// (listed from the objects at Checkout, before any test code ran) and the
// changes' bytes only, never from the work tree, its .git or the source
// repository, which may all have changed since; it refuses what Apply
// refuses (but for the work tree's own state), and works before or after
// Apply, even after Close.
//
// The tree is built in a private repository in a temporary directory of
// its own: a new index takes the base entries that remain and each written
// change with the blob id of its bytes (a symbolic link's: of its target),
// and write-tree --missing-ok writes the trees there. The blobs themselves
// are not needed for the id, so none is written anywhere.
func (t *Tree) Hash(ctx context.Context, changes []Change) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("cleantree: %w", err)
	}
	pl, err := t.plan(changes)
	if err != nil {
		return "", err
	}
	var info bytes.Buffer
	for _, p := range t.order {
		if e := t.entries[p]; !pl.deleted[p] && !pl.written[p] {
			fmt.Fprintf(&info, "%s %s\t%s\x00", e.mode, e.oid, p)
		}
	}
	for _, w := range pl.writes {
		fmt.Fprintf(&info, "%s %s\t%s\x00", w.mode, blobID(t.format, w.content), w.path)
	}
	tmp, err := os.MkdirTemp("", "mini-agent-clean-hash-")
	if err != nil {
		return "", fmt.Errorf("cleantree: %w", err)
	}
	defer os.RemoveAll(tmp)
	gitDir := filepath.Join(tmp, "repo.git")
	if _, err := git(ctx, tmp, nil, "init", "-q", "--bare", "--template=", "--object-format="+t.format, gitDir); err != nil {
		return "", fmt.Errorf("cleantree: %w", err)
	}
	env := []string{"GIT_DIR=" + gitDir, "GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	opt := gitexec.Options{Dir: tmp, Env: env, Stdin: &info, Timeout: gitTimeout}
	if _, err := gitexec.Run(ctx, opt, "update-index", "-z", "--index-info"); err != nil {
		return "", fmt.Errorf("cleantree: %w", err)
	}
	id, err := git(ctx, tmp, env, "write-tree", "--missing-ok")
	if err != nil {
		return "", fmt.Errorf("cleantree: %w", err)
	}
	return id, nil
}

// blobID is the object id git gives a blob of content.
func blobID(format string, content []byte) string {
	var h hash.Hash
	if format == "sha256" {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}
