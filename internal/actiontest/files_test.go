package actiontest

import (
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
)

// repoRoot is the module root: `go test` runs in the package directory,
// internal/actiontest.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		tb.Fatalf("module root %s: %v", root, err)
	}
	return root
}

// readRepoFile reads a file of the repository by its slash path.
func readRepoFile(tb testing.TB, rel string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(tb), filepath.FromSlash(rel)))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// step is a workflow or composite-action step.
type step struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Run   string            `yaml:"run"`
	Shell string            `yaml:"shell"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
}

// workflow is the part of a workflow file the tests read.
type workflow struct {
	Name string            `yaml:"name"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Env      map[string]string `yaml:"env"`
		Strategy struct {
			Matrix struct {
				Include []map[string]string `yaml:"include"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []step `yaml:"steps"`
	} `yaml:"jobs"`
}

// action is action.yml.
type action struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []step `yaml:"steps"`
	} `yaml:"runs"`
}

// loadYAML parses a repository file strictly into v.
func loadYAML(tb testing.TB, rel string, v any) {
	tb.Helper()
	if err := yaml.Unmarshal([]byte(readRepoFile(tb, rel)), v); err != nil {
		tb.Fatalf("%s: %v", rel, err)
	}
}

func loadWorkflow(tb testing.TB, rel string) workflow {
	tb.Helper()
	var w workflow
	loadYAML(tb, rel, &w)
	return w
}

func loadAction(tb testing.TB) action {
	tb.Helper()
	var a action
	loadYAML(tb, "action.yml", &a)
	return a
}

// stepNamed returns the step of job with the given name.
func (w workflow) stepNamed(tb testing.TB, job, name string) step {
	tb.Helper()
	for _, s := range w.Jobs[job].Steps {
		if s.Name == name {
			return s
		}
	}
	tb.Fatalf("workflow %q: job %q has no step %q", w.Name, job, name)
	return step{}
}

// stepID returns the composite step with the given id.
func (a action) stepID(tb testing.TB, id string) step {
	tb.Helper()
	for _, s := range a.Runs.Steps {
		if s.ID == id {
			return s
		}
	}
	tb.Fatalf("action.yml: no step with id %q", id)
	return step{}
}

// filepathGlob lists the repository files matching a slash pattern, as slash
// paths relative to root.
func filepathGlob(root, pattern string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
	for i, m := range matches {
		if matches[i], err = relSlash(root, m); err != nil {
			return nil, err
		}
	}
	return matches, err
}

// relSlash is filepath.Rel as a slash path.
func relSlash(root, p string) (string, error) {
	rel, err := filepath.Rel(root, p)
	return filepath.ToSlash(rel), err
}
