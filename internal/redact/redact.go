// Package redact owns secret redaction: which values are secrets (the
// environment's secret-named variables, as internal/proc scrubs them from
// the test command, and the credentials a git config persists, which
// FromGitConfig reads), the token formats masked whatever their value
// (Patterns), and the replacer that masks them, whole, in part and
// base64-encoded, in everything the model, the trace, the bundle and the
// PR see.
//
// Leaf engine: imports nothing above it (internal/proc, internal/gitexec,
// internal/safefile).
package redact

import (
	"encoding/base64"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/org/mini-agent/internal/proc"
)

// Func masks secrets in a text.
type Func func(string) string

// FromEnv is the redactor for the secret values in environ: the variables
// with secret-looking names, and extraNames.
func FromEnv(environ, extraNames []string) Func {
	return New(proc.SecretValues(environ, extraNames))
}

// New replaces every secret value with ***, also base64-encoded
// (actions/checkout keeps the token in .git/config as
// base64("x-access-token:TOKEN"), which test code can print), then masks
// the token formats Patterns knows, whatever their value.
func New(secrets []string) Func {
	values := Values(secrets)
	return func(s string) string { return Patterns(values(s)) }
}

// Values is New without the patterns: it masks the given values only. It
// is what judges a change (a diff may hold a token-like test fixture of
// the repository's own; only a value mini-agent knows is a leak for sure).
func Values(secrets []string) Func {
	if len(secrets) == 0 {
		return func(s string) string { return s }
	}
	var all []string
	for _, s := range secrets {
		all = append(all, s)
		all = append(all, base64Forms(s)...)
	}
	// Longest first, so a secret that contains another is replaced whole.
	sort.SliceStable(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	pairs := make([]string, 0, 2*len(all))
	for _, s := range all {
		pairs = append(pairs, s, "***")
	}
	// Then fragments: a tool that cuts long lines (read_file, search) may
	// show only part of a secret. Any run of FragmentLen bytes of one is
	// masked; whole matches come first in the list, so they win.
	seen := map[string]bool{}
	for _, s := range all {
		if !tokenLike(s) {
			continue // a path or a phrase: its parts are ordinary text
		}
		for i := 0; i+FragmentLen <= len(s); i++ {
			if f := s[i : i+FragmentLen]; !seen[f] {
				seen[f] = true
				pairs = append(pairs, f, "***")
			}
		}
	}
	return strings.NewReplacer(pairs...).Replace
}

// Holds reports whether s contains a secret r masks: for a Func from New,
// a known value or a token of a known format; for one from Values, a
// known value only.
func (r Func) Holds(s string) bool { return r(s) != s }

// tokenLike reports whether a secret looks like a generated token (long,
// one word, letters and digits, no path): only such secrets have their
// parts masked.
func tokenLike(s string) bool {
	if len(s) < 20 || strings.ContainsAny(s, " /\\\t\n") {
		return false
	}
	return strings.ContainsAny(s, "0123456789") && strings.IndexFunc(s, unicode.IsLetter) >= 0
}

// FragmentLen is the shortest part of a token-like secret that is masked
// on its own: long enough not to match ordinary text, short enough that a
// cut secret leaks at most FragmentLen-1 bytes.
const FragmentLen = 12

// base64Forms returns the base64 text that encodes secret wherever it sits
// in the encoded data: for each of the three byte alignments and both
// alphabets, the characters whose six bits all come from the secret (the
// edge characters depend on the neighbouring bytes and are left out).
func base64Forms(secret string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := 0; k < 3; k++ {
			data := append(make([]byte, k), secret...)
			text := enc.EncodeToString(data)
			from, to := (8*k+5)/6, 8*len(data)/6
			if to-from < minBase64Redact {
				continue
			}
			if form := text[from:to]; !slices.Contains(out, form) {
				out = append(out, form)
			}
		}
	}
	return out
}

// minBase64Redact is the shortest base64 fragment redacted: shorter ones
// would match ordinary text.
const minBase64Redact = 8
