package cleantree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLinkDependency(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	deps := filepath.Join(t.TempDir(), "node_modules")
	put(t, deps, "padder/index.js", "module.exports = 1;\n", 0o644)

	tr := checkout(t, src, "HEAD")
	if err := tr.LinkDependency("node_modules", deps); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(tr.Dir(), "node_modules", "padder", "index.js"))
	if err != nil || string(got) != "module.exports = 1;\n" {
		t.Fatalf("through the link: %q, %v", got, err)
	}
	if target, err := os.Readlink(filepath.Join(tr.Dir(), "node_modules")); err != nil || target != deps {
		t.Fatalf("link target %q, %v; want %q", target, err, deps)
	}
	// A nested one, below a tracked directory.
	if err := tr.LinkDependency("dir/node_modules", deps); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ rel, target, want string }{
		{"a.go", deps, "the commit tracks it"},
		{"dir", deps, "the commit tracks files below it"},
		{"node_modules", deps, "it exists in the tree"},
		{"missing/node_modules", deps, "missing"},
		{"link/node_modules", deps, "not a directory"},
		{"../node_modules", deps, `".." path element`},
		{".git/node_modules", deps, ".git"},
		{"venv", "relative/dir", "not absolute"},
		{"venv", filepath.Join(tr.Dir(), "dir"), "inside the tree"},
		{"venv", filepath.Join(deps, "padder", "index.js"), "not a directory"},
		{"venv", filepath.Join(deps, "nope"), "not a directory"},
	} {
		err := tr.LinkDependency(c.rel, c.target)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LinkDependency(%q, %q) = %v, want an error with %q", c.rel, c.target, err, c.want)
		}
	}

	// A change may not write through, or over, a dependency link.
	for _, c := range []Change{
		{Path: "node_modules/padder/index.js", Status: "modified", Content: []byte("module.exports = 2;\n")},
		{Path: "node_modules", Status: "added", Content: []byte("a file\n")},
		{Path: "dir/node_modules/x.js", Status: "added", Content: []byte("x\n")},
		{Path: "a.go", OldPath: "node_modules/padder/index.js", Status: "renamed", Content: []byte("x\n")},
	} {
		if err := tr.Apply([]Change{c}); err == nil || !strings.Contains(err.Error(), "installed dependencies") {
			t.Errorf("Apply(%s) = %v, want a refusal", c.Path, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(deps, "padder", "index.js")); string(got) != "module.exports = 1;\n" {
		t.Fatalf("the dependency was written: %q", got)
	}
	// A plain change still applies beside the links.
	if err := tr.Apply([]Change{{Path: "a.go", Status: "modified", Content: []byte("package a\n")}}); err != nil {
		t.Fatal(err)
	}

	// Close removes the links, never what they point to.
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(deps, "padder", "index.js")); err != nil {
		t.Fatalf("Close removed the dependency: %v", err)
	}
	if err := tr.LinkDependency("venv", deps); err == nil {
		t.Fatal("LinkDependency after Close succeeded")
	}
}
