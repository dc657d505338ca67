// Package report renders a bundle for people: the pull-request body (also
// the job summary and the --summary file) and the terminal report.
//
// Job level: renders the bundle; imports nothing but the bundle and the loop's report type.
package report

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/org/mini-agent/internal/bundle"
)

// MarkerPrefix starts the hidden marker that identifies mini-agent's PRs and
// comments; the failure signature follows it.
const MarkerPrefix = "<!-- mini-agent:signature="

// Marker is the hidden marker for a signature.
func Marker(signature string) string { return MarkerPrefix + signature + " -->" }

// maxBodyBytes keeps a PR body under GitHub's 65,536-character limit.
const maxBodyBytes = 60_000

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?(-->|$)`)
	mention     = regexp.MustCompile(`(^|[^\w\x60])@([A-Za-z0-9][A-Za-z0-9-]*)`)
)

// Untrusted makes model-written text safe to embed: no hidden HTML comments
// (they could forge our marker or hide instructions), no @-mentions that
// would notify people.
func Untrusted(s string) string {
	s = htmlComment.ReplaceAllString(s, "")
	// Removing "<!-- x -->" from "<!-<!-- x -->-" leaves a new "<!--":
	// defuse what is left (linear, and creates no new opener).
	s = strings.ReplaceAll(s, "<!--", "&lt;!--")
	return mention.ReplaceAllString(s, "$1@\u200b$2")
}

// Options add publishing context to the body.
type Options struct {
	// CINote explains whether CI will run on the PR; empty omits it.
	CINote string
	// Title of the first section; default chosen from the status.
	Headline string
	// Version of mini-agent writing the report, shown in the footer; empty
	// means the version recorded in the bundle, if any.
	Version string
}

// Body renders the pull-request body / job summary / --summary markdown.
func Body(b *bundle.Bundle, o Options) string {
	var w strings.Builder
	head := o.Headline
	if head == "" {
		head = headline(b)
	}
	fmt.Fprintf(&w, "## mini-agent: %s\n\n", head)
	if why := Why(b); why != "" {
		fmt.Fprintf(&w, "**%s**\n\n", Untrusted(upperFirst(why)))
	}
	switch {
	case b.Extra.RunURL != "":
		fmt.Fprintf(&w, "Failing run: %s\n\n", b.Extra.RunURL)
	case b.Extra.Policy != "":
		// Published from GitHub with no known failing run (a comment
		// command): no link rather than a link to mini-agent's own run.
		w.WriteString("Failing run: none known; the failure below is what mini-agent reproduced on this head.\n\n")
	}
	if b.Extra.Policy != "" {
		fmt.Fprintf(&w, "Write policy: **%s**. %s\n\n", b.Extra.Policy, b.Extra.Reason)
	}
	if b.Status == bundle.StatusNotReproduced && b.Run.Steps == 0 {
		// Nothing ran but the baseline: its proof is the whole report.
		w.WriteString(Proof(b))
		for _, x := range b.Warnings {
			fmt.Fprintf(&w, "- warning: %s\n", x)
		}
		w.WriteString(Footer(first(o.Version, b.MiniAgentVersion)))
		if b.Signature != "" {
			w.WriteString(Marker(b.Signature) + "\n")
		}
		return clampBody(w.String(), b.Signature)
	}
	w.WriteString("### Summary\n\n")
	w.WriteString(orNone(Untrusted(b.Report.Summary), "_The model gave no summary._"))
	w.WriteString("\n\n### Root cause\n\n")
	w.WriteString(orNone(Untrusted(b.Report.RootCause), "_The model gave no root cause._"))
	w.WriteString("\n\n")
	if len(b.Files) > 0 {
		w.WriteString("### Changed files\n\n")
		files := append([]bundle.File(nil), b.Files...)
		sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
		for _, f := range files {
			if f.OldPath != "" {
				fmt.Fprintf(&w, "- `%s` → `%s` (%s)\n", f.OldPath, f.Path, f.Status)
			} else {
				fmt.Fprintf(&w, "- `%s` (%s)\n", f.Path, f.Status)
			}
		}
		w.WriteString("\n")
	}
	w.WriteString("### Validation (run by the harness, not the model)\n\n")
	if len(b.Validation) == 0 {
		w.WriteString("_No validation ran._\n\n")
	} else {
		w.WriteString("| check | command | exit code | duration | result |\n|---|---|---|---|---|\n")
		for _, c := range b.Validation {
			res := "passed"
			if !c.Passed {
				res = "**failed**"
				if c.TimedOut {
					res = "**timed out**"
				}
			}
			fmt.Fprintf(&w, "| %s | `%s` | %d | %.1fs | %s |\n", c.Name, cell(c.Command), c.ExitCode, c.Duration, res)
		}
		w.WriteString("\n")
	}
	w.WriteString(Proof(b))
	if b.Isolation != "" {
		fmt.Fprintf(&w, "Test command isolation: %s\n\n", b.Isolation)
	}
	w.WriteString("### Unverified assumptions\n\n")
	if len(b.Report.Assumptions) == 0 {
		if b.Report.Structured {
			w.WriteString("None stated by the model.\n\n")
		} else {
			w.WriteString("_The model's final message had no Assumptions section; treat its claims as unverified._\n\n")
		}
	} else {
		for _, a := range b.Report.Assumptions {
			fmt.Fprintf(&w, "- %s\n", Untrusted(a))
		}
		w.WriteString("\n")
	}
	if len(b.Warnings) > 0 {
		w.WriteString("### Warnings\n\n")
		for _, x := range b.Warnings {
			fmt.Fprintf(&w, "- %s\n", x)
		}
		w.WriteString("\n")
	}
	if b.Run.StoppedEarly() {
		fmt.Fprintf(&w, "### Why it stopped\n\n%s\n\n", b.Run.Detail)
	}
	w.WriteString(Trace(b))
	fmt.Fprintf(&w, "### Usage\n\n%s\n\n", Usage(b))
	if o.CINote != "" {
		fmt.Fprintf(&w, "> [!NOTE]\n> %s\n\n", o.CINote)
	}
	w.WriteString(Footer(first(o.Version, b.MiniAgentVersion)))
	if b.Signature != "" {
		w.WriteString(Marker(b.Signature))
		w.WriteString("\n")
	}
	return clampBody(w.String(), b.Signature)
}

// Trace renders the step trace as a collapsible block.
func Trace(b *bundle.Bundle) string {
	var w strings.Builder
	fmt.Fprintf(&w, "<details><summary>Step trace (%d tool calls, stop reason: %s)</summary>\n\n", len(b.Steps), b.Run.StopReason)
	if len(b.Steps) == 0 {
		w.WriteString("No tool calls.\n")
	} else {
		w.WriteString("| step | tool | arguments | outcome | duration |\n|---|---|---|---|---|\n")
		for _, s := range b.Steps {
			out := s.Outcome
			if s.Code != "" {
				out += " (" + s.Code + ")"
			}
			fmt.Fprintf(&w, "| %d | %s | `%s` | %s | %s |\n", s.Step, s.Tool, cell(Untrusted(s.Args)), out, s.Duration)
		}
	}
	w.WriteString("\n</details>\n\n")
	return w.String()
}

// Usage is the one-line usage account.
func Usage(b *bundle.Bundle) string {
	cost := "unknown (no price for this model)"
	if b.CostKnown {
		cost = fmt.Sprintf("$%.4f", b.CostUSD)
	}
	model := b.Model
	if b.Provider == "script" {
		model += " (scripted replay, no real model)"
		cost = "n/a (scripted)"
	}
	tokens := fmt.Sprintf("%d input + %d output tokens (%d cached)", b.Usage.InputTokens, b.Usage.OutputTokens, b.Usage.CacheReadTokens)
	if b.Usage.Estimated {
		tokens = fmt.Sprintf("about %d input + %d output tokens (estimated: usage not reported by the server)", b.Usage.InputTokens, b.Usage.OutputTokens)
		if b.CostKnown {
			cost = "about " + cost
		}
	}
	return fmt.Sprintf("Model `%s` · %d model turns · %s · cost %s · wall time %.1fs", model, b.Run.Steps, tokens, cost, b.Run.Duration)
}

func headline(b *bundle.Bundle) string {
	switch b.Status {
	case bundle.StatusFixed:
		return "fix validated by the harness"
	case bundle.StatusValidationFailed:
		return "attempted fix, validation FAILED"
	case bundle.StatusExplained:
		return "diagnosis (read-only)"
	case bundle.StatusNothingToFix:
		return "nothing to fix (the tests pass)"
	case bundle.StatusCancelled:
		return "cancelled"
	case bundle.StatusNotReproduced:
		return "failure not reproduced here"
	case bundle.StatusRefused:
		return "the model refused"
	}
	return "not fixed"
}

// Footer is the line that says which mini-agent wrote a report ("" when
// the version is unknown).
func Footer(version string) string {
	if version == "" {
		return ""
	}
	return fmt.Sprintf("<sub>Written by mini-agent %s.</sub>\n\n", cell(version))
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func orNone(s, none string) string {
	if strings.TrimSpace(s) == "" {
		return none
	}
	return s
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "`", "'")
	return strings.ReplaceAll(s, "\n", " ")
}

func clampBody(s, sig string) string {
	if len(s) <= maxBodyBytes {
		return s
	}
	tail := "\n\n_…body cut to fit GitHub's limit; the full report is in the bundle artifact._\n"
	if sig != "" {
		tail += Marker(sig) + "\n"
	}
	cut := maxBodyBytes - len(tail)
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + tail
}

// Text is the terminal report printed on stdout after a run.
func Text(b *bundle.Bundle) string {
	var w strings.Builder
	if why := Why(b); why != "" {
		fmt.Fprintf(&w, "mini-agent %s: %s\n", b.Mode, noCommands(why))
	} else {
		fmt.Fprintf(&w, "mini-agent %s: %s\n", b.Mode, headline(b))
	}
	if b.Run.StopReason != "" {
		fmt.Fprintf(&w, "stop reason: %s\n", b.Run.StopReason)
		// The detail says more about why the run stopped; a run that has
		// none (a validation failure after a final message) gets no line.
		if strings.TrimSpace(b.Run.Detail) != "" && (b.Run.StoppedEarly() || Why(b) != "") {
			fmt.Fprintf(&w, "%s\n", b.Run.Detail)
		}
	}
	if len(b.FailingTests) > 0 {
		fmt.Fprintf(&w, "failing tests: %s\n", strings.Join(b.FailingTests, ", "))
	}
	if s := strings.TrimSpace(b.Report.Summary); s != "" {
		fmt.Fprintf(&w, "\nSummary:\n%s\n", indent(s))
	}
	if s := strings.TrimSpace(b.Report.RootCause); s != "" {
		fmt.Fprintf(&w, "\nRoot cause:\n%s\n", indent(s))
	}
	if len(b.Report.Assumptions) > 0 {
		w.WriteString("\nUnverified assumptions:\n")
		for _, a := range b.Report.Assumptions {
			fmt.Fprintf(&w, "  - %s\n", noCommands(a))
		}
	}
	if b.Diff != "" {
		fmt.Fprintf(&w, "\nDiff:\n%s", noCommands(b.Diff))
		if !strings.HasSuffix(b.Diff, "\n") {
			w.WriteString("\n")
		}
	}
	if len(b.Validation) > 0 {
		w.WriteString("\nValidation (run by the harness):\n")
		for _, c := range b.Validation {
			res := "passed"
			if !c.Passed {
				res = "FAILED"
			}
			fmt.Fprintf(&w, "  %-18s exit %d  %.1fs  %s  (%s)\n", c.Name, c.ExitCode, c.Duration, res, c.Command)
		}
	}
	w.WriteString(proofText(b))
	for _, x := range b.Warnings {
		fmt.Fprintf(&w, "warning: %s\n", x)
	}
	fmt.Fprintf(&w, "\n%s\n", Usage(b))
	// Every field above may hold model or repository text (the failing
	// tests, the stop detail, the diff, the model's name as the endpoint
	// reported it): no escape sequence reaches the terminal, and no line
	// becomes a workflow command once they are removed.
	return noCommands(stripControls(w.String()))
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(noCommands(s), "\n", "\n  ")
}

// noCommands keeps model text printed on stdout from being read as a
// GitHub Actions workflow command ("::error::", "::add-mask::", ...) when
// mini-agent runs in a plain `run:` step: a zero-width space breaks the
// leading "::" of any line.
func noCommands(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if t := strings.TrimLeft(l, " \t"); strings.HasPrefix(t, "::") {
			lines[i] = l[:len(l)-len(t)] + ":\u200b" + t[1:]
		}
	}
	return strings.Join(lines, "\n")
}
