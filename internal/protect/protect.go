// Package protect owns the protected-path set: the paths no run may change
// and no publishing may write. It decides, in one place, the default globs,
// that git's own data (.git, any segment) is protected whatever the globs
// say, that matching ignores case (macOS and Windows checkouts treat
// ".GITHUB/workflows/x.yml" as .github/workflows/x.yml), and which user
// globs are valid. Every caller (the loop's write policy, the workspace
// sandbox, the job runner's final check, publishing and the configuration)
// asks a Set.
//
// It is a leaf engine: it imports only internal/glob.
//
// Leaf engine: imports nothing above it.
package protect

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/org/mini-agent/internal/glob"
)

// defaults are protected when the caller names no globs of its own.
var defaults = []string{".github/**", "**/.env", "**/.env.*"}

// Globs reported for git's own data, the top-level repository and nested
// ones (a submodule's gitdir file, a vendored repository).
const (
	GitGlob       = ".git/**"
	NestedGitGlob = "**/.git/**"
)

// Defaults returns the default globs (a copy).
func Defaults() []string { return slices.Clone(defaults) }

// Set is a validated protected-path set. The zero of *Set, nil, is the
// default set, so an unset field means the defaults.
type Set struct {
	globs []string
}

// defaultSet is Default's value; globs are never changed after New.
var defaultSet = &Set{globs: defaults}

// Default is the default set: the default globs and git's data.
func Default() *Set { return defaultSet }

// New returns the set protecting git's data and exactly globs; nil globs
// means the defaults, an empty non-nil list protects git's data only. A
// glob the matcher could never match is an error naming it.
func New(globs []string) (*Set, error) {
	if globs == nil {
		return defaultSet, nil
	}
	for _, g := range globs {
		if err := Check(g); err != nil {
			return nil, &GlobError{Glob: g, Err: err}
		}
	}
	return &Set{globs: slices.Clone(globs)}, nil
}

// WithDefaults returns the default set plus extra globs: the rule of the
// policy file, whose protected-paths add to the defaults and never replace
// them.
func WithDefaults(extra []string) (*Set, error) {
	return New(append(Defaults(), extra...))
}

// Check says why g is not a usable protected-path glob (one the matcher
// would silently never match), or nil.
func Check(g string) error { return glob.Check(g) }

// GlobError is a glob refused by New.
type GlobError struct {
	Glob string
	Err  error
}

func (e *GlobError) Error() string { return fmt.Sprintf("protected path %q: %v", e.Glob, e.Err) }

// Unwrap returns the reason.
func (e *GlobError) Unwrap() error { return e.Err }

// Globs returns the set's globs (a copy), without git's data, which every
// set protects.
func (s *Set) Globs() []string { return slices.Clone(s.get().globs) }

// List returns everything the set protects, git's data first, as globs.
func (s *Set) List() []string { return append([]string{GitGlob, NestedGitGlob}, s.get().globs...) }

// String is List joined with ", ", for help text and reports.
func (s *Set) String() string { return strings.Join(s.List(), ", ") }

func (s *Set) get() *Set {
	if s == nil {
		return defaultSet
	}
	return s
}

// Match reports whether the slash-separated, workspace-relative path p is
// protected, and by which glob (GitGlob or NestedGitGlob for git's data).
// p is cleaned first (see Clean), so "./.github/../.github/x" is
// .github/x. Case is ignored; a glob matching p with its own case is
// reported first.
func (s *Set) Match(p string) (string, bool) {
	p = Clean(p)
	if first, ok := gitSegment(p); ok {
		if first {
			return GitGlob, true
		}
		return NestedGitGlob, true
	}
	globs := s.get().globs
	if g, ok := glob.Any(globs, p); ok {
		return g, true
	}
	low := strings.ToLower(p)
	for _, g := range globs {
		if glob.Match(strings.ToLower(g), low) {
			return g, true
		}
	}
	return "", false
}

// Clean is the form Match compares: slashes, no leading "./" or "/",
// cleaned.
func Clean(p string) string {
	p = strings.TrimLeft(strings.TrimPrefix(strings.ReplaceAll(p, "\\", "/"), "./"), "/")
	return path.Clean(p)
}

// InGit reports whether any segment of the slash-separated path p is a
// `.git` entry (the repository's, a submodule's gitdir file or a nested
// repository's), ignoring case as macOS and Windows file systems do.
func InGit(p string) bool {
	_, ok := gitSegment(p)
	return ok
}

// gitSegment reports whether a segment of p is .git, and whether it is the
// first one.
func gitSegment(p string) (first, ok bool) {
	for i := 0; p != ""; i++ {
		var seg string
		seg, p, _ = strings.Cut(p, "/")
		if strings.EqualFold(seg, ".git") {
			return i == 0, true
		}
	}
	return false, false
}
