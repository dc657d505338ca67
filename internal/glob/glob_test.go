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
