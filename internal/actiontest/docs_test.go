package actiontest

import (
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a markdown link's target: a path, an anchor, or both.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingSlug is GitHub's anchor for a heading: lower case, letters, digits,
// spaces, hyphens and underscores kept, spaces turned into hyphens.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the heading anchors of a markdown text (outside code).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if h, ok := strings.CutPrefix(l, "#"); ok && !fence {
			out[headingSlug(strings.TrimLeft(h, "#"))] = true
		}
	}
	return out
}

// TestDocsLinksResolve: every relative link of the README and docs/*.md
// names a file of the repository and, with an anchor, a heading there.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, f := range docFiles(t) {
		text := readRepoFile(t, f)
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := f
			if file != "" {
				dest = path.Clean(path.Join(path.Dir(f), file))
			}
			checked++
			destText := readRepoFile(t, dest) // fails the test when the file is missing
			if anchor != "" && !anchors(destText)[anchor] {
				t.Errorf("%s links %s: %s has no heading with anchor #%s", f, target, dest, anchor)
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d relative links checked: is the link syntax still found?", checked)
	}
}

// TestDocsOneHeadingPerTopic: no section heading appears twice across the
// README and docs/ (a topic has one home; the others link it).
func TestDocsOneHeadingPerTopic(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, f := range docFiles(t) {
		for a := range anchors(readRepoFile(t, f)) {
			if prev, ok := seen[a]; ok && a != "" {
				t.Errorf("heading #%s is in %s and %s", a, prev, f)
			}
			seen[a] = f
		}
	}
}

func TestHeadingSlug(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		"GitHub's refusals":                         "githubs-refusals",
		"1. A step after failing tests":             "1-a-step-after-failing-tests",
		`Proof of fix: what "validated" guarantees`: "proof-of-fix-what-validated-guarantees",
		"The policy file: `.github/mini-agent.yml`": "the-policy-file-githubmini-agentyml",
	} {
		if got := headingSlug(h); got != want {
			t.Errorf("headingSlug(%q) = %q, want %q", h, got, want)
		}
	}
}
