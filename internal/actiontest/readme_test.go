package actiontest

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
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
