package proc

import (
	"slices"
	"strings"
)

// minSecretValueLen is the shortest value SecretValues reports: shorter
// values ("1", "true") would redact ordinary words all over a log.
const minSecretValueLen = 8

// secretNames are always scrubbed, whatever the patterns below say.
var secretNames = []string{
	"GITHUB_TOKEN",
	"GH_TOKEN",
	"ACTIONS_RUNTIME_TOKEN",
	"OPENAI_API_KEY",
	"ANTHROPIC_API_KEY",
}

// secretPrefixes are scrubbed as name prefixes.
var secretPrefixes = []string{"ACTIONS_ID_TOKEN_REQUEST_"}

// secretParts mark a secret wherever they appear in a name.
var secretParts = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY", "API_KEY"}

// secretSuffixes mark a secret at the end of a name.
var secretSuffixes = []string{"_KEY", "_PAT"}

// IsSecretName reports whether the environment variable name is scrubbed:
// the fixed list (GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_*,
// the model API keys), any name containing TOKEN, SECRET, PASSWORD, PASSWD,
// CREDENTIAL or API_KEY, or ending in _KEY or _PAT, and the extra names.
// Matching is case-insensitive. An extra name ending in "*" is a prefix.
func IsSecretName(name string, extraNames []string) bool {
	u := strings.ToUpper(name)
	if slices.Contains(secretNames, u) {
		return true
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	for _, p := range secretParts {
		if strings.Contains(u, p) {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(u, s) {
			return true
		}
	}
	for _, e := range extraNames {
		e = strings.ToUpper(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if prefix, ok := strings.CutSuffix(e, "*"); ok {
			if prefix != "" && strings.HasPrefix(u, prefix) {
				return true
			}
		} else if u == e {
			return true
		}
	}
	return false
}

// commandFileNames point at the GitHub runner's command files, through
// which a step sets the environment, PATH, outputs and state of the steps
// after it, and at the runner's service URLs. They are not secrets, but
// code under test (which the model may have written) must not get them.
var commandFileNames = []string{"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY",
	"ACTIONS_RUNTIME_URL", "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL"}

func isCommandFileName(name string) bool {
	return slices.Contains(commandFileNames, strings.ToUpper(name))
}

// ScrubEnv returns env ("NAME=value" entries) without the secret variables
// IsSecretName recognises and without the runner's command-file variables
// (see WithoutCommandFiles). The input is not modified.
func ScrubEnv(env []string, extraNames []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, ok := envName(kv); ok && (IsSecretName(name, extraNames) || isCommandFileName(name)) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// WithoutCommandFiles returns env without the runner's command-file paths
// (GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY)
// and service URLs, keeping secrets (the harness still needs their values
// to redact them). The input is not modified.
func WithoutCommandFiles(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, ok := envName(kv); ok && isCommandFileName(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// SecretValues returns the distinct values of the variables ScrubEnv would
// remove, longest first, skipping values shorter than 8 bytes. The harness
// uses them to redact logs, traces and PR text.
func SecretValues(env []string, extraNames []string) []string {
	var out []string
	for _, kv := range env {
		name, value, ok := envName(kv)
		if !ok || !IsSecretName(name, extraNames) || len(value) < minSecretValueLen {
			continue
		}
		if !slices.Contains(out, value) {
			out = append(out, value)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// envName splits "NAME=value". Windows keeps per-drive entries such as
// "=C:=C:\dir"; their leading '=' belongs to the name.
func envName(kv string) (name, value string, ok bool) {
	i := strings.IndexByte(kv[min(1, len(kv)):], '=')
	if i < 0 {
		return kv, "", false
	}
	i += min(1, len(kv))
	return kv[:i], kv[i+1:], true
}

// allowedNames are the variables a test command keeps (exact names,
// case-insensitive): the user, locale, terminal, temp dir and CI markers
// build tools and test runners read, and proxy settings.
var allowedNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "HOSTNAME",
	"TMPDIR", "TEMP", "TMP", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR",
	"CI", "GITHUB_ACTIONS", "RUNNER_OS", "RUNNER_ARCH", "RUNNER_TEMP", "RUNNER_TOOL_CACHE",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
	"VIRTUAL_ENV", "CONDA_PREFIX", "JAVA_HOME",
}

// allowedPrefixes are kept as name prefixes (case-insensitive): locale
// categories and the toolchains' own settings (Go, cgo, Node and npm,
// Python and pip, Rust, Java builds).
var allowedPrefixes = []string{
	"LC_", "GO", "CGO_", "NODE_", "NPM_CONFIG_", "YARN_", "PYTHON", "PIP_", "PYTEST_",
	"CARGO", "RUSTUP", "RUST", "JAVA_", "GRADLE_", "MAVEN_",
}

// IsAllowedName reports whether a test command keeps the variable: it is
// on the fixed allow-list (see allowedNames, allowedPrefixes) or among
// extra (exact names; a trailing "*" makes a prefix). Matching is
// case-insensitive. A name allowed here is still dropped when it looks
// like a secret (see AllowEnv).
func IsAllowedName(name string, extra []string) bool {
	u := strings.ToUpper(name)
	if slices.Contains(allowedNames, u) {
		return true
	}
	for _, p := range allowedPrefixes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	for _, e := range extra {
		e = strings.ToUpper(strings.TrimSpace(e))
		if prefix, ok := strings.CutSuffix(e, "*"); ok {
			if prefix != "" && strings.HasPrefix(u, prefix) {
				return true
			}
		} else if e != "" && u == e {
			return true
		}
	}
	return false
}

// AllowEnv returns the environment a test command gets: only the variables
// IsAllowedName keeps (with extraAllowed), and of those none that ScrubEnv
// would remove (secret names, with extraSecret; the runner's command
// files). An allow-listed name that looks like a secret (GOPROXY_TOKEN,
// npm_config__auth*) is still dropped. The input is not modified.
func AllowEnv(env []string, extraAllowed, extraSecret []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, ok := envName(kv)
		// npm keeps registry credentials in npm_config__auth and friends.
		if ok && IsAllowedName(name, extraAllowed) && !strings.HasPrefix(strings.ToUpper(name), "NPM_CONFIG__") {
			out = append(out, kv)
		}
	}
	return ScrubEnv(out, extraSecret)
}
