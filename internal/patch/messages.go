package patch

import (
	"fmt"
	"strings"
)

// Bounds on what an error message quotes, so a huge hunk or file cannot
// flood the model's context.
const (
	maxShownLines   = 30
	maxShownLineLen = 200
	maxCandidates   = 10
	regionMargin    = 2
)

func clip(s string) string {
	if len(s) > maxShownLineLen {
		return s[:maxShownLineLen] + "…"
	}
	return s
}

// mismatch explains a hunk that matches nowhere: what it expected and the
// region of the file that resembles it most.
func (t *target) mismatch(path string, k, total int, h *Hunk, old []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s does not match the file", describe(path, k, total))
	if h.OldStart > 0 {
		fmt.Fprintf(&b, " (its header says line %d; the file has %d lines)", h.OldStart, t.lines.n())
	}
	b.WriteString(".\nThe hunk expects these lines (its context and '-' lines, in order):\n")
	for i, s := range old {
		if i == maxShownLines {
			fmt.Fprintf(&b, "    … (%d more)\n", len(old)-i)
			break
		}
		fmt.Fprintf(&b, "    %s\n", clip(s))
	}
	for _, s := range old {
		if k, _, ok := looseMarker(s); ok && isFileMarker(k) {
			fmt.Fprintf(&b, "(The line %q inside the hunk is read as an unchanged line, not a marker: markers start at the beginning of the line.)\n", clip(" "+s))
			break
		}
	}
	start, score := t.nearest(old)
	switch {
	case score == 0 && start >= 0:
		fmt.Fprintf(&b, "No line matches exactly; the most similar region of the file is around line %d:\n", max(start, 0)+1)
	case score == 0 && h.OldStart > 0 && h.OldStart <= int64(t.lines.n()):
		start = int(h.OldStart) - 1
		fmt.Fprintf(&b, "None of these lines occur in the file. Around line %d (from the hunk header) the file has:\n", h.OldStart)
	case score == 0:
		b.WriteString("None of these lines occur in the file.")
		return b.String() + " Read the file again (read_file) and copy the context and '-' lines from its current content."
	default:
		from, to := max(start, 0)+1, min(start+len(old), t.lines.n())
		fmt.Fprintf(&b, "The closest region of the file is lines %d-%d (%d of %d lines match):\n", from, to, score, len(old))
	}
	lo := max(start-regionMargin, 0)
	hi := min(start+len(old)+regionMargin, t.lines.n(), lo+maxShownLines)
	for i := lo; i < hi; i++ {
		fmt.Fprintf(&b, "%6d | %s\n", i+1, clip(t.lines.text(i)))
	}
	b.WriteString("Copy the context and '-' lines exactly from the file's current content (read_file shows it).")
	return b.String()
}

func ambiguous(path string, k, total int, cands []int, how, why string) string {
	var nums []string
	for i, c := range cands {
		if i == maxCandidates {
			nums = append(nums, fmt.Sprintf("and %d more", len(cands)-i))
			break
		}
		nums = append(nums, fmt.Sprint(c+1))
	}
	count := fmt.Sprint(len(cands))
	if len(cands) >= maxMatches {
		count = "at least " + count
	}
	if why != "" {
		why = " (" + why + ")"
	}
	return fmt.Sprintf("%s matches the file (%s) at %s places, starting at lines %s, so it is ambiguous%s. Add unchanged lines before or after the change until the hunk matches exactly one place, or start it with an '@@' line naming the enclosing function or class.",
		describe(path, k, total), how, count, strings.Join(nums, ", "), why)
}
