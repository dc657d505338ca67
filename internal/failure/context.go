package failure

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// renderMessageCaps are the successive caps on each message when the
// rendered context does not fit its budget.
var renderMessageCaps = []int{maxMessage, 1024, 512, 256, 160, 100}

const (
	// renderHeaderMax bounds the step and command lines.
	renderHeaderMax = 400
	// renderNoteReserve is kept free for the "N omitted" note.
	renderNoteReserve = 96
)

// Merge combines contexts from several jobs or matrix legs: identical
// failures (same package and id) and build errors (same location and
// message) are kept once with their counts added. The step, command and
// exit code come from the first context that has them. Nil contexts are
// skipped.
func Merge(contexts ...*FailureContext) *FailureContext {
	out := &FailureContext{}
	fIndex := map[string]int{}
	bIndex := map[string]int{}
	var sources []string
	for _, c := range contexts {
		if c == nil {
			continue
		}
		for _, f := range c.Failures {
			k := failureKey(f.Package, f.ID)
			if f.Count < 1 {
				f.Count = 1
			}
			if i, ok := fIndex[k]; ok {
				old := &out.Failures[i]
				old.Count += f.Count
				if old.Location == "" {
					old.Location = f.Location
				}
				if old.Message == "" {
					old.Message = f.Message
				}
				if old.Excerpt == "" {
					old.Excerpt = f.Excerpt
				}
				continue
			}
			fIndex[k] = len(out.Failures)
			out.Failures = append(out.Failures, f)
		}
		for _, b := range c.BuildErrors {
			k := b.Location + "\x00" + b.Message
			if b.Count < 1 {
				b.Count = 1
			}
			if i, ok := bIndex[k]; ok {
				out.BuildErrors[i].Count += b.Count
				continue
			}
			bIndex[k] = len(out.BuildErrors)
			out.BuildErrors = append(out.BuildErrors, b)
		}
		out.Omitted += c.Omitted
		if out.Step == "" && out.Command == "" && out.ExitCode == 0 {
			out.Step, out.Command, out.ExitCode = c.Step, c.Command, c.ExitCode
		}
		if out.Generic == "" {
			out.Generic = c.Generic
		}
		if out.Budget == 0 {
			out.Budget = c.Budget
		}
		if c.Note != "" && !strings.Contains(out.Note, c.Note) {
			if out.Note != "" {
				out.Note += "; "
			}
			out.Note += c.Note
		}
		for _, s := range strings.Split(c.Source, ",") {
			if s != "" && !slices.Contains(sources, s) {
				sources = append(sources, s)
			}
		}
	}
	if len(out.Failures) > 0 || len(out.BuildErrors) > 0 {
		out.Generic = ""
		sources = without(sources, "generic")
	}
	out.Source = strings.Join(sources, ",")
	return out
}

func without(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// Empty reports whether nothing failed as far as the context knows.
func (c *FailureContext) Empty() bool {
	return c == nil || len(c.Failures) == 0 && len(c.BuildErrors) == 0 && c.Generic == ""
}

// IDs returns the failing test ids in report order, without duplicates.
func (c *FailureContext) IDs() []string {
	if c == nil {
		return nil
	}
	var ids []string
	seen := map[string]bool{}
	for _, f := range c.Failures {
		if !seen[f.ID] {
			seen[f.ID] = true
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// Signature is a stable hash of the sorted failing tests (package and id)
// and build-error locations, for recognizing the same failure again. A
// context with neither hashes its step, command and exit code.
func (c *FailureContext) Signature() string {
	if c == nil {
		return ""
	}
	var keys []string
	for _, f := range c.Failures {
		keys = append(keys, "test\x00"+f.Package+"\x00"+f.ID)
	}
	for _, b := range c.BuildErrors {
		loc := b.Location
		if loc == "" {
			loc = b.Message
		}
		keys = append(keys, "build\x00"+loc)
	}
	if len(keys) == 0 {
		keys = append(keys, fmt.Sprintf("step\x00%s\x00%s\x00%d", c.Step, c.Command, c.ExitCode))
	}
	sort.Strings(keys)
	h := sha256.New()
	prev := ""
	for _, k := range keys {
		if k == prev {
			continue
		}
		prev = k
		h.Write([]byte(k))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// renderItem is one build error or failure in the rendered text.
type renderItem struct {
	head    string // the id or location line
	loc     string
	msg     string
	excerpt string
}

func (it renderItem) essential(msgCap int) string {
	var b strings.Builder
	b.WriteString(it.head)
	b.WriteByte('\n')
	if it.loc != "" {
		b.WriteString("   at ")
		b.WriteString(it.loc)
		b.WriteByte('\n')
	}
	if it.msg != "" {
		b.WriteString(indent(clip(it.msg, msgCap), "   "))
		b.WriteByte('\n')
	}
	return b.String()
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// Render writes the context as text for the model within budget bytes
// (the context's Budget, or DefaultBudget, when budget <= 0). Each
// failure's location and message come before any excerpt: excerpts are
// dropped first, then messages shortened, then failures left out with a
// note saying how many.
func (c *FailureContext) Render(budget int) string {
	if budget <= 0 {
		budget = c.Budget
	}
	if budget <= 0 {
		budget = DefaultBudget
	}
	var head strings.Builder
	if c.Step != "" {
		head.WriteString("Failed step: " + c.Step)
		if c.ExitCode != 0 {
			fmt.Fprintf(&head, " (exit code %d)", c.ExitCode)
		}
		head.WriteByte('\n')
	}
	if c.Command != "" && c.Command != strings.TrimPrefix(c.Step, "Run ") {
		head.WriteString("Command: " + strings.ReplaceAll(c.Command, "\n", "\n  ") + "\n")
	}
	if c.Note != "" {
		head.WriteString("Note: " + c.Note + "\n")
	}
	items := c.items()
	if len(items) == 0 {
		return c.renderGeneric(clip(head.String(), renderHeaderMax), budget)
	}
	header := clip(head.String(), renderHeaderMax) + c.summaryLine()
	caps := renderMessageCaps
	var parts []string
	kept := len(items)
	for ci, mc := range caps {
		parts = parts[:0]
		size := len(header)
		for _, it := range items {
			e := it.essential(mc)
			parts = append(parts, e)
			size += len(e)
		}
		if size <= budget {
			break
		}
		if ci < len(caps)-1 {
			continue
		}
		// Even the shortest messages do not fit: leave failures out.
		size = len(header) + renderNoteReserve
		kept = 0
		for _, p := range parts {
			if size+len(p) > budget {
				break
			}
			size += len(p)
			kept++
		}
		parts = parts[:kept]
	}
	// Excerpts, each with a fair share of what is left.
	left := budget - len(header) - renderNoteReserve
	for _, p := range parts {
		left -= len(p)
	}
	var b strings.Builder
	b.WriteString(header)
	for i, p := range parts {
		b.WriteString(p)
		if ex := items[i].excerpt; ex != "" && left > 40 {
			share := left / (len(parts) - i)
			text := indent(clip(ex, share-8), "   | ") + "\n"
			if len(text) <= share {
				b.WriteString(text)
				left -= len(text)
			}
		}
	}
	if omitted := len(items) - kept + c.Omitted; omitted > 0 {
		fmt.Fprintf(&b, "%d more failures omitted to fit the budget; use the tools to see them.\n", omitted)
	}
	return clip(b.String(), budget)
}

func (c *FailureContext) summaryLine() string {
	var parts []string
	if n := len(c.BuildErrors); n > 0 {
		parts = append(parts, fmt.Sprintf("%d build error(s)", n))
	}
	if n := len(c.Failures); n > 0 {
		parts = append(parts, fmt.Sprintf("%d failing test(s)", n))
	}
	s := strings.Join(parts, ", ")
	if c.Source != "" {
		s += " (from " + c.Source + " output)"
	}
	return s + ":\n"
}

func (c *FailureContext) items() []renderItem {
	var items []renderItem
	for _, b := range c.BuildErrors {
		head := "- build error"
		if b.Count > 1 {
			head += fmt.Sprintf(" (seen %d times)", b.Count)
		}
		items = append(items, renderItem{head: head, loc: b.Location, msg: b.Message})
	}
	for _, f := range c.Failures {
		head := "- FAIL " + f.ID
		if f.Package != "" {
			head += " [" + f.Package + "]"
		}
		if f.Count > 1 {
			head += fmt.Sprintf(" (seen %d times)", f.Count)
		}
		items = append(items, renderItem{head: head, loc: f.Location, msg: f.Message, excerpt: f.Excerpt})
	}
	return items
}

func (c *FailureContext) renderGeneric(header string, budget int) string {
	var b strings.Builder
	b.WriteString(header)
	if c.Generic == "" {
		b.WriteString("No failure was recognized in the log.\n")
		return clip(b.String(), budget)
	}
	b.WriteString("No test failure was recognized; excerpts of the failed output:\n")
	left := budget - b.Len()
	b.WriteString(clip(c.Generic, max(0, left-1)))
	b.WriteByte('\n')
	return clip(b.String(), budget)
}
