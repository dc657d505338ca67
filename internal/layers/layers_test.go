package layers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const module = "github.com/org/mini-agent/"

// layer is where a package sits. Imports go downwards only: the entry
// point may use everything, the eval (wiring like the entry point, over the
// same pipeline) everything but the entry point, a job-level package the
// applications and leaves, an application (the loop, the tools, the GitHub
// client) leaves only, and a leaf engine other leaves only. Test fakes are
// used by tests (and the eval's replay); product code never imports them.
type layer int

const (
	entry  layer = iota // main: flags → struct → call
	wiring              // the eval: runs tasks through the job runner
	app                 // the loop, the tools, the GitHub client
	job                 // internal job level: one job from event to published result
	leaf                // internal leaf engines: import nothing above them
	fake                // test fakes and test-only helpers
)

func (l layer) String() string {
	return [...]string{"entry point", "wiring", "application", "job level", "leaf engine", "test fake"}[l]
}

// table classifies every package of the module, by path below the module.
// A new package must be added here: the test fails until it is. Entries for
// packages that do not exist (yet) are allowed, so parallel work can land
// in any order.
var table = map[string]layer{
	"cmd/mini-agent": entry,

	"agent":          app,
	"agent/provider": app,
	"tools":          app,
	// The chosen model without the SDKs: what the job runner carries.
	"agent/provider/pricing": app,
	"ghapi":                  app,
	"eval":                   wiring,

	"internal/action":     job,
	"internal/pipeline":   job,
	"internal/route":      job,
	"internal/config":     job,
	"internal/publish":    job,
	"internal/report":     job,
	"internal/bundle":     job,
	"internal/flakyscan":  job,
	"internal/flakyissue": job,
	"internal/flakyrun":   job,
	"internal/flakyjob":   job,
	"internal/flakyfix":   job,

	"internal/failure":   leaf,
	"internal/patch":     leaf,
	"internal/proc":      leaf,
	"internal/sandbox":   leaf,
	"internal/snapshot":  leaf,
	"internal/gitexec":   leaf,
	"internal/gitguard":  leaf,
	"internal/safefile":  leaf,
	"internal/glob":      leaf,
	"internal/benchtree": fake,
	"internal/demo":      leaf,
	"internal/protect":   leaf,
	"internal/redact":    leaf,
	"internal/testcmd":   leaf,
	"internal/exitcode":  job,
	"internal/flaky":     leaf,
	"internal/diffcheck": leaf,
	"internal/cleantree": leaf,

	"ghapi/ghtest":                 fake,
	"internal/fakellm":             fake,
	"internal/shaproxy":            fake,
	"internal/sandbox/sandboxtest": fake,
	"internal/patch/patchtest":     fake,
	"internal/actiontest":          fake,
	"internal/golden":              fake,
	"internal/flaky/flakytest":     fake,
	"internal/layers":              fake,
}

// forbidden are the ARCHITECTURE §2 rules beyond the layers: which
// packages (module paths, or third-party prefixes) a package must not
// import.
var forbidden = map[string][]string{
	// The loop knows no GitHub and no concrete tool: tools are injected.
	"agent":          {"ghapi", "tools", "github.com/google/go-github", "golang.org/x/oauth2"},
	"agent/provider": {"ghapi", "tools", "github.com/google/go-github", "golang.org/x/oauth2"},
	// The chosen model and its prices link no SDK (that is its point).
	"agent/provider/pricing": {"ghapi", "tools", "github.com/google/go-github", "golang.org/x/oauth2",
		"github.com/openai/", "github.com/anthropics/"},
	// The GitHub client knows no model and no tool.
	"ghapi": {"agent", "tools", "github.com/openai/", "github.com/anthropics/"},
	// The tools know neither GitHub nor the models (they may use the
	// loop's small result type in agent).
	"tools": {"ghapi", "agent/provider", "github.com/google/go-github", "golang.org/x/oauth2",
		"github.com/openai/", "github.com/anthropics/"},
}

// allowedFakeImports are product packages that may import a test fake: the
// eval replays its scripted trajectories through fakellm to exercise the
// real OpenAI adapter.
var allowedFakeImports = map[string][]string{
	"eval": {"internal/fakellm"},
}

// pkg is what the check needs from `go list -json`.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string // non-test imports
}

// docLabel is how an internal package's doc comment names its layer, at
// the start of a line.
var docLabel = map[layer]string{job: "Job level:", leaf: "Leaf engine:", fake: "Test fake:"}

func TestImportLayers(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; the module has more", len(pkgs))
	}
	for _, problem := range check(pkgs) {
		t.Error(problem)
	}
}

// Every internal package says its layer in its package doc, as the table
// classifies it: "Job level: …", "Leaf engine: …" or "Test fake: …".
func TestPackageDocsSayTheirLayer(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t) {
		name, _ := strings.CutPrefix(p.ImportPath, module)
		l, ok := table[name]
		if !ok || !strings.HasPrefix(name, "internal/") {
			continue // unclassified packages are TestImportLayers' finding
		}
		doc, err := packageDoc(p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if problem := docProblem(l, doc); problem != "" {
			t.Errorf("%s: %s", name, problem)
		}
	}
}

// packageDoc returns the package comment of p's non-test files.
func packageDoc(p pkg) (string, error) {
	var docs []string
	fset := token.NewFileSet()
	for _, f := range p.GoFiles {
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return "", err
		}
		if file.Doc != nil {
			docs = append(docs, file.Doc.Text())
		}
	}
	if len(docs) == 0 {
		return "", errors.New("no package doc comment")
	}
	return strings.Join(docs, "\n"), nil
}

// docProblem says what is wrong with a package doc for layer l ("" when
// it names l and no other layer).
func docProblem(l layer, doc string) string {
	want := docLabel[l]
	for other, label := range docLabel {
		if other != l && hasLineStarting(doc, label) {
			return fmt.Sprintf("package doc says %q, but the layer table says %s (want a line starting %q)", label, l, want)
		}
	}
	if !hasLineStarting(doc, want) {
		return fmt.Sprintf("package doc does not say its layer: add a line starting %q", want)
	}
	return ""
}

func hasLineStarting(doc, prefix string) bool {
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), prefix) {
			return true
		}
	}
	return false
}

func TestDocProblem(t *testing.T) {
	for _, c := range []struct {
		l    layer
		doc  string
		want string // substring; "" = fine
	}{
		{leaf, "Package x does y.\n\nLeaf engine: imports nothing above it.\n", ""},
		{job, "Package x does y.\nJob level: uses ghapi.\n", ""},
		{leaf, "Package x does y.\n", "does not say its layer"},
		{leaf, "Package x does y.\nJob level: uses ghapi.\n", "the layer table says leaf engine"},
		{fake, "Package x is a helper. Test fake: mid-line does not count.\n", "does not say its layer"},
	} {
		got := docProblem(c.l, c.doc)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("docProblem(%s, %q) = %q, want %q", c.l, c.doc, got, c.want)
		}
	}
}

// check returns every broken rule, one line each.
func check(pkgs []pkg) []string {
	var problems []string
	for _, p := range pkgs {
		name, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: not in module %s", p.ImportPath, module))
			continue
		}
		from, ok := table[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: not classified: add it to the table in internal/layers/layers_test.go (and say its layer in its package doc)", name))
			continue
		}
		for _, imp := range p.Imports {
			if bad := forbiddenImport(name, imp); bad != "" {
				problems = append(problems, fmt.Sprintf("%s imports %s: %s", name, imp, bad))
			}
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			to, ok := table[dep]
			if !ok {
				continue // reported as unclassified on its own line
			}
			if bad := crossing(name, from, dep, to); bad != "" {
				problems = append(problems, fmt.Sprintf("%s (%s) imports %s (%s): %s", name, from, dep, to, bad))
			}
		}
	}
	return problems
}

// crossing says why an import from one layer to another is wrong ("" when
// it is fine).
func crossing(name string, from layer, dep string, to layer) string {
	switch {
	case from == fake:
		return "" // fakes serve tests and may use anything
	case to == fake:
		if slices.Contains(allowedFakeImports[name], dep) {
			return ""
		}
		return "product code must not import a test fake"
	case to == entry:
		return "nothing imports the entry point"
	case to == wiring && from != entry:
		return "only the entry point uses the eval"
	case from == leaf && to != leaf:
		return "a leaf engine imports nothing above it"
	case from == app && to == job:
		return "the loop, the tools and the GitHub client do not reach into the job level"
	}
	return ""
}

func forbiddenImport(name, imp string) string {
	for _, f := range forbidden[name] {
		rel, inModule := strings.CutPrefix(imp, module)
		switch {
		case inModule && (rel == f || strings.HasPrefix(rel, f+"/")):
			return "forbidden by ARCHITECTURE §2"
		case !inModule && strings.HasSuffix(f, "/") && strings.HasPrefix(imp, f):
			return "forbidden by ARCHITECTURE §2"
		case !inModule && (imp == f || strings.HasPrefix(imp, f+"/")):
			return "forbidden by ARCHITECTURE §2"
		}
	}
	return ""
}

// listed is the module's package list, read once for all tests.
var listed struct {
	once sync.Once
	pkgs []pkg
	err  error
}

// listPackages runs `go list -json ./...` at the module root (once; each
// caller gets its own copy of the list).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	root := moduleRoot(t)
	listed.once.Do(func() { listed.pkgs, listed.err = goList(root) })
	if listed.err != nil {
		t.Fatal(listed.err)
	}
	return slices.Clone(listed.pkgs)
}

func goList(root string) ([]pkg, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the go command is needed to list the packages: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Only the fields pkg has: go list then skips the work the others need.
	cmd := exec.CommandContext(ctx, goBin, "list", "-json=ImportPath,Dir,GoFiles,Imports", "./...")
	cmd.Dir = root
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// The checker itself finds each kind of broken rule, and accepts the
// imports the design allows.
func TestCheckFindsBrokenRules(t *testing.T) {
	m := func(s ...string) []string {
		out := make([]string, len(s))
		for i, x := range s {
			out[i] = module + x
		}
		return out
	}
	cases := []struct {
		name string
		pkg  pkg
		want string // substring of the one problem; "" = none
	}{
		{"leaf imports job", pkg{ImportPath: module + "internal/failure", Imports: m("internal/bundle")}, "a leaf engine imports nothing above it"},
		{"leaf imports app", pkg{ImportPath: module + "internal/proc", Imports: m("tools")}, "a leaf engine imports nothing above it"},
		{"leaf imports leaf", pkg{ImportPath: module + "internal/gitexec", Imports: m("internal/proc", "internal/safefile")}, ""},
		{"agent imports ghapi", pkg{ImportPath: module + "agent", Imports: m("ghapi")}, "forbidden"},
		{"agent imports tools", pkg{ImportPath: module + "agent", Imports: m("tools")}, "forbidden"},
		{"agent imports go-github", pkg{ImportPath: module + "agent", Imports: []string{"github.com/google/go-github/v62/github"}}, "forbidden"},
		{"ghapi imports a model SDK", pkg{ImportPath: module + "ghapi", Imports: []string{"github.com/openai/openai-go/v3"}}, "forbidden"},
		{"ghapi imports agent", pkg{ImportPath: module + "ghapi", Imports: m("agent")}, "forbidden"},
		{"tools imports ghapi", pkg{ImportPath: module + "tools", Imports: m("ghapi")}, "forbidden"},
		{"tools imports a provider", pkg{ImportPath: module + "tools", Imports: m("agent/provider")}, "forbidden"},
		{"tools uses the loop's result type", pkg{ImportPath: module + "tools", Imports: m("agent", "internal/patch")}, ""},
		{"app reaches into the job level", pkg{ImportPath: module + "tools", Imports: m("internal/pipeline")}, "do not reach into the job level"},
		{"product imports a fake", pkg{ImportPath: module + "internal/pipeline", Imports: m("internal/fakellm")}, "must not import a test fake"},
		{"the eval replays through fakellm", pkg{ImportPath: module + "eval", Imports: m("internal/fakellm", "internal/pipeline")}, ""},
		{"job imports the eval", pkg{ImportPath: module + "internal/publish", Imports: m("eval")}, "only the entry point uses the eval"},
		{"the entry point wires the eval", pkg{ImportPath: module + "cmd/mini-agent", Imports: m("eval", "internal/pipeline", "agent")}, ""},
		{"the job level imports the entry point", pkg{ImportPath: module + "internal/action", Imports: m("cmd/mini-agent")}, "nothing imports the entry point"},
		{"app imports a leaf", pkg{ImportPath: module + "agent", Imports: m("internal/glob")}, ""},
		{"job imports leaf, app and job", pkg{ImportPath: module + "internal/publish", Imports: m("ghapi", "internal/report", "internal/glob")}, ""},
		{"unclassified package", pkg{ImportPath: module + "internal/newthing", Imports: nil}, "not classified"},
		{"fake imports anything", pkg{ImportPath: module + "ghapi/ghtest", Imports: m("internal/pipeline", "cmd/mini-agent")}, ""},
	}
	for _, c := range cases {
		got := check([]pkg{c.pkg})
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: unexpected problems %q", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%s: problems %q, want one with %q", c.name, got, c.want)
		}
	}
}
