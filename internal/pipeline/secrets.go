package pipeline

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/redact"
	"github.com/org/mini-agent/tools"
)

// redactCheckoutCredentials extends the run's redaction, before any test
// runs, with the credentials the workspace's git config persists (the
// token actions/checkout writes unless persist-credentials is false, an
// App or PAT token that is not the one in mini-agent's environment) and
// says in the bundle that one was found, naming its key, never its value.
//
// mini-agent never needs that credential (it commits through the API),
// but it leaves the workspace's config as it is: the clean checkouts the
// baseline and the validation run in are new repositories whose config is
// git's defaults (internal/cleantree copies objects, not config), so only
// the loop's run_test, in the workspace, can read it there — and any test
// code can read the file actions/checkout v6 keeps it in, under
// $RUNNER_TEMP. Hence the warning.
//
// Progress goes through the same redaction: it is the CLI's stderr and
// the action's log.
func (s *session) redactCheckoutCredentials(ctx context.Context) {
	r := s.r
	creds, err := redact.FromGitConfig(ctx, s.ws.Dir())
	values := proc.SecretValues(r.Environ, r.SecretNames)
	var keys []string
	for _, c := range creds {
		values = append(values, c.Values...)
		key := c.Key
		if filepath.Base(c.File) != "config" {
			key += " in " + c.File // an included file: actions/checkout v6's $RUNNER_TEMP/git-credentials-*.config
		}
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	s.redact, s.known = redact.New(values), redact.Values(values)
	s.credKeys = keys
	if err != nil {
		s.b.Warnings = append(s.b.Warnings, s.redact("the checkout's git config could not be read for persisted credentials: "+oneLine(err.Error())))
	}
	// The same files, masked in every sandboxed run (the workspace's
	// run_test adds its own; the clean checkouts get these).
	masks, _, merr := tools.CredentialMasks(ctx, s.ws.Dir())
	s.credMasks = masks
	if merr != nil && err == nil {
		s.b.Warnings = append(s.b.Warnings, s.redact("the persisted credentials could not be masked for test code: "+oneLine(merr.Error())))
	}
	r.Progress = redactingWriter{w: r.Progress, rd: s.redact}
}

// credentialWarning says, at the end of the run, that the checkout's git
// config persists a credential (by key, never its value) and whether test
// code could read it: the sandbox hides it where it can make a mount
// namespace (root, passwordless sudo, an unprivileged user namespace).
func (s *session) credentialWarning() string {
	if len(s.credKeys) == 0 {
		return ""
	}
	what := "a persisted credential"
	if len(s.credKeys) > 1 {
		what = "persisted credentials"
	}
	reach := "code under test could read it (the sandbox could not hide it: see the isolation line)"
	if s.runTest.CredentialsHidden() || (s.runTest.Protections() == "" && strings.Contains(s.prove.protections, "persisted credentials hidden")) {
		reach = "the sandbox hid it from code under test"
	}
	return s.redact("the checkout's git config holds " + what + " (" + strings.Join(s.credKeys, ", ") +
		"): it is redacted everywhere, and " + reach + "; set persist-credentials: false on actions/checkout " +
		"(mini-agent never needs it: it commits through the API)")
}

// changeLeaksSecret reports whether the change must not be proposed: it
// holds a secret value mini-agent knows (anywhere in the diff or a changed
// file), or an added line brings a token of an issued format (ghs_…,
// sk-…, AKIA…) that no removed line had — code under test can copy a
// token it found (a file of the runner's, another checkout's credentials)
// into a tracked file, and the change is published verbatim. A token the
// repository already holds (a test fixture on a context line, a line
// moved or edited) does not count: pattern hits are redacted from texts,
// but only a new one discards the change.
func (s *session) changeLeaksSecret(b *bundle.Bundle) bool {
	return changeHoldsSecret(b, s.known) || len(addedTokens(b.Diff)) > 0
}

// addedTokens are the tokens of an issued format on the diff's added
// lines that none of its removed lines holds.
func addedTokens(diff string) []string {
	var added, removed []string
	for _, line := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "+"):
			added = append(added, redact.Tokens(line)...)
		case strings.HasPrefix(line, "-"):
			removed = append(removed, redact.Tokens(line)...)
		}
	}
	var out []string
	for _, t := range added {
		if !slices.Contains(removed, t) {
			out = append(out, t)
		}
	}
	return out
}

// redactEvent redacts the text values of one of the harness's own events
// (test ids and reasons come from test output).
func redactEvent(data map[string]any, rd redact.Func) map[string]any {
	for k, v := range data {
		if text, ok := v.(string); ok {
			data[k] = rd(text)
		}
	}
	return data
}

// redactingWriter redacts each write: progress is written a line at a time.
type redactingWriter struct {
	w  io.Writer
	rd redact.Func
}

func (w redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, w.rd(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
