package actiontest

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// Markers written in the README on the line before a ```yaml block that is
// not a whole workflow.
const (
	// notWorkflowMarker: the block is not a workflow at all (the policy
	// file, GitLab CI); the lint skips it.
	notWorkflowMarker = "<!-- not-a-workflow -->"
	// stepsMarker: the block is a list of steps; it is linted inside a job.
	stepsMarker = "<!-- workflow-steps -->"
)

// yamlBlock is one ```yaml block of a markdown file.
type yamlBlock struct {
	line   int    // 1-based line of the opening fence
	marker string // the marker comment before it, if any
	text   string // the content, de-indented
}

var fenceOpen = regexp.MustCompile("^([ \t]*)```ya?ml[ \t]*$")

// yamlBlocks extracts every ```yaml block (also indented ones, inside list
// items) with the marker comment on the line before it.
func yamlBlocks(markdown string) []yamlBlock {
	lines := strings.Split(markdown, "\n")
	var out []yamlBlock
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent := m[1]
		b := yamlBlock{line: i + 1}
		for j := i - 1; j >= 0; j-- {
			if prev := strings.TrimSpace(lines[j]); prev != "" {
				if prev == notWorkflowMarker || prev == stepsMarker {
					b.marker = prev
				}
				break
			}
		}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		b.text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// localAction points the project's own action at the checkout (`uses: ./`),
// so actionlint checks each `with:` key against action.yml's inputs and
// action.yml's metadata itself (branding, required inputs).
var ownAction = regexp.MustCompile(`uses:\s*org/mini-agent@[^\s]+`)

func localAction(text string) string { return ownAction.ReplaceAllString(text, "uses: ./") }

// lint runs actionlint (without shellcheck/pyflakes: no external programs)
// on one workflow's text, with the repository as the project so local
// actions resolve, and returns the errors as lines.
func lint(t *testing.T, name, text string) []string {
	t.Helper()
	root := repoRoot(t)
	proj, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{WorkingDir: root, Color: actionlint.ColorOptionKindNever})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(name, []byte(text), proj)
	if err != nil {
		t.Fatalf("%s: actionlint: %v", name, err)
	}
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s:%d:%d: %s [%s]", name, e.Line, e.Column, e.Message, e.Kind))
	}
	return out
}

// TestLintWorkflows lints the project's own workflows with actionlint.
func TestLintWorkflows(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	files, err := filepathGlob(root, ".github/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		if errs := lint(t, f, readRepoFile(t, f)); len(errs) > 0 {
			t.Errorf("actionlint:\n%s", strings.Join(errs, "\n"))
		}
	}
}

// TestLintTestdataWorkflows lints the act tests' workflows with
// actionlint, with org/mini-agent@v1 pointed at the checkout's action.yml so
// every `with:` key is checked against its inputs.
func TestLintTestdataWorkflows(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	files, err := filepathGlob(root, "internal/actiontest/testdata/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		text := readRepoFile(t, f)
		if !ownAction.MatchString(text) {
			t.Errorf("%s does not use org/mini-agent@v1", f)
		}
		if errs := lint(t, f, localAction(text)); len(errs) > 0 {
			t.Errorf("actionlint:\n%s", strings.Join(errs, "\n"))
		}
	}
}

// TestLintActionMetadata lints action.yml through a workflow that uses it
// with every input: actionlint checks a local action's metadata (branding
// icon and colour, inputs) where a workflow uses it.
func TestLintActionMetadata(t *testing.T) {
	t.Parallel()
	a := loadAction(t)
	var with strings.Builder
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range a.Inputs {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&with, "          %s: x\n", name)
	}
	wf := "on: push\njobs:\n  use:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./\n        with:\n" + with.String()
	if errs := lint(t, "uses-action.yml", wf); len(errs) > 0 {
		t.Errorf("actionlint on a workflow using action.yml:\n%s", strings.Join(errs, "\n"))
	}
	// The check must see action.yml: an unknown input is an error.
	if errs := lint(t, "uses-action.yml", wf+"          no-such-input: x\n"); len(errs) == 0 {
		t.Error("actionlint did not read action.yml: an unknown input passed")
	}
}

// TestLintReadmeWorkflows lints every ```yaml block of the README and of
// docs/*.md that users copy: whole workflows as they are, step lists inside
// a job. Blocks marked not-a-workflow (the policy file, GitLab CI) are
// skipped.
func TestLintReadmeWorkflows(t *testing.T) {
	t.Parallel()
	linted := map[string]int{}
	for _, f := range docFiles(t) {
		for _, b := range yamlBlocks(readRepoFile(t, f)) {
			name := fmt.Sprintf("%s:%d", f, b.line)
			text := localAction(b.text)
			switch b.marker {
			case notWorkflowMarker:
				continue
			case stepsMarker:
				text = "on: push\njobs:\n  job:\n    runs-on: ubuntu-latest\n    steps:\n" + indentLines(text, "      ")
			}
			linted[f]++
			if errs := lint(t, strings.ReplaceAll(name, "/", "_")+".yml", text); len(errs) > 0 {
				t.Errorf("%s: a workflow block does not lint (mark a block that is not a workflow with %s):\n%s\n%s",
					name, notWorkflowMarker, strings.Join(errs, "\n"), b.text)
			}
		}
	}
	// The quick start and the three ways; the install snippet, the
	// refresh schedule and the two-job recipe in docs.
	if linted["README.md"] < 4 || linted["docs/action.md"] < 2 || linted["docs/security.md"] < 1 {
		t.Errorf("blocks linted per file: %v; are workflows marked %s?", linted, notWorkflowMarker)
	}
}

// TestLintCatchesErrors proves the lint can fail: a broken quick-start (an
// unknown input of the action, an unknown runner, a bad expression) is
// reported.
func TestLintCatchesErrors(t *testing.T) {
	t.Parallel()
	base := "on: push\njobs:\n  fix:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: org/mini-agent@v1\n        with:\n          api-key: k\n"
	if errs := lint(t, "ok.yml", localAction(base)); len(errs) > 0 {
		t.Fatalf("the base workflow does not lint:\n%s", strings.Join(errs, "\n"))
	}
	for name, broken := range map[string]string{
		"unknown input":     strings.Replace(base, "api-key", "apikey", 1),
		"bad expression":    strings.Replace(base, "api-key: k", "api-key: ${{ secrets.KEY", 1),
		"unknown event":     strings.Replace(base, "on: push", "on: pushed", 1),
		"bad step property": base + "        wiht: {}\n",
	} {
		if errs := lint(t, "broken.yml", localAction(broken)); len(errs) == 0 {
			t.Errorf("%s: actionlint reported nothing", name)
		}
	}
}

func indentLines(s, indent string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = indent + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestYAMLBlocks checks the README extraction on a small document.
func TestYAMLBlocks(t *testing.T) {
	t.Parallel()
	md := "text\n\n```yaml\non: push\n```\n\n" + notWorkflowMarker + "\n```yaml\nkey: v\n```\n\n- item:\n\n  " +
		stepsMarker + "\n  ```yml\n  - run: x\n  ```\n"
	got := yamlBlocks(md)
	if len(got) != 3 {
		t.Fatalf("%d blocks: %+v", len(got), got)
	}
	want := []yamlBlock{{3, "", "on: push\n"}, {8, notWorkflowMarker, "key: v\n"}, {15, stepsMarker, "- run: x\n"}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
