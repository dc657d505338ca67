package patch

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// contextLines is the context the rebuilt diff carries around each change,
// as git diff does by default.
const contextLines = 3

// diffOp is one step of an edit script: ' ' keeps count old lines from
// old line o on, '-' deletes old line o, '+' adds the line text (with its
// ending). fragments also uses 's': count kept lines far from any change.
type diffOp struct {
	kind     byte
	o, count int
	text     string
}

// rebuild fills in every change's diff and the result's Diff, then checks
// the whole diff with go-gitdiff: parsed back and applied to the old bytes
// (fragment by fragment, see applyCheck), it must give exactly the new
// bytes.
func rebuild(res *Result) error {
	var all strings.Builder
	for _, fc := range res.Files {
		f := gitFile(fc)
		fc.Diff = f.String()
		all.WriteString(fc.Diff)
	}
	res.Diff = all.String()
	return validate(res)
}

func gitMode(perm fs.FileMode) os.FileMode {
	if perm&0o111 != 0 {
		return 0o100755
	}
	return 0o100644
}

func gitFile(fc *FileChange) *gitdiff.File {
	f := &gitdiff.File{OldName: fc.OldPath, NewName: fc.NewPath}
	switch fc.Op {
	case OpCreate:
		f.IsNew, f.NewMode = true, gitMode(fc.NewMode)
	case OpDelete:
		f.IsDelete, f.OldMode = true, gitMode(fc.OldMode)
	default:
		f.IsRename = fc.OldPath != fc.NewPath
		if om, nm := gitMode(fc.OldMode), gitMode(fc.NewMode); om != nm {
			f.OldMode, f.NewMode = om, nm
		}
	}
	old := fc.oldLines
	if old == nil {
		old = splitLines(fc.Old)
	}
	ops := fc.ops
	if ops == nil {
		ops = script(old, splitLines(fc.New))
	}
	f.TextFragments = fragments(old, ops)
	for _, fr := range f.TextFragments {
		fc.Added += int(fr.LinesAdded)
		fc.Deleted += int(fr.LinesDeleted)
	}
	return f
}

// script is the edit script of a create or delete: everything added or
// everything removed (one side is empty).
func script(old, nw *lines) []diffOp {
	var ops []diffOp
	for i := range old.n() {
		ops = append(ops, diffOp{kind: '-', o: i})
	}
	for j := range nw.n() {
		ops = append(ops, diffOp{kind: '+', text: nw.full(j)})
	}
	return ops
}

// scriptFrom derives the edit script of an update from the engine's result,
// which knows the old lines each kept run comes from. Within a run of
// changes, identical leading and trailing lines (a line "removed" and added
// back unchanged) are turned back into context.
func scriptFrom(old *lines, out []seg) []diffOp {
	var ops []diffOp
	i, k := 0, 0 // old line, segment
	for i < old.n() || k < len(out) {
		if k < len(out) && out[k].src == i {
			ops = append(ops, diffOp{kind: ' ', o: i, count: out[k].n})
			i += out[k].n
			k++
			continue
		}
		var adds []string
		for ; k < len(out) && out[k].src < 0; k++ {
			adds = append(adds, out[k].b)
		}
		next := old.n() // the next kept old line
		if k < len(out) {
			next = out[k].src
		}
		dels := next - i
		pre := 0
		for pre < dels && pre < len(adds) && old.full(i+pre) == adds[pre] {
			ops = append(ops, diffOp{kind: ' ', o: i + pre, count: 1})
			pre++
		}
		suf := 0
		for suf < dels-pre && suf < len(adds)-pre && old.full(next-1-suf) == adds[len(adds)-1-suf] {
			suf++
		}
		for d := i + pre; d < next-suf; d++ {
			ops = append(ops, diffOp{kind: '-', o: d})
		}
		for _, a := range adds[pre : len(adds)-suf] {
			ops = append(ops, diffOp{kind: '+', text: a})
		}
		for d := next - suf; d < next; d++ {
			ops = append(ops, diffOp{kind: ' ', o: d, count: 1})
		}
		i = next
	}
	return ops
}

// perLine expands the script to one op per line, except that the middle of
// a long run of kept lines, which no fragment can reach, becomes one 's' op.
func perLine(ops []diffOp) []diffOp {
	const keep = 2*contextLines + 1 // lines a fragment may reach into a run
	var out []diffOp
	for k := 0; k < len(ops); k++ {
		op := ops[k]
		if op.kind != ' ' {
			out = append(out, op)
			continue
		}
		// Merge adjacent kept runs.
		o, n := op.o, op.count
		for k+1 < len(ops) && ops[k+1].kind == ' ' && ops[k+1].o == o+n {
			n += ops[k+1].count
			k++
		}
		if n <= 2*keep {
			for d := range n {
				out = append(out, diffOp{kind: ' ', o: o + d, count: 1})
			}
			continue
		}
		for d := range keep {
			out = append(out, diffOp{kind: ' ', o: o + d, count: 1})
		}
		out = append(out, diffOp{kind: 's', o: o + keep, count: n - 2*keep})
		for d := n - keep; d < n; d++ {
			out = append(out, diffOp{kind: ' ', o: o + d, count: 1})
		}
	}
	return out
}

// fragments groups an edit script into hunks with contextLines of context.
func fragments(old *lines, script []diffOp) []*gitdiff.TextFragment {
	ops := perLine(script)
	change := func(op diffOp) bool { return op.kind == '-' || op.kind == '+' }
	var frags []*gitdiff.TextFragment
	var ob, nb int64 // lines on each side before ops[done]
	done := 0
	for i := 0; i < len(ops); {
		if !change(ops[i]) {
			i++
			continue
		}
		start := max(i-contextLines, 0)
		end := i // one past the last change of the hunk
		for j := i; j < len(ops); j++ {
			if change(ops[j]) {
				end = j + 1
				continue
			}
			if j-end >= 2*contextLines {
				break
			}
		}
		stop := min(end+contextLines, len(ops))
		for _, op := range ops[done:start] {
			o, n := sideCounts(op)
			ob += o
			nb += n
		}
		f := fragment(old, ops[start:stop], ob, nb)
		frags = append(frags, f)
		ob += f.OldLines
		nb += f.NewLines
		done = stop
		i = stop
	}
	return frags
}

// sideCounts is how many old and new lines an op covers.
func sideCounts(op diffOp) (o, n int64) {
	switch op.kind {
	case '-':
		return 1, 0
	case '+':
		return 0, 1
	}
	return int64(op.count), int64(op.count)
}

// fragment builds one hunk from per-line ops, ob and nb lines after the
// start of each side.
func fragment(old *lines, ops []diffOp, ob, nb int64) *gitdiff.TextFragment {
	f := &gitdiff.TextFragment{}
	for _, op := range ops {
		switch op.kind {
		case ' ':
			f.Lines = append(f.Lines, gitdiff.Line{Op: gitdiff.OpContext, Line: old.full(op.o)})
			f.OldLines++
			f.NewLines++
			if f.LinesAdded == 0 && f.LinesDeleted == 0 {
				f.LeadingContext++
			} else {
				f.TrailingContext++
			}
		case '-':
			f.Lines = append(f.Lines, gitdiff.Line{Op: gitdiff.OpDelete, Line: old.full(op.o)})
			f.OldLines++
			f.LinesDeleted++
			f.TrailingContext = 0
		case '+':
			f.Lines = append(f.Lines, gitdiff.Line{Op: gitdiff.OpAdd, Line: op.text})
			f.NewLines++
			f.LinesAdded++
			f.TrailingContext = 0
		}
	}
	f.OldPosition, f.NewPosition = ob, nb
	if f.OldLines > 0 {
		f.OldPosition++
	}
	if f.NewLines > 0 {
		f.NewPosition++
	}
	return f
}

// validate parses the rebuilt diff back with go-gitdiff and applies it in
// memory to every old file; the outcome must equal what the engine computed.
func validate(res *Result) error {
	files, _, err := gitdiff.Parse(strings.NewReader(res.Diff))
	if err != nil {
		return fmt.Errorf("go-gitdiff cannot parse the rebuilt diff: %w", err)
	}
	if len(files) != len(res.Files) {
		return fmt.Errorf("go-gitdiff sees %d files in the rebuilt diff, want %d", len(files), len(res.Files))
	}
	for i, f := range files {
		fc := res.Files[i]
		if f.OldName != fc.OldPath || f.NewName != fc.NewPath || f.IsNew != (fc.Op == OpCreate) || f.IsDelete != (fc.Op == OpDelete) {
			return fmt.Errorf("go-gitdiff reads file %d as %q -> %q (new %v, deleted %v), want %q -> %q", i+1, f.OldName, f.NewName, f.IsNew, f.IsDelete, fc.OldPath, fc.NewPath)
		}
		if err := applyCheck(f, fc.Old, fc.New); err != nil {
			return fmt.Errorf("go-gitdiff's result for %s: %w", fc.OldPath+fc.NewPath, err)
		}
	}
	return nil
}

// applyCheck applies the fragments of f, as go-gitdiff reads them, to old
// and checks the outcome is new. Each fragment is applied by go-gitdiff to
// just the old lines it covers; the stretches between fragments, which
// applying copies, must be equal in old and new. The memory this takes is
// that of the fragments, not of the file.
func applyCheck(f *gitdiff.File, old, new []byte) error {
	var oc, nc lineCursor
	oc.b, nc.b = old, new
	for _, fr := range f.TextFragments {
		ostart, nstart := max(fr.OldPosition-1, 0), max(fr.NewPosition-1, 0)
		if fr.OldLines == 0 {
			ostart = fr.OldPosition // "-N,0": after line N
		}
		if fr.NewLines == 0 {
			nstart = fr.NewPosition
		}
		ogap, ngap := oc.line, nc.line
		o0, n0 := oc.off, nc.off
		if !oc.seek(ostart) || !nc.seek(nstart) {
			return fmt.Errorf("a fragment starts past the end of the file")
		}
		if ostart-ogap != nstart-ngap || !bytes.Equal(old[o0:oc.off], new[n0:nc.off]) {
			return fmt.Errorf("the lines before the fragment at old line %d differ", ostart+1)
		}
		ow, nw := oc.off, nc.off
		if !oc.seek(ostart+fr.OldLines) || !nc.seek(nstart+fr.NewLines) {
			return fmt.Errorf("a fragment runs past the end of the file")
		}
		local := *fr
		local.OldPosition -= ostart
		var out bytes.Buffer
		a := gitdiff.NewTextApplier(&out, bytes.NewReader(old[ow:oc.off]))
		if err := a.ApplyFragment(&local); err != nil {
			return err
		}
		if err := a.Close(); err != nil {
			return err
		}
		if !bytes.Equal(out.Bytes(), new[nw:nc.off]) {
			return fmt.Errorf("the fragment at old line %d gives different lines", ostart+1)
		}
	}
	if !bytes.Equal(old[oc.off:], new[nc.off:]) {
		return fmt.Errorf("the lines after the last fragment differ")
	}
	return nil
}

// lineCursor walks a file line by line: off is the byte offset where line
// number line (0-based) starts.
type lineCursor struct {
	b    []byte
	off  int
	line int64
}

// seek moves forward to the start of line n; false if the file ends first
// (the position just past a last line without a newline counts as a start).
func (c *lineCursor) seek(n int64) bool {
	for c.line < n {
		if c.off >= len(c.b) {
			return false
		}
		i := bytes.IndexByte(c.b[c.off:], '\n')
		if i < 0 {
			c.off = len(c.b)
		} else {
			c.off += i + 1
		}
		c.line++
	}
	return true
}

// Span is a range of lines of a changed file's new content, [Start, End),
// 0-based. An empty span marks where lines were removed.
type Span struct{ Start, End int }

// NewSpans lists, in order, the places where the new content differs from
// the old: added lines, and the points where lines were removed. It is nil
// when every line is new (a created file) or nothing is known.
func (fc *FileChange) NewSpans() []Span {
	if fc.Op != OpUpdate || fc.ops == nil {
		return nil
	}
	var out []Span
	add := func(s Span) {
		if n := len(out); n > 0 && out[n-1].End >= s.Start {
			out[n-1].End = max(out[n-1].End, s.End)
			return
		}
		out = append(out, s)
	}
	j := 0 // new line
	for _, op := range fc.ops {
		switch op.kind {
		case ' ':
			j += op.count
		case '-':
			add(Span{j, j})
		case '+':
			add(Span{j, j + 1})
			j++
		}
	}
	return out
}
