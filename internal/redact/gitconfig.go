package redact

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/safefile"
)

// Credential is a credential a git config file persists.
type Credential struct {
	// Key is the config key that holds it, as git lists it
	// ("http.https://github.com/.extraheader"). A URL's user info in a
	// subsection ("url.https://TOKEN@github.com/.insteadof") is part of
	// the key: redact it before showing it.
	Key string
	// File is the config file that sets it.
	File string
	// Values are what to redact: the value and the parts of it that
	// authenticate on their own, decoded (at least 8 bytes each).
	Values []string
}

// maxConfigFile bounds one config file read.
const maxConfigFile = 1 << 20

// maxIncludeDepth is git's own limit on nested includes.
const maxIncludeDepth = 10

// FromGitConfig reads the credentials the git configuration of the
// repository at dir persists, before code under test runs: every
// *.extraheader (actions/checkout's "AUTHORIZATION: basic
// base64(x-access-token:TOKEN)") and every URL with user info in a key or
// a value (remote.*.url, url.*.insteadOf, credential.*, submodule.*.url,
// http.proxy…).
//
// The files are the repository's config and config.worktree (a linked
// worktree's own and its common directory's), and every file they include
// through include.path or includeIf.*.path, whatever the condition (a
// superset of what git reads): actions/checkout v6 persists the token in
// $RUNNER_TEMP/git-credentials-*.config, which the repository's config
// includes. Each file is read the non-blocking way and parsed by `git
// config --file - --no-includes --list -z` from standard input: git opens
// no path the config names and runs nothing it chooses; the includes are
// followed here, as files read, up to git's depth of 10. A missing file is
// skipped. Global and system config are not read.
//
// No repository at dir is no credential. A file that cannot be read or
// parsed is reported in the error, after what the others hold.
func FromGitConfig(ctx context.Context, dir string) ([]Credential, error) {
	gitDir, err := gitexec.GitDir(dir)
	if err != nil || gitDir == "" {
		return nil, err
	}
	files := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}
	if data, err := safefile.ReadPath(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		common = filepath.Clean(common)
		files = append(files, filepath.Join(common, "config"), filepath.Join(common, "config.worktree"))
	}
	r := &configReader{seen: map[string]bool{}}
	for _, f := range files {
		r.read(ctx, f, 0)
	}
	return r.creds, errors.Join(r.errs...)
}

type configReader struct {
	seen  map[string]bool
	creds []Credential
	errs  []error
}

func (r *configReader) read(ctx context.Context, path string, depth int) {
	path = filepath.Clean(path)
	if r.seen[path] {
		return
	}
	r.seen[path] = true
	data, err := readConfigFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("git config %s: %w", path, err))
		return
	}
	entries, err := parseConfig(ctx, data)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("git config %s: %w", path, err))
		return
	}
	for _, e := range entries {
		if values := credentialValues(e.key, e.value); len(values) > 0 {
			r.creds = append(r.creds, Credential{Key: e.key, File: path, Values: values})
		}
		if inc, ok := includePath(e.key, e.value, path); ok && depth < maxIncludeDepth {
			r.read(ctx, inc, depth+1)
		}
	}
}

// readConfigFile reads a config file without blocking on a FIFO; a
// symbolic link (git follows one) is resolved first.
func readConfigFile(path string) ([]byte, error) {
	data, err := safefile.ReadPath(path, maxConfigFile)
	if errors.Is(err, safefile.ErrNotRegular) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, terr := filepath.EvalSymlinks(path)
			if terr != nil {
				return nil, terr
			}
			return safefile.ReadPath(target, maxConfigFile)
		}
	}
	return data, err
}

type configEntry struct{ key, value string }

// parseConfig lists a config file's entries with git, from standard input.
// git runs in an empty directory of its own with GIT_DIR naming a
// directory that does not exist: it discovers no repository, so it reads
// no other config (a repository's, with its includes, would be read to set
// git up).
func parseConfig(ctx context.Context, data []byte) ([]configEntry, error) {
	empty, err := os.MkdirTemp("", "mini-agent-gitconfig-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(empty)
	out, err := gitexec.Run(ctx, gitexec.Options{Dir: empty, Env: []string{"GIT_DIR=" + filepath.Join(empty, "none")}, Stdin: bytes.NewReader(data)},
		"config", "--file", "-", "--no-includes", "--list", "-z")
	if err != nil {
		return nil, err
	}
	var entries []configEntry
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		key, value, _ := strings.Cut(rec, "\n") // a key without "=" has no value
		entries = append(entries, configEntry{key: key, value: value})
	}
	return entries, nil
}

// includePath resolves an include.path or includeIf.<condition>.path
// entry of the config file at from as git does: "~/" is the home
// directory, a relative path is relative to the including file's
// directory.
func includePath(key, value, from string) (string, bool) {
	section, _, ok := strings.Cut(key, ".")
	if !ok || !strings.HasSuffix(key, ".path") || (section != "include" && section != "includeif") || value == "" {
		return "", false
	}
	p := value
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		p = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(from), p)
	}
	return p, true
}

// credentialValues are the secrets of one config entry: an extra header's,
// and those of every URL with user info in its key or value.
func credentialValues(key, value string) []string {
	var out []string
	if strings.HasSuffix(key, ".extraheader") {
		out = append(out, headerSecrets(value)...)
	}
	out = append(out, urlSecrets(key)...)
	out = append(out, urlSecrets(value)...)
	return keepSecrets(out)
}

// headerSecrets are the secrets of an HTTP header "Name: Scheme
// credentials": the whole header, its value, the credentials, and, when
// they are base64, the decoded text and its user and password.
func headerSecrets(h string) []string {
	h = strings.TrimSpace(h)
	_, v, ok := strings.Cut(h, ":")
	if !ok {
		return []string{h}
	}
	v = strings.TrimSpace(v)
	if len(v) < minSecretLen {
		return nil // "X-Trace: 1": no credential
	}
	out := []string{h, v}
	cred := v
	if scheme, rest, ok := strings.Cut(v, " "); ok && isSchemeName(scheme) {
		cred = strings.TrimSpace(rest)
		out = append(out, cred)
	}
	if dec, ok := decodeBase64(cred); ok {
		out = append(out, dec)
		if user, pass, ok := strings.Cut(dec, ":"); ok {
			out = append(out, userPass(user, pass)...)
		}
	}
	return out
}

// isSchemeName reports whether s is an auth scheme's name (Basic, Bearer,
// token): letters only.
func isSchemeName(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}

// decodeBase64 decodes s in either alphabet, padded or not, when the
// result is printable text.
func decodeBase64(s string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(s)
		if err != nil || len(b) == 0 || !utf8.Valid(b) {
			continue
		}
		if strings.IndexFunc(string(b), func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			continue
		}
		return string(b), true
	}
	return "", false
}

// urlSecrets are the user info secrets of every URL in s
// ("https://x-access-token:TOKEN@github.com/o/r"), as written and
// percent-decoded.
func urlSecrets(s string) []string {
	var out []string
	for rest := s; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return out
		}
		rest = rest[i+3:]
		authority := rest
		if j := strings.IndexAny(authority, "/?# \t\n"); j >= 0 {
			authority = authority[:j]
		}
		at := strings.LastIndexByte(authority, '@')
		if at < 0 {
			continue
		}
		info := authority[:at]
		user, pass, hasPass := strings.Cut(info, ":")
		if hasPass {
			out = append(out, info)
		}
		for _, form := range []func(string) string{identity, unescape} {
			u, p := form(user), form(pass)
			if !hasPass {
				p = ""
			}
			out = append(out, userPass(u, p)...)
		}
	}
}

func identity(s string) string { return s }

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// userPass are the secrets of a user and password pair: the password
// (unless a well-known placeholder), and the user when it is a token
// (GitHub takes a token as the user name, "TOKEN:x-oauth-basic"), not a
// name such as x-access-token or git.
func userPass(user, pass string) []string {
	var out []string
	if pass != "" && !slices.Contains(placeholders, pass) {
		out = append(out, pass)
	}
	if tokenLike(user) && !slices.Contains(placeholders, user) {
		out = append(out, user)
	}
	return out
}

// placeholders are the user names and passwords that stand beside a token
// and are no secret.
var placeholders = []string{"x-access-token", "x-oauth-basic", "oauth2", "git", "token"}

// keepSecrets drops duplicates and values shorter than the shortest
// secret redacted.
func keepSecrets(values []string) []string {
	var out []string
	for _, v := range values {
		if len(v) >= minSecretLen && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// minSecretLen is the shortest config value redacted, as for the
// environment's (internal/proc): shorter ones would mask ordinary words.
const minSecretLen = 8

// Masked returns, for each config file that persists one of creds (as
// FromGitConfig found them), its content without them: every entry of a
// credential's key is removed, and a URL-valued one (remote.origin.url)
// comes back with its user info cut. The result is what code under test
// may see in place of the file (internal/sandbox masks it), keyed by the
// file's path. The files are parsed and edited by git, as FromGitConfig
// reads them: on copies, with no repository and no include followed.
func Masked(ctx context.Context, creds []Credential) (map[string]string, error) {
	byFile := map[string][]string{}
	var files []string
	for _, c := range creds {
		if _, ok := byFile[c.File]; !ok {
			files = append(files, c.File)
		}
		if !slices.Contains(byFile[c.File], c.Key) {
			byFile[c.File] = append(byFile[c.File], c.Key)
		}
	}
	out := map[string]string{}
	var errs []error
	for _, f := range files {
		content, err := maskFile(ctx, f, byFile[f])
		if err != nil {
			errs = append(errs, fmt.Errorf("git config %s: %w", f, err))
			continue
		}
		out[f] = content
	}
	return out, errors.Join(errs...)
}

// maskFile is the file at path without the entries of keys.
func maskFile(ctx context.Context, path string, keys []string) (string, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return "", err
	}
	entries, err := parseConfig(ctx, data)
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "mini-agent-gitconfig-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	copyPath := filepath.Join(work, "config")
	if err := os.WriteFile(copyPath, data, 0o600); err != nil {
		return "", err
	}
	git := func(args ...string) error {
		_, err := gitexec.Run(ctx, gitexec.Options{Dir: work, Env: []string{"GIT_DIR=" + filepath.Join(work, "none")}},
			append([]string{"config", "--file", copyPath}, args...)...)
		return err
	}
	for _, key := range keys {
		if err := git("--unset-all", key); err != nil {
			return "", fmt.Errorf("remove %s: %w", key, err)
		}
		if strings.HasSuffix(key, ".extraheader") || len(urlSecrets(key)) > 0 {
			continue // the whole entry is the credential
		}
		for _, e := range entries {
			if e.key != key {
				continue
			}
			if v := withoutUserInfo(e.value); v != e.value || len(urlSecrets(v)) == 0 {
				if err := git("--add", key, v); err != nil {
					return "", fmt.Errorf("restore %s: %w", key, err)
				}
			}
		}
	}
	b, err := os.ReadFile(copyPath)
	return string(b), err
}

// withoutUserInfo cuts the user info out of every URL in s.
func withoutUserInfo(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := len(s)
		if j := strings.IndexAny(s, "/?# \t\n"); j >= 0 {
			end = j
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			s = s[at+1:]
		}
	}
}
