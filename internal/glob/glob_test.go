package glob

import "testing"

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

func TestAnyFold(t *testing.T) {
	pats := []string{".github/**", "**/.env"}
	for name, want := range map[string]string{
		".github/workflows/ci.yml": ".github/**",
		".GITHUB/Workflows/ci.yml": ".github/**",
		"app/.ENV":                 "**/.env",
		"app/env":                  "",
		"github/x":                 "",
	} {
		got, ok := AnyFold(pats, name)
		if got != want || ok != (want != "") {
			t.Errorf("AnyFold(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if _, ok := Any(pats, ".GITHUB/x"); ok {
		t.Error("Any must stay case-sensitive")
	}
}
