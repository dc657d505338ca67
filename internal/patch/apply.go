package patch

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"syscall"
)

// Apply computes what p does to the files in fsys (paths as in p) without
// writing anything. A patch problem is returned as *Error; any other error
// is an I/O failure reading fsys.
//
// Every hunk is located by its context and removed lines alone: exact match
// first, then ignoring trailing whitespace, then indentation, then Unicode
// punctuation, always searching after the previous hunk. The match must be
// unique. The result's diff is rebuilt from the real bytes and checked with
// go-gitdiff before Apply returns.
func Apply(fsys fs.FS, p *Patch) (*Result, error) {
	sections, perr := mergeSections(p)
	if perr != nil {
		return nil, perr
	}
	all := &Error{Kind: KindRejected}
	var changes []*FileChange
	for _, fp := range sections {
		fc, perr, err := applyFile(fsys, fp)
		if err != nil {
			return nil, err
		}
		if perr != nil {
			all.Problems = append(all.Problems, perr.Problems...)
			all.Missing = append(all.Missing, perr.Missing...)
			continue
		}
		if fc != nil {
			changes = append(changes, fc)
		}
	}
	if len(all.Problems) > 0 {
		return nil, all
	}
	if len(changes) == 0 {
		return nil, errorf(KindRejected, "the patch changes nothing: every file would stay exactly as it is. Check that the '+' lines differ from the '-' lines.")
	}
	res := &Result{Files: changes}
	if err := rebuild(res); err != nil {
		return nil, errorf(KindRejected, "internal check failed, the patch was not applied (this is a bug in apply_patch, please report it): %v", err)
	}
	return res, nil
}

// mergeSections joins plain update sections of the same file and refuses
// any other path used twice.
func mergeSections(p *Patch) ([]*FilePatch, *Error) {
	var out []*FilePatch
	plain := map[string]*FilePatch{}
	owner := map[string]int{}
	for _, fp := range p.Files {
		isPlain := fp.Op == OpUpdate && fp.MoveTo == "" && fp.Exec == nil
		if prev := plain[fp.Path]; prev != nil && isPlain {
			prev.Hunks = append(prev.Hunks, fp.Hunks...)
			continue
		}
		c := *fp
		c.Hunks = append([]*Hunk(nil), fp.Hunks...)
		for _, q := range c.Paths() {
			if _, dup := owner[q]; dup {
				return nil, errorf(KindInvalid, "%s appears in more than one file section; put all changes to a file in one section", q)
			}
			owner[q] = len(out)
		}
		if isPlain {
			plain[c.Path] = &c
		}
		out = append(out, &c)
	}
	return out, nil
}

// state is a file as read before patching.
type state struct {
	exists bool
	data   []byte
	perm   fs.FileMode
}

func load(fsys fs.FS, name string) (state, *Error, error) {
	fi, err := fs.Stat(fsys, name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return state{}, nil, nil
	case errors.Is(err, syscall.ENOTDIR):
		return state{}, errorf(KindRejected, "%s: a parent of this path is a file, not a directory", name), nil
	case err != nil:
		return state{}, nil, fmt.Errorf("stat %s: %w", name, err)
	case fi.IsDir():
		return state{}, errorf(KindRejected, "%s is a directory, not a file", name), nil
	case !fi.Mode().IsRegular():
		return state{}, errorf(KindRejected, "%s is not a regular file", name), nil
	case fi.Size() > MaxFileBytes:
		return state{}, errorf(KindRejected, "%s is %d bytes; apply_patch edits files up to %d bytes", name, fi.Size(), MaxFileBytes), nil
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return state{}, nil, fmt.Errorf("read %s: %w", name, err)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return state{}, errorf(KindRejected, "%s looks binary (it contains NUL bytes); apply_patch edits text files only", name), nil
	}
	return state{exists: true, data: data, perm: fi.Mode().Perm()}, nil, nil
}

func missing(name, hint string) *Error {
	e := errorf(KindRejected, "%s does not exist%s", name, hint)
	e.Missing = []string{name}
	return e
}

func applyFile(fsys fs.FS, fp *FilePatch) (*FileChange, *Error, error) {
	st, perr, err := load(fsys, fp.Path)
	if err != nil || perr != nil {
		return nil, perr, err
	}
	switch fp.Op {
	case OpCreate:
		if st.exists {
			return nil, errorf(KindRejected, "%s already exists; to change it, send a diff against its current content (or '*** Update File: %s')", fp.Path, fp.Path), nil
		}
		return create(fp), nil, nil
	case OpDelete:
		if !st.exists {
			return nil, missing(fp.Path, ", so it cannot be deleted"), nil
		}
		if perr := checkDelete(fp, st.data); perr != nil {
			return nil, perr, nil
		}
		return &FileChange{Op: OpDelete, OldPath: fp.Path, Old: st.data, OldMode: st.perm}, nil, nil
	}
	if !st.exists {
		if fp.MoveTo == "" && len(fp.Hunks) > 0 && allAddOnly(fp.Hunks) {
			return create(fp), nil, nil // a creation without the /dev/null header
		}
		return nil, missing(fp.Path, "; to create it, send it as a new file ('--- /dev/null' or '*** Add File:')"), nil
	}
	fc := &FileChange{Op: OpUpdate, OldPath: fp.Path, NewPath: fp.Path, Old: st.data, OldMode: st.perm, NewMode: st.perm}
	if fp.MoveTo != "" {
		dst, perr, err := load(fsys, fp.MoveTo)
		if err != nil {
			return nil, nil, err
		}
		if perr != nil {
			return nil, perr, nil
		}
		if dst.exists {
			return nil, errorf(KindRejected, "cannot rename %s to %s: the target already exists", fp.Path, fp.MoveTo), nil
		}
		fc.NewPath = fp.MoveTo
	}
	if fp.Exec != nil {
		if *fp.Exec {
			fc.NewMode |= (fc.NewMode & 0o444) >> 2
		} else {
			fc.NewMode &^= 0o111
		}
	}
	old := splitLines(st.data)
	out, ops, perr := applyHunks(fp.Path, old, fp.Hunks)
	if perr != nil {
		return nil, perr, nil
	}
	fc.New, fc.ops, fc.oldLines = out, ops, old
	if fc.NewPath == fc.OldPath && fc.NewMode == fc.OldMode && bytes.Equal(fc.New, fc.Old) {
		return nil, nil, nil
	}
	return fc, nil, nil
}

func allAddOnly(hs []*Hunk) bool {
	for _, h := range hs {
		if !h.addsOnly() {
			return false
		}
	}
	return true
}

// create builds a new file from the added lines of its hunks.
func create(fp *FilePatch) *FileChange {
	var b strings.Builder
	noEOL := false
	for _, h := range fp.Hunks {
		for _, l := range h.Lines {
			if l.Kind == '+' {
				b.WriteString(l.Text)
				b.WriteByte('\n')
			}
		}
		noEOL = h.NoEOLNew
	}
	data := []byte(b.String())
	if noEOL && len(data) > 0 {
		data = data[:len(data)-1]
	}
	mode := fs.FileMode(0o644)
	if fp.Exec != nil && *fp.Exec {
		mode = 0o755
	}
	return &FileChange{Op: OpCreate, NewPath: fp.Path, New: data, NewMode: mode}
}

// checkDelete makes sure a deletion's '-' lines, when given, are the file.
func checkDelete(fp *FilePatch, data []byte) *Error {
	var old []string
	for _, h := range fp.Hunks {
		old = append(old, h.old()...)
	}
	if len(old) == 0 {
		return nil
	}
	t := &target{lines: splitLines(data)}
	if len(old) == t.lines.n() {
		for lv := range numLevels {
			if len(t.find(old, lv, 0, true)) == 1 {
				return nil
			}
		}
	}
	return errorf(KindRejected, "%s: the deletion's '-' lines (%d) are not the file's current content (%d lines), so it was not deleted. Send '*** Delete File: %s' (or a deletion diff without hunks) to delete it as it is.", fp.Path, len(old), t.lines.n(), fp.Path)
}

// located is a hunk placed in the file.
type located struct {
	idx      int
	h        *Hunk
	pos, end int
	fallback bool
	edits    []edit
}

// edit replaces del old lines at old index at with ins (texts without EOL).
type edit struct {
	at, del int
	ins     []string
	hunk    int
	region  int
}

func applyHunks(path string, old *lines, hunks []*Hunk) ([]byte, []diffOp, *Error) {
	t := &target{lines: old}
	n := t.lines.n()
	perr := &Error{Kind: KindRejected}
	var locs []*located
	from := 0
	for k, orig := range hunks {
		h := &Hunk{}
		*h = *orig
		h.Lines = append([]Line(nil), orig.Lines...)
		old := h.old()
		loc := &located{idx: k, h: h}
		switch {
		case len(old) == 0 && n == 0:
			loc.pos = 0
		case len(old) == 0 && h.AtEOF:
			loc.pos = n
		case len(old) == 0:
			perr.Problems = append(perr.Problems, fmt.Sprintf("%s only adds lines and has no context line, so there is no way to tell where they go. To place them, include 1-3 unchanged lines of the file (each prefixed with a space) just before or after the new lines; to append them at the end of the file, end the hunk with a '*** End of File' line (envelope form).", describe(path, k, len(hunks))))
			continue
		default:
			pos, lv, cands, fallback, why := locate(t, old, from, h)
			switch {
			case len(cands) == 0 && len(perr.Problems) >= maxProblems:
				perr.Problems = append(perr.Problems, describe(path, k, len(hunks))+" does not match the file.")
				continue
			case len(cands) == 0:
				perr.Problems = append(perr.Problems, t.mismatch(path, k, len(hunks), h, old))
				continue
			case pos < 0:
				perr.Problems = append(perr.Problems, ambiguous(path, k, len(hunks), cands, levelNames[lv], why))
				continue
			}
			loc.pos, loc.fallback = pos, fallback
			if lv >= levelTrim {
				reindent(h, t.lines, pos)
			}
		}
		loc.end = loc.pos + len(old)
		loc.edits = hunkEdits(h, loc.pos, k)
		for _, e := range loc.edits {
			from = max(from, e.at+e.del)
		}
		locs = append(locs, loc)
	}
	if len(perr.Problems) > 0 {
		return nil, nil, perr
	}
	if msg := overlaps(path, locs, len(hunks)); msg != "" {
		return nil, nil, errorf(KindRejected, "%s", msg)
	}
	var edits []edit
	for _, l := range locs {
		edits = append(edits, l.edits...)
	}
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].at != edits[j].at {
			return edits[i].at < edits[j].at
		}
		return edits[i].region < edits[j].region
	})
	for i := 1; i < len(edits); i++ {
		if a, b := edits[i-1], edits[i]; a.at+a.del > b.at {
			return nil, nil, errorf(KindRejected, "%s: hunks %d and %d change the same lines (around line %d); merge them into one hunk", path, a.hunk+1, b.hunk+1, b.at+1)
		}
	}
	out := build(t.lines, edits)
	out = fixEOL(out, t.lines, locs)
	out = keepBOM(out, t.lines, hunks)
	return assemble(t.lines, out), scriptFrom(t.lines, out), nil
}

// locate finds where the hunk's old lines are. pos is -1 when ambiguous
// (cands then lists the places, and why says why the header's line number
// did not settle it); cands is empty when nothing matched. Among several
// places, the hunk's hints choose first, then its header's line number
// (byLine).
func locate(t *target, old []string, from int, h *Hunk) (pos, level int, cands []int, fallback bool, why string) {
	for _, start := range []int{from, 0} {
		for lv := range numLevels {
			cands = t.find(old, lv, start, h.AtEOF)
			if len(cands) == 0 {
				continue
			}
			fallback = start != from
			if len(cands) == 1 {
				return cands[0], lv, cands, fallback, ""
			}
			kept := t.byHints(cands, h.Hints)
			if len(kept) == 1 {
				return kept[0], lv, cands, fallback, ""
			}
			if len(kept) == 0 {
				// The "@@" text names none of the places: the hunk
				// contradicts the file, and its line number is no better.
				return -1, lv, cands, fallback, "its @@ text names none of them"
			}
			p, why := byLine(kept, h.OldStart)
			return p, lv, cands, fallback, why
		}
		if from == 0 {
			break
		}
	}
	return -1, 0, nil, false, ""
}

// overlaps refuses hunks found out of order whose regions overlap another
// hunk's: the sequential meaning of the patch would be unclear.
func overlaps(path string, locs []*located, total int) string {
	for i, a := range locs {
		for _, b := range locs[i+1:] {
			if !a.fallback && !b.fallback {
				continue
			}
			if a.pos < b.end && b.pos < a.end {
				return fmt.Sprintf("%s: hunks %d and %d overlap in the file (lines %d-%d and %d-%d); merge them into one hunk or list hunks in file order", path, a.idx+1, b.idx+1, a.pos+1, a.end, b.pos+1, b.end)
			}
		}
	}
	return ""
}

func hunkEdits(h *Hunk, pos, k int) []edit {
	var out []edit
	var cur *edit
	oi := pos
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, l := range h.Lines {
		switch l.Kind {
		case ' ':
			flush()
			oi++
			continue
		}
		if cur == nil {
			cur = &edit{at: oi, hunk: k, region: pos}
		}
		if l.Kind == '-' {
			cur.del++
			oi++
		} else {
			cur.ins = append(cur.ins, l.Text)
		}
	}
	flush()
	return out
}
