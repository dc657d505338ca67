package testcmd

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds of Detect's walk below the root: a repository is untrusted, and
// detection must stay quick on a tree of any size.
const (
	// maxDetectDepth is how many directory levels below the root are read.
	maxDetectDepth = 4
	// maxDetectDirs bounds the directories read.
	maxDetectDirs = 5000
)

// detectSkip are directory names the walk does not enter: dependencies,
// test fixtures, and (with every hidden directory) version control and
// tool state.
var detectSkip = flagSet("vendor", "node_modules", "testdata", "third_party")

// ecosystem is one kind of project root Detect knows.
type ecosystem struct {
	name  string
	files []string // any of these marks a root
	// nested makes every root found a part of the command (Go: a nested
	// module is not part of its parent's ./...); otherwise only the
	// top-most roots are (a Cargo or npm workspace runs its members).
	nested bool
	// root is the command for a root at the workspace root, at the
	// command for a root in dir.
	root string
	at   func(dir string) string
}

// ecosystems in Detect's order of preference.
var ecosystems = []ecosystem{
	{name: "Go module", files: []string{"go.mod"}, nested: true, root: "go test ./...",
		at: func(d string) string { return "go -C " + d + " test ./..." }},
	{name: "npm package", files: []string{"package.json"}, root: "npm test",
		at: func(d string) string { return "npm --prefix " + d + " test" }},
	{name: "Cargo package", files: []string{"Cargo.toml"}, root: "cargo test",
		at: func(d string) string { return "cargo test --manifest-path " + d + "/Cargo.toml" }},
	{name: "Python project", files: []string{"pyproject.toml", "pytest.ini", "setup.cfg"}, root: "pytest",
		at: func(d string) string { return "pytest " + d }},
}

// Detection is what Detect found.
type Detection struct {
	// Command is the proposed test command, "" when no project was found:
	// for one project root its runner's command (go -C DIR test ./... for
	// a Go module in a subdirectory), for several a suite, "A && B" (see
	// Parse), which the harness runs without a shell.
	Command string
	// Kind names the projects the command runs ("Go module"...).
	Kind string
	// Roots are their directories, relative to the root ("." for it).
	Roots []string
	// Notes say what was found and left out, or where the walk stopped.
	Notes []string
}

// Detect guesses the test command of the repository at dir; "" when it
// finds no project. See DetectIn.
func Detect(dir string) string { return DetectIn(dir).Command }

// DetectIn looks for project roots (go.mod, package.json, Cargo.toml,
// pyproject.toml, pytest.ini, setup.cfg) at dir and below it, at most
// maxDetectDepth levels down and maxDetectDirs directories, never
// entering hidden directories, vendor, node_modules, testdata,
// third_party or symbolic links. The kind of project at the root wins,
// in that order of files; with none at the root, the first kind found
// below it in that order. Go modules are each run (a nested module is
// not in its parent's ./...): the root's with go test ./..., each other
// with go -C DIR test ./..., several joined by " && ". Of the other kinds
// only the top-most roots run (their workspaces run the members): the
// root's with its usual command, roots in subdirectories with npm
// --prefix DIR test, cargo test --manifest-path DIR/Cargo.toml, pytest
// DIR. At most maxSuiteParts roots; a root whose path could not be
// written in a command without quoting is left out, with a note.
func DetectIn(dir string) Detection {
	found, notes := walkRoots(dir)
	var d Detection
	d.Notes = notes
	pick := -1
	for i := range ecosystems {
		if slices.Contains(found[i], ".") {
			pick = i
			break
		}
	}
	for i := range ecosystems {
		if pick < 0 && len(found[i]) > 0 {
			pick = i
		}
	}
	if pick < 0 {
		return d
	}
	eco := ecosystems[pick]
	roots := found[pick]
	if !eco.nested {
		roots = topMost(roots)
	}
	var cmds []string
	for _, r := range roots {
		if !plainPath(r) {
			d.Notes = append(d.Notes, fmt.Sprintf("the %s in %s was left out: its path has characters a command line would need to quote", eco.name, quoteName(r)))
			continue
		}
		if len(cmds) == maxSuiteParts {
			d.Notes = append(d.Notes, fmt.Sprintf("only the first %d of %d %ss run", maxSuiteParts, len(roots), eco.name))
			break
		}
		d.Roots = append(d.Roots, r)
		if r == "." {
			cmds = append(cmds, eco.root)
		} else {
			cmds = append(cmds, eco.at(r))
		}
	}
	for i, e := range ecosystems {
		if i != pick && len(found[i]) > 0 {
			d.Notes = append(d.Notes, fmt.Sprintf("%s roots found too, not run: %s", e.name, strings.Join(found[i], ", ")))
		}
	}
	d.Kind = eco.name
	d.Command = strings.Join(cmds, " && ")
	return d
}

// walkRoots lists, per ecosystem, the directories (slash, relative to
// dir, "." first, then in lexical order) holding one of its files.
func walkRoots(dir string) ([][]string, []string) {
	found := make([][]string, len(ecosystems))
	var notes []string
	type level struct {
		rel   string
		depth int
	}
	queue := []level{{".", 0}}
	read := 0
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if read == maxDetectDirs {
			notes = append(notes, fmt.Sprintf("the search for project files stopped after %d directories", maxDetectDirs))
			break
		}
		read++
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(cur.rel)))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			switch {
			case e.Type().IsRegular() || cur.rel == "." && e.Type()&os.ModeSymlink != 0:
				// (At the root a linked project file counts, as it always did.)
				for i, eco := range ecosystems {
					if slices.Contains(eco.files, name) && !slices.Contains(found[i], cur.rel) {
						found[i] = append(found[i], cur.rel)
					}
				}
			case e.IsDir() && cur.depth < maxDetectDepth && !strings.HasPrefix(name, ".") && !detectSkip[name]:
				queue = append(queue, level{path.Join(cur.rel, name), cur.depth + 1})
			}
		}
	}
	for i := range found {
		slices.SortFunc(found[i], func(a, b string) int {
			switch {
			case a == b:
				return 0
			case a == ".":
				return -1
			case b == ".":
				return 1
			}
			return strings.Compare(a, b)
		})
	}
	return found, notes
}

// topMost keeps the roots not inside another root of the list.
func topMost(roots []string) []string {
	var out []string
	for _, r := range roots {
		if !slices.ContainsFunc(roots, func(o string) bool {
			return o != r && (o == "." || strings.HasPrefix(r, o+"/"))
		}) {
			out = append(out, r)
		}
	}
	return out
}

// plainPath reports a path that a command line holds as one word as it is:
// the narrowing paths' alphabet, not starting with '-'.
func plainPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "-") && !strings.ContainsFunc(p, func(r rune) bool { return !narrowPathRune(r) })
}

// Names turns failure ids ("TestX/sub", "path::test", "suite > name") into
// the test names a runner narrows by, each once, in order: the part after
// the last "::", and a Go subtest's top-level test.
func Names(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		name := id
		if i := strings.LastIndex(name, "::"); i >= 0 {
			name = name[i+2:]
		}
		if strings.HasPrefix(name, "Test") {
			name, _, _ = strings.Cut(name, "/") // a Go subtest: narrow to its top-level test
		}
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}
