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
	readme := readRepoFile(t, "README.md")
	_, rest, ok := strings.Cut(readme, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("README has no %q section", title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// tableNames lists the first-column `names` of the table under a "### title".
func tableNames(t *testing.T, section, title string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(section, "\n### "+title+"\n")
	if !ok {
		t.Fatalf("no %q table", title)
	}
	if i := strings.Index(rest, "\n### "); i >= 0 {
		rest = rest[:i]
	}
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|").FindAllStringSubmatch(rest, -1) {
		names = append(names, m[1])
	}
	return names
}

func TestReadmeDocumentsEveryInputAndOutput(t *testing.T) {
	t.Parallel()
	section := readmeSection(t, "Installing the action")
	a := loadAction(t)
	for _, c := range []struct {
		title string
		names []string
	}{{"Inputs", slices.Sorted(maps.Keys(a.Inputs))}, {"Outputs", slices.Sorted(maps.Keys(a.Outputs))}} {
		got := tableNames(t, section, c.title)
		names := c.names
		if !slices.Equal(slices.Sorted(slices.Values(got)), names) {
			t.Errorf("README %s table lists %v; action.yml has %v", c.title, got, names)
		}
	}
	if !strings.Contains(section, "uses: org/mini-agent@v1") {
		t.Error("the section does not show `uses: org/mini-agent@v1`")
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

// readmeWorkflows parses the README's whole-workflow yaml blocks.
func readmeWorkflows(t *testing.T) map[string]readmeWorkflow {
	t.Helper()
	out := map[string]readmeWorkflow{}
	for _, b := range yamlBlocks(readRepoFile(t, "README.md")) {
		if b.marker != "" {
			continue
		}
		var w readmeWorkflow
		if err := yaml.Unmarshal([]byte(b.text), &w); err != nil {
			t.Fatalf("README.md:%d: %v", b.line, err)
		}
		out[fmt.Sprintf("README.md:%d", b.line)] = w
	}
	if len(out) < 4 {
		t.Fatalf("found %d README workflows, want the three ways and the two-job recipe", len(out))
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
// against the repository.
func TestReadmeStatesLicenceAndPrerequisites(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	if !strings.Contains(readRepoFile(t, "LICENSE"), "Apache License\n                           Version 2.0, January 2004") {
		t.Error("LICENSE is not the Apache License 2.0")
	}
	setup := readmeSection(t, "Set-up: two commands")
	for _, want := range []string{"C compiler", "curl", "tar", "sha256sum", "about 100 s"} {
		if !strings.Contains(setup, want) {
			t.Errorf("the set-up section does not state %q", want)
		}
	}
	if !strings.Contains(readmeSection(t, "Licence"), "[Apache License, Version 2.0](LICENSE)") {
		t.Error("the README does not state the licence")
	}
	for _, want := range []string{"`--base-url` requires `--model`", "MINI_AGENT_MODEL", "`workflows: [CI]` must be **exactly** the `name:`", "**default branch**"} {
		if !strings.Contains(readme, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
	ci := loadWorkflow(t, ".github/workflows/ci.yml")
	if !strings.Contains(readme, "this repository's is `"+ci.Name+"`") {
		t.Errorf("the README does not name this repository's CI workflow %q", ci.Name)
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
