package glob

import (
	"math/rand/v2"
	"path"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pat, name string
		want      bool
	}{
		{".github/**", ".github/workflows/ci.yml", true},
		{".github/**", ".github", true},
		{".github/**", "src/.github/x", false},
		{"**/.env", ".env", true},
		{"**/.env", "a/b/.env", true},
		{"**/.env", "a/b/.envrc", false},
		{"**/.env.*", "config/.env.local", true},
		{"*.go", "main.go", true},
		{"*.go", "pkg/main.go", false},
		{"pkg/**/*.go", "pkg/a/b/c.go", true},
		{"pkg/**/*.go", "pkg/c.go", true},
		{"[", "[", false},
		{"vendor/**", "vendor/x/y.go", true},
	}
	for _, c := range cases {
		if got := Match(c.pat, c.name); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pat, c.name, got, c.want)
		}
	}
	if p, ok := Any([]string{"*.md", ".git/**"}, ".git/config"); !ok || p != ".git/**" {
		t.Errorf("Any = %q %v", p, ok)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, g := range []string{".github/**", "**/.env.*", "a/[bc]/*.go", "**"} {
		if err := Check(g); err != nil {
			t.Errorf("Check(%q) = %v", g, err)
		}
	}
	for _, g := range []string{"", "/etc/**", `a\b`, "[", "a/[/b", "x/[z-a"} {
		if err := Check(g); err == nil {
			t.Errorf("Check(%q) accepted a pattern Match never matches", g)
		}
	}
}

// splitMatch is Match as it was written first, over strings.Split: the
// reference the allocation-free version must agree with.
func splitMatch(pattern, name string) bool {
	var match func(pat, name []string) bool
	match = func(pat, name []string) bool {
		for len(pat) > 0 {
			if pat[0] == "**" {
				if len(pat) == 1 {
					return true
				}
				for i := 0; i <= len(name); i++ {
					if match(pat[1:], name[i:]) {
						return true
					}
				}
				return false
			}
			if len(name) == 0 {
				return false
			}
			if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
				return false
			}
			pat, name = pat[1:], name[1:]
		}
		return len(name) == 0
	}
	return match(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

// TestMatchAgreesWithSplit compares Match with the strings.Split reference
// on generated patterns and paths, empty segments and bad classes included.
func TestMatchAgreesWithSplit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 24))
	patAtoms := []string{"**", "*", "a", "b", "*.go", "a*", "?", "[ab]", "[", "", "x?z", "[!a]", "[^b]*"}
	nameAtoms := []string{"a", "b", "ab", "x.go", "", "xyz", "[", "a.go", "**"}
	build := func(atoms []string) string {
		parts := make([]string, 1+r.IntN(5))
		for i := range parts {
			parts[i] = atoms[r.IntN(len(atoms))]
		}
		return strings.Join(parts, "/")
	}
	for range 20000 {
		p, n := build(patAtoms), build(nameAtoms)
		if got, want := Match(p, n), splitMatch(p, n); got != want {
			t.Fatalf("Match(%q, %q) = %v, the reference says %v", p, n, got, want)
		}
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		Match("packages/**/test/*/fixtures/**/*.js", "packages/babel-core/test/a/fixtures/x/y/z/input.js")
		Match("/packages/*/lib", "packages/a/lib")
	})
	if allocs != 0 {
		t.Errorf("Match allocates %.1f times per call", allocs)
	}
}
