package redact

import (
	"regexp"
	"strings"
)

// Pattern redaction: the token formats GitHub and the major model and
// cloud providers issue are masked wherever they appear, whether or not
// mini-agent knows the value (a token persisted by a step before it, a key
// in a file test code printed). Each pattern keeps the format's public
// prefix and masks the rest: "ghs_***", "sk-ant-***", "AKIA***".
//
// A match must start a word (the byte before it is not a letter, a digit
// or '_', or ends a backslash escape such as the \n of a JSON string), so
// "task-…" never reads as "sk-…"; and, where the format is random base62,
// the masked part must mix at least two of upper case, lower case and
// digits, so kebab-case and snake_case words ("sk-learn-compatible-…",
// "ghp_placeholder_for_the_docs_page_here") stay as they are.

// pattern is one format.
type pattern struct {
	name string
	// re's group 1 is kept (the prefix), group 2 masked (the secret).
	re *regexp.Regexp
	// hints: at least one must be in the text for re to run at all (the
	// texts are large; most hold no candidate).
	hints []string
	// word: the match must start a word.
	word bool
	// mixed: the secret must mix two of upper, lower, digits.
	mixed bool
	// notAfter: the byte after the match must not be one of these (the
	// fixed-length formats, which a longer word is not).
	notAfter string
	// token: an issued token format (Tokens reports it), not a syntax that
	// carries any credential (a header, a key file).
	token bool
}

const (
	alnum     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	wordBytes = alnum + "_"
)

// patterns, in order: a longer prefix before a shorter one it starts with
// (sk-ant- before sk-).
var patterns = []pattern{
	{
		// GitHub: personal access tokens (classic) ghp_, OAuth access
		// tokens gho_, GitHub App user-to-server ghu_, server-to-server
		// (installation tokens, GITHUB_TOKEN) ghs_, refresh tokens ghr_;
		// charset [A-Za-z0-9_], 36 characters after the prefix today, up
		// to 255 announced ("Authentication token format updates", GitHub
		// changelog, 2021-03-04 and 2021-03-31).
		name: "github", re: regexp.MustCompile(`(gh[pousr]_)([A-Za-z0-9_]{36,255})`),
		hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, word: true, mixed: true, token: true,
	},
	{
		// GitHub fine-grained personal access tokens: github_pat_ then
		// [A-Za-z0-9_] (22 + "_" + 59 characters today; GitHub docs,
		// "Managing your personal access tokens").
		name: "github-fine-grained", re: regexp.MustCompile(`(github_pat_)([A-Za-z0-9_]{20,255})`),
		hints: []string{"github_pat_"}, word: true, mixed: true, token: true,
	},
	{
		// Anthropic API keys: sk-ant- then a kind and a version
		// (sk-ant-api03-…, sk-ant-admin01-…, sk-ant-oat01-…) and base64url
		// text (Anthropic Console; the API's x-api-key examples).
		name: "anthropic", re: regexp.MustCompile(`(sk-ant-)([A-Za-z0-9_-]{20,255})`),
		hints: []string{"sk-ant-"}, word: true, mixed: true, token: true,
	},
	{
		// OpenAI API keys: sk- then base62 text (legacy user keys, 48
		// characters), project keys sk-proj-, service-account keys
		// sk-svcacct-, admin keys sk-admin- (OpenAI platform, "API keys").
		name: "openai", re: regexp.MustCompile(`(sk-(?:proj-|svcacct-|admin-)?)([A-Za-z0-9_-]{20,255})`),
		hints: []string{"sk-"}, word: true, mixed: true, token: true,
	},
	{
		// AWS access key ids: AKIA (long-term, an IAM user's) and ASIA
		// (temporary, from AWS STS), then 16 upper-case letters and
		// digits (AWS IAM User Guide, "IAM identifiers", unique ID
		// prefixes; STS GetAccessKeyInfo). Not mixed: a key id may be all
		// letters.
		name: "aws", re: regexp.MustCompile(`(A[KS]IA)([A-Z0-9]{16})`),
		hints: []string{"AKIA", "ASIA"}, word: true, notAfter: alnum, token: true,
	},
	{
		// Slack tokens: xoxb- (bot), xoxp- (user), xoxa-, xoxr-, xoxs-,
		// xoxe- (configuration and refresh), xoxc-/xoxd- (session), then
		// digits, letters and dashes (Slack API docs, "Token types").
		name: "slack", re: regexp.MustCompile(`(xox[abcdeprs]-)([A-Za-z0-9-]{10,255})`),
		hints: []string{"xox"}, word: true, mixed: true, token: true,
	},
	{
		// Google API keys (Gemini, Maps, Cloud): AIza then 35 characters
		// of [0-9A-Za-z_-], 39 in all (Google Cloud docs, "Manage API
		// keys").
		name: "google", re: regexp.MustCompile(`(AIza)([0-9A-Za-z_-]{35})`),
		hints: []string{"AIza"}, word: true, mixed: true, notAfter: wordBytes + "-", token: true,
	},
	{
		// An HTTP Authorization (or Proxy-Authorization) header's
		// credentials, in a header dump, a git config (http.extraheader =
		// AUTHORIZATION: basic …), curl's -H, a JSON or YAML map: the
		// scheme (Basic, Bearer, token) stays, the credentials go
		// (RFC 9110 §11.6.2).
		name: "authorization", re: regexp.MustCompile(`((?i:authorization)["']?\s*[:=]\s*["']?(?i:basic|bearer|token)\s+)([A-Za-z0-9+/=._~-]{8,})`),
		hints: []string{"uthorization", "UTHORIZATION"}, mixed: true,
	},
	{
		// A PEM private key block (an SSH key actions/checkout's ssh-key
		// input writes to the runner's temp directory, a TLS key): the
		// body goes, to the END line or the end of the text when the
		// block was cut (RFC 7468).
		name: "private-key", re: regexp.MustCompile(`(-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY-----)((?s:.+?)(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY-----|\z))`),
		hints: []string{"PRIVATE KEY-----"},
	},
}

// mask replaces a secret.
const mask = "***"

// Patterns masks every token of a known format in s (see the pattern
// table); every Func New builds applies it after the known values.
func Patterns(s string) string {
	for i := range patterns {
		s = patterns[i].replace(s)
	}
	return s
}

// Tokens returns the tokens of an issued format in s (GitHub, OpenAI,
// Anthropic, AWS, Slack, Google), in order, not the credentials of a
// header or a key block.
func Tokens(s string) []string {
	var out []string
	for i := range patterns {
		p := &patterns[i]
		if !p.token {
			continue
		}
		p.each(s, func(_, start, end int) { out = append(out, s[start:end]) })
	}
	return out
}

// replace masks p's secrets in s.
func (p *pattern) replace(s string) string {
	var b strings.Builder
	last := 0
	p.each(s, func(from, _, end int) {
		b.WriteString(s[last:from])
		b.WriteString(mask)
		last = end
	})
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// each calls f with the bounds of every accepted match: where its secret
// starts, and where the whole match starts and ends.
func (p *pattern) each(s string, f func(secretStart, start, end int)) {
	if !p.present(s) {
		return
	}
	next := p.hintFinder(s)
	for pos := 0; pos < len(s); {
		if p.word {
			// A word pattern's match starts at one of its hints: one that
			// does not start a word is skipped before the regexp runs.
			i := next(pos)
			if i < 0 {
				return
			}
			if !wordStart(s, i) {
				pos = i + 1
				continue
			}
			pos = i
		}
		m := p.re.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			return
		}
		start, end, secretStart := pos+m[0], pos+m[1], pos+m[4]
		switch {
		case p.word && !wordStart(s, start), p.notAfter != "" && end < len(s) && strings.IndexByte(p.notAfter, s[end]) >= 0:
			// Another match may start inside this one ("risk-sk-proj-…").
			pos = start + 1
		case p.mixed && !mixed(s[secretStart:end]):
			// One starting inside it would mask a part of the same word,
			// which is not mixed either: go on after it (and stay linear
			// on "sk-sk-sk-…").
			pos = end
		default:
			f(secretStart, start, end)
			pos = max(end, start+1)
		}
	}
}

// hintFinder returns a function giving the first index at or after pos
// where one of p's hints starts (-1: none), each hint searched once per
// occurrence.
func (p *pattern) hintFinder(s string) func(pos int) int {
	at := make([]int, len(p.hints))
	for i := range at {
		at[i] = -2 // not searched yet
	}
	return func(pos int) int {
		best := -1
		for i, h := range p.hints {
			if at[i] == -1 {
				continue // no more
			}
			if at[i] < pos {
				j := strings.Index(s[pos:], h)
				if j < 0 {
					at[i] = -1
					continue
				}
				at[i] = pos + j
			}
			if best < 0 || at[i] < best {
				best = at[i]
			}
		}
		return best
	}
}

func (p *pattern) present(s string) bool {
	for _, h := range p.hints {
		if strings.Contains(s, h) {
			return true
		}
	}
	return false
}

// wordStart reports whether a match at i starts a word: at the start of s,
// after a byte that is not a letter, digit or '_', or after a backslash
// escape of one letter (JSON's \n, \t, \r, \b, \f) or a \uXXXX escape.
func wordStart(s string, i int) bool {
	if i == 0 || strings.IndexByte(wordBytes, s[i-1]) < 0 {
		return true
	}
	if i >= 2 && s[i-2] == '\\' && strings.IndexByte("ntrbf", s[i-1]) >= 0 {
		return true
	}
	if i >= 6 && s[i-6] == '\\' && s[i-5] == 'u' && isHex(s[i-4:i]) {
		return true
	}
	return false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("0123456789abcdefABCDEF", s[i]) < 0 {
			return false
		}
	}
	return true
}

// mixed reports whether s has bytes of at least two of the classes upper
// case, lower case and digits: generated text, not a word.
func mixed(s string) bool {
	var upper, lower, digit int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			upper = 1
		case 'a' <= c && c <= 'z':
			lower = 1
		case '0' <= c && c <= '9':
			digit = 1
		}
	}
	return upper+lower+digit >= 2
}
