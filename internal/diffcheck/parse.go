package diffcheck

import (
	"fmt"
	"path"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// fileChange is one file of the diff, reduced to what the checks need.
type fileChange struct {
	oldPath, newPath          string
	isNew, isDelete, isRename bool
	binary                    bool
	// added maps after-file line numbers to added lines; deleted maps
	// before-file line numbers to deleted lines (both without newline).
	added, deleted map[int]string
	// pairs are deleted/added lines matched up inside each block of
	// consecutive changes, in order: the i-th deleted with the i-th added.
	pairs []linePair
}

type linePair struct {
	old, new string
	newLine  int
}

func (fc *fileChange) path() string {
	if fc.isDelete {
		return fc.oldPath
	}
	return fc.newPath
}

// firstChanged is the first added line, else 0.
func (fc *fileChange) firstChanged() int {
	first := 0
	for n := range fc.added {
		if first == 0 || n < first {
			first = n
		}
	}
	return first
}

func parseDiff(diff string) ([]*fileChange, error) {
	if strings.TrimSpace(diff) == "" {
		return nil, nil
	}
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil {
		return nil, fmt.Errorf("diffcheck: the diff does not parse: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("diffcheck: the diff names no file")
	}
	var out []*fileChange
	for _, f := range files {
		fc := &fileChange{
			oldPath: f.OldName, newPath: f.NewName,
			isNew: f.IsNew, isDelete: f.IsDelete, isRename: f.IsRename || f.IsCopy,
			binary: f.IsBinary,
			added:  map[int]string{}, deleted: map[int]string{},
		}
		for _, p := range []string{fc.oldPath, fc.newPath} {
			if p == "" {
				continue
			}
			if err := checkName(p); err != nil {
				return nil, err
			}
		}
		if fc.path() == "" {
			return nil, fmt.Errorf("diffcheck: a file in the diff has no name")
		}
		for _, frag := range f.TextFragments {
			if err := frag.Validate(); err != nil {
				return nil, fmt.Errorf("diffcheck: %s: %w", fc.path(), err)
			}
			fc.addFragment(frag)
		}
		out = append(out, fc)
	}
	return out, nil
}

// checkName refuses names that would leave the repository.
func checkName(p string) error {
	clean := path.Clean(p)
	if path.IsAbs(p) || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsRune(p, 0) {
		return fmt.Errorf("diffcheck: the diff names %q, outside the repository", p)
	}
	return nil
}

func (fc *fileChange) addFragment(frag *gitdiff.TextFragment) {
	oldN, newN := int(frag.OldPosition), int(frag.NewPosition)
	var dels []string
	var adds []linePair
	flush := func() {
		for i := 0; i < len(dels) && i < len(adds); i++ {
			fc.pairs = append(fc.pairs, linePair{old: dels[i], new: adds[i].new, newLine: adds[i].newLine})
		}
		dels, adds = nil, nil
	}
	for _, l := range frag.Lines {
		text := strings.TrimRight(l.Line, "\r\n")
		switch l.Op {
		case gitdiff.OpContext:
			flush()
			oldN++
			newN++
		case gitdiff.OpDelete:
			fc.deleted[oldN] = text
			dels = append(dels, text)
			oldN++
		case gitdiff.OpAdd:
			fc.added[newN] = text
			adds = append(adds, linePair{new: text, newLine: newN})
			newN++
		}
	}
	flush()
}
