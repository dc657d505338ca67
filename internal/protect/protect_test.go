package protect

import (
	"errors"
	"path"
	"slices"
	"testing"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	user, err := New([]string{"migrations/**", "**/*.PEM"})
	if err != nil {
		t.Fatal(err)
	}
	gitOnly, err := New([]string{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		set  *Set
		path string
		want string // "" for not protected
	}{
		{nil, ".github/workflows/ci.yml", ".github/**"},
		{nil, ".GITHUB/workflows/x.yml", ".github/**"},
		{nil, ".Github/Workflows/ci.yml", ".github/**"},
		{nil, ".git/config", GitGlob},
		{nil, ".GIT/hooks/x", GitGlob},
		{nil, ".git", GitGlob},
		{nil, "vendor/lib/.Git/config", NestedGitGlob},
		{nil, "app/.ENV", "**/.env"},
		{nil, "a/.env.Local", "**/.env.*"},
		{nil, "./x/../.github/w.yml", ".github/**"},
		{nil, `.github\workflows\ci.yml`, ".github/**"},
		{nil, "/.github/x", ".github/**"},
		{nil, "github/x.go", ""},
		{nil, "app/env", ""},
		{nil, "src/.github/x", ""},
		{nil, "a/.gitignore", ""},
		{Default(), ".GITHUB/x", ".github/**"},
		{user, "Migrations/001.sql", "migrations/**"},
		{user, "certs/key.pem", "**/*.PEM"},
		{user, ".GIT/hooks/x", GitGlob},
		{user, ".github/workflows/ci.yml", ""}, // the caller's globs replace the defaults
		{gitOnly, ".git/config", GitGlob},
		{gitOnly, ".github/x", ""},
	}
	for _, c := range cases {
		got, ok := c.set.Match(c.path)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%v.Match(%q) = %q, %v; want %q", c.set, c.path, got, ok, c.want)
		}
	}
}

// A glob matching with the path's own case is reported before one that
// matches only ignoring case.
func TestMatchPrefersExactCase(t *testing.T) {
	t.Parallel()
	s, err := New([]string{"DOCS/**", "docs/**"})
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := s.Match("docs/a.md"); g != "docs/**" {
		t.Errorf("Match = %q, want docs/**", g)
	}
}

func TestNewRefusesBadGlobs(t *testing.T) {
	t.Parallel()
	for _, g := range []string{"", "[", "/abs/**", `a\b`} {
		_, err := New([]string{"ok/**", g})
		var ge *GlobError
		if !errors.As(err, &ge) || ge.Glob != g {
			t.Errorf("New(%q) = %v, want a GlobError naming it", g, err)
		}
		if _, err := WithDefaults([]string{g}); err == nil {
			t.Errorf("WithDefaults(%q) accepted", g)
		}
	}
	if err := Check("["); !errors.Is(err, path.ErrBadPattern) {
		t.Errorf("Check([) = %v", err)
	}
}

func TestListsAndDefaults(t *testing.T) {
	t.Parallel()
	want := []string{".github/**", "**/.env", "**/.env.*"}
	if got := Defaults(); !slices.Equal(got, want) {
		t.Fatalf("Defaults = %v", got)
	}
	d := Defaults()
	d[0] = "changed"
	if Defaults()[0] != ".github/**" {
		t.Fatal("Defaults returned the package's own slice")
	}
	s, err := WithDefaults([]string{"x/**"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Globs(); !slices.Equal(got, append(want, "x/**")) {
		t.Errorf("WithDefaults globs = %v", got)
	}
	if got := s.String(); got != ".git/**, **/.git/**, .github/**, **/.env, **/.env.*, x/**" {
		t.Errorf("String = %q", got)
	}
	var nilSet *Set
	if got := nilSet.List(); !slices.Equal(got, []string{GitGlob, NestedGitGlob, ".github/**", "**/.env", "**/.env.*"}) {
		t.Errorf("nil List = %v", got)
	}
	if n, _ := New(nil); n != Default() {
		t.Error("New(nil) is not the default set")
	}
	globs := []string{"a/**"}
	s2, _ := New(globs)
	globs[0] = "b/**"
	if _, ok := s2.Match("a/x"); !ok {
		t.Error("New kept the caller's slice")
	}
}

func TestInGit(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		".git": true, ".GIT/config": true, "a/.Git": true, "a/b/.git/x": true,
		".gitignore": false, "a/.github/x": false, "git/x": false, "": false,
	} {
		if got := InGit(p); got != want {
			t.Errorf("InGit(%q) = %v", p, got)
		}
	}
}
