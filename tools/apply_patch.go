package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"strings"
	"sync"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/patch"
	"github.com/org/mini-agent/internal/safefile"
)

// Limits of apply_patch's answers.
const (
	// patchSyntaxErrs is how many Go syntax errors a warning quotes.
	patchSyntaxErrs = 3
	// goWholeParse is the size up to which a patched Go file is parsed
	// whole; a larger one first has only its changed declarations parsed.
	goWholeParse = 256 << 10
)

const applyPatchDescription = `Edit files by applying a patch. All or nothing: if any part fails, no file is changed.

Two forms are accepted:
1. A unified/git diff: "--- a/path" and "+++ b/path" lines (or "diff --git"), then hunks starting with "@@". Use "--- /dev/null" to create a file and "+++ /dev/null" to delete one.
2. An envelope:
*** Begin Patch
*** Update File: path/to/file.go
@@ func Enclosing() {
 unchanged context line
-removed line
+added line
*** Add File: path/new.txt
+every line of the new file
*** Delete File: path/old.txt
*** End Patch
("*** Move to: new/path" right after "*** Update File:" renames the file.)

Every hunk line starts with ' ' (unchanged), '-' (removed) or '+' (added); a line without one refuses the patch, and so does an envelope without its final "*** End Patch" line (it looks cut off). Each hunk is found by its unchanged and removed lines, which must match the current file (whitespace and quote differences are tolerated) at exactly one place; line numbers in "@@ -N,M +N,M @@" headers only choose between equal places, and only when the place at line N is clearly the nearest (within 100 lines, every other place at least twice as far). Include 2-3 unchanged lines around each change so it is unique; an "@@ text" line naming the enclosing function or class also helps. Paths are relative to the repository root.`

var applyPatchSchema = json.RawMessage(`{"type":"object","properties":{"patch":{"type":"string","description":"The patch text: a unified/git diff or a *** Begin Patch envelope."}},"required":["patch"],"additionalProperties":false}`)

// ApplyPatch is the apply_patch tool: it parses a lenient patch, checks
// every path against the workspace sandbox and policy first, computes and
// validates every file's new content (internal/patch), and only then writes,
// all or nothing.
type ApplyPatch struct {
	ws *Workspace

	mu       sync.Mutex
	lastDiff string

	// commit lets tests act between writes; zero in production.
	commit patch.CommitOptions
}

// NewApplyPatch returns the apply_patch tool over ws.
func NewApplyPatch(ws *Workspace) *ApplyPatch {
	return &ApplyPatch{ws: ws}
}

// Spec describes the tool to the model.
func (a *ApplyPatch) Spec() agent.ToolSpec {
	return agent.ToolSpec{Name: "apply_patch", Description: applyPatchDescription, InputSchema: applyPatchSchema}
}

// Mutates is true: apply_patch writes the workspace.
func (a *ApplyPatch) Mutates() bool { return true }

// LastDiff returns the rebuilt git diff of the last successful call, exact
// against the bytes it replaced. It is kept for debugging; the run's final
// diff comes from git.
func (a *ApplyPatch) LastDiff() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastDiff
}

type applyPatchArgs struct {
	Patch *string `json:"patch"`
}

func decodeApplyPatch(args json.RawMessage) (string, error) {
	var in applyPatchArgs
	if err := json.Unmarshal(args, &in); err != nil {
		return "", fmt.Errorf("arguments must be a JSON object like {\"patch\": \"...\"}: %v", err)
	}
	if in.Patch == nil {
		return "", errors.New(`the "patch" argument is required and must hold the patch text`)
	}
	return *in.Patch, nil
}

// TouchedPaths lists every path the call would create, modify, delete or
// rename (source and target), plus the real path behind any symlink.
func (a *ApplyPatch) TouchedPaths(args json.RawMessage) ([]string, error) {
	text, err := decodeApplyPatch(args)
	if err != nil {
		return nil, err
	}
	p, err := patch.Parse(text)
	if err != nil {
		return nil, err
	}
	out := p.Paths()
	seen := map[string]bool{}
	for _, q := range out {
		seen[q] = true
	}
	for _, q := range p.Paths() {
		if real, err := a.ws.Resolve(q); err == nil && !seen[real] {
			seen[real] = true
			out = append(out, real)
		}
	}
	return out, nil
}

// Execute applies the patch. Patch problems are error results the model can
// act on; only a cancelled context or an I/O failure that left the
// workspace in doubt is a Go error.
func (a *ApplyPatch) Execute(ctx context.Context, args json.RawMessage) (agent.Result, error) {
	if err := ctx.Err(); err != nil {
		return agent.Result{}, err
	}
	text, err := decodeApplyPatch(args)
	if err != nil {
		return agent.ErrorResult(agent.CodeInvalidArgument, err.Error()+"\n\n"+patch.Trailer, true), nil
	}
	p, err := patch.Parse(text)
	if err != nil {
		return patchErrorResult(err)
	}
	if denied := a.checkPaths(p); len(denied) > 0 {
		return agent.ErrorResult(agent.CodeDenied, strings.Join(denied, "\n")+"\n\n"+patch.Trailer, false), nil
	}
	if err := ctx.Err(); err != nil {
		return agent.Result{}, err
	}
	res, err := patch.Apply(a.ws.FS(), p)
	if errors.Is(err, safefile.ErrNotRegular) { // swapped for a FIFO or link since the checks
		return agent.ErrorResult(agent.CodePatchRejected, err.Error()+"; no files were changed", true), nil
	}
	if err != nil {
		var pe *patch.Error
		if errors.As(err, &pe) {
			for _, m := range pe.Missing {
				if near := a.ws.Suggest(m); len(near) > 0 {
					pe.Problems = append(pe.Problems, fmt.Sprintf("Did you mean: %s?", strings.Join(quoteNames(near), ", ")))
				}
			}
		}
		return patchErrorResult(err)
	}
	if err := ctx.Err(); err != nil {
		return agent.Result{}, err
	}
	defer a.ws.InvalidateFileList() // files may be added or removed: search lists the tree again
	if err := patch.Commit(a.ws.Root(), res, a.commit); err != nil {
		var ce *patch.CommitError
		if errors.As(err, &ce) && ce.RollbackErr == nil {
			return agent.ErrorResult(agent.CodeFailed, fmt.Sprintf("could not write %s: %v. Every file was restored.\n\n%s", quoteName(ce.Path), ce.Err, patch.Trailer), false), nil
		}
		return agent.Result{}, fmt.Errorf("apply_patch: %w", err)
	}
	a.mu.Lock()
	a.lastDiff = res.Diff
	a.mu.Unlock()
	return agent.Result{Text: patchSummary(res)}, nil
}

// patchErrorResult maps a patch error to the result the model reads.
func patchErrorResult(err error) (agent.Result, error) {
	var pe *patch.Error
	if !errors.As(err, &pe) {
		return agent.Result{}, fmt.Errorf("apply_patch: %w", err)
	}
	code := agent.CodePatchRejected
	switch pe.Kind {
	case patch.KindInvalid:
		code = agent.CodeInvalidArgument
	case patch.KindUnsafePath:
		code = agent.CodeDenied
	}
	// A corrected patch can succeed; a refused path cannot.
	return agent.ErrorResult(code, pe.Error(), code != agent.CodeDenied), nil
}

// checkPaths runs every touched path through the sandbox and policy and
// rewrites the patch to the real (symlink-resolved) paths. It returns one
// line per refused path.
func (a *ApplyPatch) checkPaths(p *patch.Patch) []string {
	var denied []string
	check := func(q string, moves bool) string {
		real, err := a.ws.CheckWrite(q)
		if err != nil {
			denied = append(denied, fmt.Sprintf("%s: %v", quoteName(q), err))
			return q
		}
		if moves {
			if fi, err := a.ws.Root().Lstat(q); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				denied = append(denied, fmt.Sprintf("%s is a symbolic link; apply_patch does not delete or rename links", quoteName(q)))
			}
		}
		return real
	}
	for _, fp := range p.Files {
		moves := fp.Op == patch.OpDelete || fp.MoveTo != ""
		fp.Path = check(fp.Path, moves)
		if fp.MoveTo != "" {
			fp.MoveTo = check(fp.MoveTo, false)
		}
	}
	return denied
}

// patchSummary is the success answer: a diffstat, then warnings for Go
// files that no longer parse.
func patchSummary(res *patch.Result) string {
	var b strings.Builder
	added, deleted := 0, 0
	for _, fc := range res.Files {
		added += fc.Added
		deleted += fc.Deleted
	}
	fmt.Fprintf(&b, "Patch applied: %d file(s) changed, +%d -%d\n", len(res.Files), added, deleted)
	for _, fc := range res.Files {
		name := quoteName(fc.NewPath)
		switch {
		case fc.Op == patch.OpCreate:
			name += " (new)"
		case fc.Op == patch.OpDelete:
			name = quoteName(fc.OldPath) + " (deleted)"
		case fc.OldPath != fc.NewPath:
			name = quoteName(fc.OldPath) + " => " + quoteName(fc.NewPath)
		}
		if fc.OldMode != fc.NewMode && fc.Op == patch.OpUpdate {
			name += fmt.Sprintf(" (mode %o => %o)", fc.OldMode, fc.NewMode)
		}
		fmt.Fprintf(&b, "  %s | +%d -%d\n", name, fc.Added, fc.Deleted)
	}
	for _, fc := range res.Files {
		if fc.NewPath == "" || !strings.HasSuffix(fc.NewPath, ".go") || !mayBreakGo(fc) {
			continue
		}
		_, err := parser.ParseFile(token.NewFileSet(), quoteName(fc.NewPath), fc.New, parser.AllErrors|parser.SkipObjectResolution)
		if err == nil {
			continue
		}
		msgs := []string{err.Error()}
		var list scanner.ErrorList
		if errors.As(err, &list) {
			msgs = msgs[:0]
			for i, e := range list {
				if i == patchSyntaxErrs {
					msgs = append(msgs, fmt.Sprintf("(%d more)", len(list)-i))
					break
				}
				msgs = append(msgs, e.Error())
			}
		}
		fmt.Fprintf(&b, "warning: %s does not parse as Go after this patch (the patch was applied): %s\n", quoteName(fc.NewPath), strings.Join(msgs, "; "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// mayBreakGo reports whether a patched Go file needs the whole-file syntax
// check. Small files always do. In a large one, each top-level declaration
// holding a change (from the line starting it to the line starting the
// next) is parsed alone first; only if one fails does the whole file get
// parsed, so a warning always rests on the whole file's errors.
func mayBreakGo(fc *patch.FileChange) bool {
	spans := fc.NewSpans()
	if len(fc.New) <= goWholeParse || spans == nil {
		return true
	}
	src := fc.New
	starts := lineStarts(src, spans)
	prevEnd := -1
	for k := range spans {
		from := starts[2*k] // start of the span's first line (or the line before a removal)
		to := starts[2*k+1] // end of its last line
		a := declStart(src, from)
		b := declEnd(src, to)
		if a < prevEnd {
			a = prevEnd // overlaps the previous region, already parsed from there
		}
		prevEnd = b
		if a >= b {
			continue
		}
		region := src[a:b]
		if a > 0 && !bytes.HasPrefix(region, []byte("package")) {
			region = append([]byte("package p\n"), region...)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), fc.NewPath, region, parser.SkipObjectResolution); err != nil {
			return true
		}
	}
	return false
}

// lineStarts returns, for each span, the byte offset where its first line
// starts (for a removal, the line before it, which it now joins) and where
// its last line ends.
func lineStarts(src []byte, spans []patch.Span) []int {
	var out []int
	line, off := 0, 0
	advance := func(to int) {
		for line < to && off < len(src) {
			if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
				off += i + 1
			} else {
				off = len(src)
			}
			line++
		}
	}
	for _, sp := range spans {
		first := sp.Start
		if sp.Start == sp.End && first > 0 {
			first-- // a removal joins the lines around it
		}
		if first < line {
			first = line
		}
		advance(first)
		out = append(out, off)
		advance(max(sp.End, first+1))
		out = append(out, off)
	}
	return out
}

// goDeclWords start a top-level declaration at column 0.
var goDeclWords = [][]byte{[]byte("func"), []byte("type"), []byte("var"), []byte("const"), []byte("import"), []byte("package")}

// isDeclStart reports whether a line starts a top-level declaration.
func isDeclStart(line []byte) bool {
	for _, w := range goDeclWords {
		if rest, ok := bytes.CutPrefix(line, w); ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '(' || rest[0] == '\t') {
			return true
		}
	}
	return false
}

// declStart is the start of the last line at or before off that starts a
// top-level declaration, or 0.
func declStart(src []byte, off int) int {
	for {
		ls := bytes.LastIndexByte(src[:off], '\n') + 1
		if isDeclStart(src[ls:]) || ls == 0 {
			return ls
		}
		off = ls - 1
	}
}

// declEnd is the start of the first line at or after off that starts a
// top-level declaration, or the end of src.
func declEnd(src []byte, off int) int {
	for off < len(src) {
		if isDeclStart(src[off:]) {
			return off
		}
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return len(src)
		}
		off += i + 1
	}
	return len(src)
}
