// Package patch owns apply_patch's engine: it parses a sloppy patch (a
// git/unified diff or the "*** Begin Patch" envelope), locates every hunk in
// the real file by its content alone (line numbers and counts are hints),
// refuses anything ambiguous, rebuilds an exact git diff against the real
// bytes, and checks that diff with go-gitdiff before anyone writes a byte.
// Commit then writes the result under an os.Root, all or nothing.
//
// Leaf engine: imports nothing above it.
package patch

import (
	"fmt"
	"io/fs"
	"strings"
)

// Limits on untrusted input. A patch or file past them is refused with a
// clear message rather than processed slowly.
const (
	// MaxPatchBytes bounds the patch text.
	MaxPatchBytes = 4 << 20
	// MaxFileBytes bounds a file the patch reads or writes.
	MaxFileBytes = 8 << 20
	// MaxHunks bounds the hunks of one patch; each costs a scan of its file.
	MaxHunks = 2000
	// MaxFiles bounds the number of file sections in one patch.
	MaxFiles = 500
	// maxProblems bounds how many problems one error reports in detail.
	maxProblems = 8
)

// Op says what a file section does.
type Op int

// File operations. A rename is an OpUpdate with a MoveTo.
const (
	OpUpdate Op = iota
	OpCreate
	OpDelete
)

func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpDelete:
		return "delete"
	}
	return "update"
}

// Patch is a parsed patch: one FilePatch per file section, in patch order.
type Patch struct {
	Files []*FilePatch
}

// FilePatch is one file section of a patch.
type FilePatch struct {
	Op Op
	// Path is the file the section reads (for a create: the file it writes).
	// It is cleaned and workspace-relative; callers may replace it (and
	// MoveTo) with the symlink-resolved path before Apply.
	Path string
	// MoveTo is the rename target, or "".
	MoveTo string
	// Exec is the executable bit requested by the patch ("new mode 100755",
	// "new file mode 100755"); nil keeps the file's current mode.
	Exec *bool
	// Hunks are the changes, in patch order.
	Hunks []*Hunk
}

// Paths returns every path the section touches: Path and, for a rename, MoveTo.
func (f *FilePatch) Paths() []string {
	if f.MoveTo != "" && f.MoveTo != f.Path {
		return []string{f.Path, f.MoveTo}
	}
	return []string{f.Path}
}

// Paths returns every path the patch would create, modify, delete or rename
// (source and target), each once, in patch order.
func (p *Patch) Paths() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range p.Files {
		for _, q := range f.Paths() {
			if !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	return out
}

// Hunk is one hunk as the patch states it. Everything about its position is
// a hint; Lines decide where it applies.
type Hunk struct {
	// OldStart is the old-side line number from the header, 0 if absent or
	// unparsable. It chooses between equal places (byLine) and appears in
	// messages.
	OldStart int64
	// Hints are the texts after "@@" (git's function context, or the
	// envelope's scope lines), outermost first.
	Hints []string
	// Lines are the context (' '), removed ('-') and added ('+') lines.
	Lines []Line
	// AtEOF is set by "*** End of File": the hunk must end at the file's end.
	AtEOF bool
	// NoEOLOld and NoEOLNew record "\ No newline at end of file" markers for
	// the old and new side of the hunk's last line.
	NoEOLOld, NoEOLNew bool
	// Marked is true if the hunk carried any "\ No newline" marker; only then
	// do NoEOLOld/NoEOLNew decide the final newline of the result.
	Marked bool

	// counted is set when a unified diff's header gave line counts;
	// oldCount and newCount are the lines it announced (hints, but they
	// tell a complete hunk from a cut one).
	counted            bool
	oldCount, newCount int
}

// Line is one hunk line: Kind is ' ', '-' or '+'; Text has no line ending.
type Line struct {
	Kind byte
	Text string
}

// old returns the hunk's context and removed lines, in order.
func (h *Hunk) old() []string {
	var out []string
	for _, l := range h.Lines {
		if l.Kind != '+' {
			out = append(out, l.Text)
		}
	}
	return out
}

// added reports whether the hunk only adds lines.
func (h *Hunk) addsOnly() bool {
	for _, l := range h.Lines {
		if l.Kind != '+' {
			return false
		}
	}
	return true
}

// ErrorKind classifies an Error.
type ErrorKind int

// Error kinds; the tool maps them to result codes.
const (
	// KindInvalid: the patch text cannot be understood.
	KindInvalid ErrorKind = iota
	// KindUnsafePath: a path is absolute, uses "..", or points into .git.
	KindUnsafePath
	// KindRejected: the patch is understood but does not apply unambiguously.
	KindRejected
)

// Trailer ends every error message: the model must know nothing happened.
const Trailer = "no files were changed"

// Error is a patch problem meant for the model: what went wrong, where, and
// what to do. Error() always ends with Trailer.
type Error struct {
	Kind     ErrorKind
	Problems []string
	// Missing lists paths the patch expects to exist but that do not, so a
	// caller can suggest near names.
	Missing []string
}

func (e *Error) Error() string {
	probs := e.Problems
	extra := ""
	if len(probs) > maxProblems {
		extra = fmt.Sprintf("\n\n(%d more problems not shown)", len(probs)-maxProblems)
		probs = probs[:maxProblems]
	}
	return strings.Join(probs, "\n\n") + extra + "\n\n" + Trailer
}

func errorf(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Problems: []string{fmt.Sprintf(format, args...)}}
}

// Result is a validated patch, ready to be written.
type Result struct {
	// Files are the changed files, in patch order. Sections that change
	// nothing are left out.
	Files []*FileChange
	// Diff is the rebuilt git diff of every file, exact against the real
	// bytes; it is what the bundle and the PR show.
	Diff string
}

// FileChange is the computed outcome for one file.
type FileChange struct {
	Op Op
	// OldPath is the file before (empty for a create); NewPath the file after
	// (empty for a delete). They differ for a rename.
	OldPath, NewPath string
	// Old and New are the whole contents before and after (nil if absent).
	Old, New []byte
	// OldMode and NewMode are the permission bits before and after (0 if absent).
	OldMode, NewMode fs.FileMode
	// Added and Deleted count lines in the rebuilt diff.
	Added, Deleted int
	// Diff is this file's part of Result.Diff.
	Diff string

	ops      []diffOp // edit script of an update, from the engine
	oldLines *lines   // Old's line index, when the engine made one
}
