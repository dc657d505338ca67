package route

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CommandPrefix starts a comment command.
const CommandPrefix = "/mini-agent"

// maxInstructionBytes bounds the instructions a comment may pass the model.
const maxInstructionBytes = 2000

// Command is a parsed `/mini-agent VERB [text]` comment.
type Command struct {
	// Verb is "fix", "explain" or "help" ("help" also for an unknown verb).
	Verb string
	// Unknown is the verb that was not understood, if any.
	Unknown string
	// Text is the sanitized instruction text after the verb (fix only).
	Text string
}

var hiddenHTML = regexp.MustCompile(`(?s)<!--.*?(?:-->|$)`)

// linkDefinition is a markdown link reference definition line, e.g.
// `[//]: # (text)`: it renders as nothing, a known way to hide text.
var linkDefinition = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*\S.*$`)

// Sanitize removes what a reader of the rendered comment cannot see: HTML
// comments (an unterminated one hides the rest of the text), markdown link
// reference definitions, zero-width and bidirectional-control characters,
// variation selectors, other format characters, and control characters
// except newline and tab. Text hidden from reviewers must not
// reach the model.
func Sanitize(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = hiddenHTML.ReplaceAllString(s, "")
	s = linkDefinition.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r): // Cf: ZWSP, ZWJ, LRM/RLM, LRE..RLO, LRI..PDI, BOM, soft hyphen
			return -1
		case unicode.Is(unicode.Variation_Selector, r): // invisible; runs of them can encode hidden bytes
			return -1
		case r == '\u115F' || r == '\u1160' || r == '\u3164' || r == '\uFFA0': // Hangul fillers render as blanks
			return -1
		}
		return r
	}, s)
}

// ParseCommand parses a comment body (raw; it is sanitized here). ok is
// false when the first non-empty line does not start with CommandPrefix
// followed by a space or the end of the line.
func ParseCommand(body string) (cmd Command, ok bool) {
	s := strings.TrimLeft(Sanitize(body), " \t\n")
	rest, found := strings.CutPrefix(s, CommandPrefix)
	if !found || (rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\n') {
		return Command{}, false
	}
	first, more, _ := strings.Cut(rest, "\n")
	fields := strings.Fields(first)
	if len(fields) == 0 {
		return Command{Verb: "help"}, true
	}
	verb := strings.ToLower(fields[0])
	switch verb {
	case "fix":
		text := strings.TrimSpace(strings.TrimSpace(strings.Join(fields[1:], " ")) + "\n" + more)
		return Command{Verb: "fix", Text: clip(text, maxInstructionBytes)}, true
	case "explain", "help":
		return Command{Verb: verb}, true
	}
	return Command{Verb: "help", Unknown: clip(fields[0], 40)}, true
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// HelpText is the reply to `/mini-agent help`.
const HelpText = "mini-agent commands (OWNER, MEMBER and COLLABORATOR only, unless the repository's policy says otherwise):\n\n" +
	"- `/mini-agent fix [instructions]`: reproduce the failure on this PR's head, fix it, validate it by running the tests, and publish it under the PR's label policy.\n" +
	"- `/mini-agent explain`: diagnose the failure without changing anything.\n" +
	"- `/mini-agent help`: this message.\n\n" +
	"Labels: `mini-agent:off` disables mini-agent on the PR, `mini-agent:read-only` allows explanations only, " +
	"`mini-agent:push` lets it commit to the PR's branch (same repository only). Without a label, fixes are proposed in a separate PR.\n"
