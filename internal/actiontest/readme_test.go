package actiontest

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// readmeSection returns the text of a "## title" section of the README.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	return docSection(t, "README.md", title)
}

// docSection returns the text of a "## title" section of a markdown file
// of the repository, up to the next "## " heading.
func docSection(t *testing.T, file, title string) string {
	t.Helper()
	text := readRepoFile(t, file)
	_, rest, ok := strings.Cut(text, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", file, title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// tableNames lists the first-column `names` of the markdown table in text.
func tableNames(text string) []string {
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|").FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
	}
	return names
}

// docFiles are the user documentation: the README and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepathGlob(repoRoot(t), "docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 8 {
		t.Fatalf("docs/ holds %v: the reference moved out of the README is missing", docs)
	}
	return append([]string{"README.md"}, docs...)
}

// TestDocsDocumentEveryInputAndOutput: docs/action.md has one Inputs and
// one Outputs table, each listing exactly action.yml's names, and no other
// page has such a heading (one heading per topic).
func TestDocsDocumentEveryInputAndOutput(t *testing.T) {
	t.Parallel()
	a := loadAction(t)
	for _, c := range []struct {
		title string
		names []string
	}{{"Inputs", slices.Sorted(maps.Keys(a.Inputs))}, {"Outputs", slices.Sorted(maps.Keys(a.Outputs))}} {
		got := tableNames(docSection(t, "docs/action.md", c.title))
		if !slices.Equal(slices.Sorted(slices.Values(got)), c.names) {
			t.Errorf("docs/action.md %s table lists %v; action.yml has %v", c.title, got, c.names)
		}
		for _, f := range docFiles(t) {
			n := len(regexp.MustCompile(`(?m)^#+ `+c.title+`\b`).FindAllString(readRepoFile(t, f), -1))
			if want := map[bool]int{true: 1, false: 0}[f == "docs/action.md"]; n != want {
				t.Errorf("%s has %d %q headings, want %d", f, n, c.title, want)
			}
		}
	}
	if !strings.Contains(docSection(t, "docs/action.md", "Installing the action"), "uses: org/mini-agent@v1") {
		t.Error("docs/action.md's installing section does not show `uses: org/mini-agent@v1`")
	}
}

// readmeWorkflow is the part of a README workflow block the quick-start
// checks read.
type readmeWorkflow struct {
	On          any `yaml:"on"`
	Concurrency any `yaml:"concurrency"`
	Jobs        map[string]struct {
		If    string `yaml:"if"`
		Steps []step `yaml:"steps"`
	} `yaml:"jobs"`
}

// readmeWorkflows parses the whole-workflow yaml blocks of the README and
// docs/*.md, by file:line.
func readmeWorkflows(t *testing.T) map[string]readmeWorkflow {
	t.Helper()
	out := map[string]readmeWorkflow{}
	inReadme := 0
	for _, f := range docFiles(t) {
		for _, b := range yamlBlocks(readRepoFile(t, f)) {
			if b.marker != "" {
				continue
			}
			var w readmeWorkflow
			if err := yaml.Unmarshal([]byte(b.text), &w); err != nil {
				t.Fatalf("%s:%d: %v", f, b.line, err)
			}
			out[fmt.Sprintf("%s:%d", f, b.line)] = w
			if f == "README.md" {
				inReadme++
			}
		}
	}
	if inReadme < 4 {
		t.Fatalf("found %d README workflows, want the quick start and the three ways", inReadme)
	}
	return out
}

// events lists a workflow's `on:` events.
func (w readmeWorkflow) events() []string {
	switch on := w.On.(type) {
	case string:
		return []string{on}
	case []any:
		var out []string
		for _, e := range on {
			out = append(out, fmt.Sprint(e))
		}
		return out
	case map[string]any:
		return slices.Sorted(maps.Keys(on))
	}
	return nil
}

var runsMiniAgent = regexp.MustCompile(`(^|[\s;&|(])mini-agent\s`)

// TestReadmeQuickStartsWorkAsPasted: every README workflow that runs
// `mini-agent` installs it first in the same job (the action or its
// install script); in-job recipes on push and pull_request have a
// concurrency group; the comment recipe filters commenters by
// author_association before a runner starts.
func TestReadmeQuickStartsWorkAsPasted(t *testing.T) {
	t.Parallel()
	sawComment, sawTwoJob := false, false
	for name, w := range readmeWorkflows(t) {
		usesAction := false
		for job, j := range w.Jobs {
			installed := false
			for i, s := range j.Steps {
				if strings.HasPrefix(s.Uses, "org/mini-agent@") || strings.Contains(s.Run, "scripts/install-action.sh") {
					installed = true
					usesAction = usesAction || strings.HasPrefix(s.Uses, "org/mini-agent@")
				}
				if runsMiniAgent.MatchString(s.Run) {
					sawTwoJob = sawTwoJob || strings.Contains(s.Run, "mini-agent publish")
					if !installed {
						t.Errorf("%s: job %s step %d runs mini-agent before any step installs it: %q", name, job, i+1, s.Run)
					}
				}
				if strings.Contains(s.Run, "install-action.sh") && s.Shell != "bash" {
					t.Errorf("%s: job %s step %d pipes the install script without `shell: bash` (no pipefail)", name, job, i+1)
				}
			}
		}
		ev := w.events()
		if usesAction && (slices.Contains(ev, "push") || slices.Contains(ev, "pull_request")) {
			c, ok := w.Concurrency.(map[string]any)
			if !ok || c["group"] == nil {
				t.Errorf("%s: an in-job recipe on %v has no concurrency group: one change would pay for two model runs", name, ev)
			}
		}
		if slices.Contains(ev, "issue_comment") {
			sawComment = true
			for job, j := range w.Jobs {
				for _, a := range []string{"author_association", "OWNER", "MEMBER", "COLLABORATOR"} {
					if !strings.Contains(j.If, a) {
						t.Errorf("%s: job %s `if:` does not filter on %s: an outsider's comment would start a runner", name, job, a)
					}
				}
			}
		}
	}
	if !sawComment || !sawTwoJob {
		t.Errorf("the comment recipe (%v) or the two-job recipe (%v) was not found", sawComment, sawTwoJob)
	}
}

// TestReadmeStatesLicenceAndPrerequisites checks the README's set-up facts
// against the repository, and the facts a newcomer needs where they are.
func TestReadmeStatesLicenceAndPrerequisites(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	if !strings.Contains(readRepoFile(t, "LICENSE"), "Apache License\n                           Version 2.0, January 2004") {
		t.Error("LICENSE is not the Apache License 2.0")
	}
	setup := readmeSection(t, "Set-up: two commands")
	for _, want := range []string{"C compiler", "curl", "tar", "sha256sum", "about 100 s", "go run ./cmd/mini-agent demo",
		"scripts/test.sh", "about 3 GB"} {
		if !strings.Contains(setup, want) {
			t.Errorf("the set-up section does not state %q", want)
		}
	}
	if !strings.Contains(readmeSection(t, "Licence"), "[Apache License, Version 2.0](LICENSE)") {
		t.Error("the README does not state the licence")
	}
	for file, wants := range map[string][]string{
		"README.md":      {"`workflows: [CI]` must be **exactly** the `name:`", "**default branch**"},
		"docs/models.md": {"`--base-url` requires `--model`", "MINI_AGENT_MODEL"},
	} {
		for _, want := range wants {
			if !strings.Contains(readRepoFile(t, file), want) {
				t.Errorf("%s does not say %q", file, want)
			}
		}
	}
	ci := loadWorkflow(t, ".github/workflows/ci.yml")
	if !strings.Contains(readme, "this repository's is `"+ci.Name+"`") {
		t.Errorf("the README does not name this repository's CI workflow %q", ci.Name)
	}
}

// TestReadmeFirstScreen: the README leads with what mini-agent does and a
// quick start that works as pasted: a whole workflow with the permissions
// publishing needs, the repository setting GitHub's PRs need (named as
// GitHub's UI names it), and the secret; it stays short, and links every
// page of docs/.
func TestReadmeFirstScreen(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("the README has %d lines; the reference belongs in docs/", n)
	}
	intro, _, _ := strings.Cut(readme, "\n## ")
	if !strings.Contains(intro, "pull request that fixes it") {
		t.Error("the README does not lead with what mini-agent does")
	}
	quick := readmeSection(t, "Quick start")
	if !strings.HasPrefix(strings.TrimSpace(readme[strings.Index(readme, "\n## "):]), "## Quick start") {
		t.Error("the quick start is not the README's first section")
	}
	blocks := yamlBlocks(quick)
	if len(blocks) != 1 || blocks[0].marker != "" {
		t.Fatalf("the quick start has %d workflow blocks, want one whole workflow", len(blocks))
	}
	var w struct {
		Permissions map[string]string `yaml:"permissions"`
	}
	if err := yaml.Unmarshal([]byte(blocks[0].text), &w); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"contents": "write", "pull-requests": "write", "actions": "read"} {
		if w.Permissions[k] != v {
			t.Errorf("the quick start's permissions: %s is %q, want %q", k, w.Permissions[k], v)
		}
	}
	flat := strings.Join(strings.Fields(quick), " ")
	for _, want := range []string{"Settings → Actions → General → Workflow permissions → \"Allow GitHub Actions to create and approve pull requests\"", "OPENAI_API_KEY"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the quick start does not say %q", want)
		}
	}
	for _, f := range docFiles(t)[1:] {
		if !strings.Contains(readme, "]("+f+")") {
			t.Errorf("the README does not link %s", f)
		}
	}
}

// bundleFlag is a `--bundle PATH` in a step's command.
var bundleFlag = regexp.MustCompile(`--bundle\s+("[^"]*"|\S+)`)

// TestReadmeTwoJobRecipeKeepsTheBundleOutOfTheWorkspace: the job that runs
// the tests writes its bundle to RUNNER_TEMP and uploads it from there,
// never in the workspace the test code writes in (where it could plant a
// link at the path).
func TestReadmeTwoJobRecipeKeepsTheBundleOutOfTheWorkspace(t *testing.T) {
	t.Parallel()
	saw := 0
	for name, w := range readmeWorkflows(t) {
		for job, j := range w.Jobs {
			for i, s := range j.Steps {
				for _, m := range bundleFlag.FindAllStringSubmatch(s.Run, -1) {
					saw++
					if !strings.HasPrefix(strings.Trim(m[1], `"`), "$RUNNER_TEMP/") {
						t.Errorf("%s: job %s step %d writes the bundle to %s, not under $RUNNER_TEMP", name, job, i+1, m[1])
					}
				}
				if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && strings.Contains(s.With["name"], "mini-agent") &&
					!strings.HasPrefix(s.With["path"], "${{ runner.temp }}/") {
					t.Errorf("%s: job %s step %d uploads %q, not from runner.temp", name, job, i+1, s.With["path"])
				}
			}
		}
	}
	if saw == 0 {
		t.Error("no README workflow writes a bundle: is the two-job recipe still there?")
	}
}
