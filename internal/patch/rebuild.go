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

// diffOp is one step of an edit script: ' ' keeps old line o as new line n,
// '-' deletes old line o, '+' adds new line n.
type diffOp struct {
	kind byte
	o, n int
}

// rebuild fills in every change's diff and the result's Diff, then checks
// the whole diff with go-gitdiff: parsed back and applied to the old bytes,
// it must give exactly the new bytes.
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
	old := splitLines(fc.Old)
	nw := splitLines(fc.New)
	ops := fc.ops
	if ops == nil {
		ops = script(old, nw)
	}
	f.TextFragments = fragments(old, nw, ops)
	for _, fr := range f.TextFragments {
		fc.Added += int(fr.LinesAdded)
		fc.Deleted += int(fr.LinesDeleted)
	}
	return f
}

// script is the edit script of a create or delete: everything added or
// everything removed (one side is empty).
func script(old, nw []fileLine) []diffOp {
	var ops []diffOp
	for i := range old {
		ops = append(ops, diffOp{'-', i, 0})
	}
	for j := range nw {
		ops = append(ops, diffOp{'+', 0, j})
	}
	return ops
}

// scriptFrom derives the edit script of an update from the engine's result,
// which knows the old line each kept line comes from. Within a run of
// changes, identical leading and trailing lines (a line "removed" and added
// back unchanged) are turned back into context.
func scriptFrom(old []fileLine, out []newLine) []diffOp {
	kept := make([]bool, len(old))
	for _, l := range out {
		if l.src >= 0 {
			kept[l.src] = true
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < len(old) || j < len(out) {
		if i < len(old) && j < len(out) && out[j].src == i {
			ops = append(ops, diffOp{' ', i, j})
			i++
			j++
			continue
		}
		var dels, adds []int
		for ; i < len(old) && !kept[i]; i++ {
			dels = append(dels, i)
		}
		for ; j < len(out) && out[j].src < 0; j++ {
			adds = append(adds, j)
		}
		pre := 0
		for pre < len(dels) && pre < len(adds) && old[dels[pre]].bytes() == out[adds[pre]].b {
			ops = append(ops, diffOp{' ', dels[pre], adds[pre]})
			pre++
		}
		suf := 0
		for suf < len(dels)-pre && suf < len(adds)-pre && old[dels[len(dels)-1-suf]].bytes() == out[adds[len(adds)-1-suf]].b {
			suf++
		}
		for _, d := range dels[pre : len(dels)-suf] {
			ops = append(ops, diffOp{'-', d, 0})
		}
		for _, a := range adds[pre : len(adds)-suf] {
			ops = append(ops, diffOp{'+', 0, a})
		}
		for k := suf; k > 0; k-- {
			ops = append(ops, diffOp{' ', dels[len(dels)-k], adds[len(adds)-k]})
		}
	}
	return ops
}

// fragments groups an edit script into hunks with contextLines of context.
func fragments(old, nw []fileLine, ops []diffOp) []*gitdiff.TextFragment {
	var frags []*gitdiff.TextFragment
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-contextLines, 0)
		end := i // one past the last change of the hunk
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
				continue
			}
			if j-end >= 2*contextLines {
				break
			}
		}
		stop := min(end+contextLines, len(ops))
		frags = append(frags, fragment(old, nw, ops, start, stop))
		i = stop
	}
	return frags
}

func fragment(old, nw []fileLine, ops []diffOp, start, stop int) *gitdiff.TextFragment {
	f := &gitdiff.TextFragment{}
	// Lines before the fragment on each side.
	var ob, nb int64
	for _, op := range ops[:start] {
		if op.kind != '+' {
			ob++
		}
		if op.kind != '-' {
			nb++
		}
	}
	for _, op := range ops[start:stop] {
		switch op.kind {
		case ' ':
			f.Lines = append(f.Lines, gitdiff.Line{Op: gitdiff.OpContext, Line: old[op.o].bytes()})
			f.OldLines++
			f.NewLines++
			if f.LinesAdded == 0 && f.LinesDeleted == 0 {
				f.LeadingContext++
			} else {
				f.TrailingContext++
			}
		case '-':
			f.Lines = append(f.Lines, gitdiff.Line{Op: gitdiff.OpDelete, Line: old[op.o].bytes()})
			f.OldLines++
			f.LinesDeleted++
			f.TrailingContext = 0
		case '+':
			f.Lines = append(f.Lines, gitdiff.Line{Op: gitdiff.OpAdd, Line: nw[op.n].bytes()})
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
		var out bytes.Buffer
		if err := gitdiff.Apply(&out, bytes.NewReader(fc.Old), f); err != nil {
			return fmt.Errorf("go-gitdiff cannot apply the rebuilt diff of %s: %w", fc.NewPath+fc.OldPath, err)
		}
		if !bytes.Equal(out.Bytes(), fc.New) {
			return fmt.Errorf("go-gitdiff's result for %s differs from the engine's", fc.OldPath+fc.NewPath)
		}
	}
	return nil
}
