package diffcheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// change is one case's two trees, for gitDiffs.
type change struct{ before, after map[string]string }

// diffed is the real diff git produces for a change, and a Source reading a
// copy of each of its trees.
type diffed struct {
	diff string
	src  Dirs
}

// gitDiff is gitDiffs for one change.
func gitDiff(t *testing.T, before, after map[string]string) (string, Dirs) {
	t.Helper()
	d := gitDiffs(t, []change{{before, after}})[0]
	return d.diff, d.src
}

// gitDiffs makes the real diff git produces for each change, in the form a
// bundle stores (snapshot's diff-tree -p --binary -M --full-index), with
// three git processes for all of them: a scratch repository, one
// `git fast-import` writing a commit of each change's before tree and a
// child commit of its after tree, and one `git diff-tree --stdin`
// comparing each pair.
func gitDiffs(t *testing.T, changes []change) []diffed {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join(root, "repo.git")
	git(t, root, "init", "-q", "--bare", repo)
	var stream bytes.Buffer
	commit := func(mark int, msg string, files map[string]string) {
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\ncommitter t <t@example.invalid> 0 +0000\ndata %d\n%s\n", mark, len(msg), msg)
		if mark%2 == 0 {
			fmt.Fprintf(&stream, "from :%d\ndeleteall\n", mark-1)
		} else if mark > 1 {
			stream.WriteString("deleteall\n")
		}
		for _, p := range slices.Sorted(maps.Keys(files)) {
			if strings.ContainsAny(p, "\n\"") {
				t.Fatalf("path %q needs quoting in a fast-import stream; use a plain one", p)
			}
			fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", p, len(files[p]), files[p])
		}
		fmt.Fprintf(&stream, "\nget-mark :%d\n", mark)
	}
	out := make([]diffed, len(changes))
	for i, c := range changes {
		// The message makes each after commit unique: its id heads its diff.
		commit(2*i+1, fmt.Sprintf("before %d", i), c.before)
		commit(2*i+2, fmt.Sprintf("after %d", i), c.after)
		dir := filepath.Join(root, strconv.Itoa(i))
		out[i].src = Dirs{BeforeDir: filepath.Join(dir, "before"), AfterDir: filepath.Join(dir, "after")}
		writeTree(t, out[i].src.BeforeDir, c.before)
		writeTree(t, out[i].src.AfterDir, c.after)
	}
	stream.WriteString("done\n")
	ids := strings.Fields(runGit(t, repo, &stream, "fast-import", "--quiet", "--done"))
	if len(ids) != 2*len(changes) {
		t.Fatalf("git fast-import printed %d commit ids for %d changes", len(ids), len(changes))
	}
	// A line "<commit> <parent>" is answered with the commit's id and the
	// parent→commit diff; an empty diff prints nothing.
	var pairs strings.Builder
	for i := range changes {
		fmt.Fprintf(&pairs, "%s %s\n", ids[2*i+1], ids[2*i])
	}
	all := runGit(t, repo, strings.NewReader(pairs.String()), "diff-tree", "--stdin", "-p", "-M", "--binary", "--full-index", "--no-color")
	cur := -1
	for line := range strings.Lines(all) {
		if i := slices.Index(ids, strings.TrimSuffix(line, "\n")); i >= 0 && i%2 == 1 && i/2 > cur {
			cur = i / 2
			continue
		}
		if cur < 0 {
			t.Fatalf("git diff-tree output starts without a commit id: %q", line)
		}
		out[cur].diff += line
	}
	return out
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return runGit(t, dir, nil, args...)
}

func runGit(t *testing.T, dir string, stdin io.Reader, args ...string) string {
	t.Helper()
	out, err := gitOutput(dir, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gitOutput runs git in dir with no user or system configuration.
func gitOutput(dir string, stdin io.Reader, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %v: %v\n%s", args, err, stderr.String())
	}
	return string(out), nil
}

func checkNames(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Check)
	}
	slices.Sort(out)
	return out
}
