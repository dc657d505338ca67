package patch

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// hangAfter turns a hang (a parser that stops making progress) into a
// reported crasher instead of a silent stall.
const hangAfter = 10 * time.Second

// FuzzApply feeds arbitrary patch text and file content to the engine. It
// must never panic, refuse only with *Error, and whenever it accepts, the
// rebuilt diff applied by go-gitdiff must give exactly the engine's result,
// and the engine applying its own rebuilt diff must agree (or refuse).
func FuzzApply(f *testing.F) {
	for _, c := range loadCorpus(f) {
		var names []string
		for n := range c.Files {
			names = append(names, n)
		}
		sort.Strings(names)
		content := ""
		if len(names) > 0 {
			content = string(c.Files[names[0]].Data)
		}
		f.Add(c.Patch, content)
	}
	f.Fuzz(func(t *testing.T, text, content string) {
		guard := time.AfterFunc(hangAfter, func() { panic(fmt.Sprintf("input took over %v: %q %q", hangAfter, text, content)) })
		defer guard.Stop()
		p, err := Parse(text)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || !strings.HasSuffix(err.Error(), Trailer) {
				t.Fatalf("Parse error %T %q is not a *patch.Error ending with the trailer", err, err)
			}
			return
		}
		fsys := fstest.MapFS{}
		for _, fp := range p.Files {
			for _, q := range fp.Paths() {
				if !fs.ValidPath(q) {
					t.Fatalf("Parse returned invalid path %q", q)
				}
			}
			if fp.Op != OpCreate {
				fsys[fp.Path] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
			}
		}
		res, err := Apply(fsys, p)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || !strings.HasSuffix(err.Error(), Trailer) {
				t.Fatalf("Apply error %T %q is not a *patch.Error ending with the trailer", err, err)
			}
			if strings.Contains(err.Error(), "internal check failed") {
				t.Fatalf("engine and go-gitdiff disagree: %v", err)
			}
			return
		}
		checkWithGitdiff(t, res)

		// The engine must read its own rebuilt diff the same way, or refuse
		// it (3 lines of context can be ambiguous in repetitive content).
		// Lone CRs are content a patch cannot carry (the parser reads a CR
		// at a line end as part of the line ending), so they are skipped.
		for _, fc := range res.Files {
			for _, data := range [][]byte{fc.Old, fc.New} {
				if bytes.Contains(bytes.ReplaceAll(data, []byte("\r\n"), nil), []byte("\r")) {
					return
				}
			}
		}
		p2, err := Parse(res.Diff)
		if err != nil {
			t.Fatalf("cannot parse own rebuilt diff: %v\n%s", err, res.Diff)
		}
		res2, err := Apply(fsys, p2)
		if err != nil {
			return
		}
		if len(res2.Files) != len(res.Files) {
			t.Fatalf("rebuilt diff changes %d files, original %d", len(res2.Files), len(res.Files))
		}
		for i := range res.Files {
			if !bytes.Equal(res.Files[i].New, res2.Files[i].New) || res.Files[i].NewPath != res2.Files[i].NewPath {
				t.Fatalf("re-applying the rebuilt diff gives a different %s", res.Files[i].NewPath)
			}
		}
	})
}

// checkWithGitdiff independently applies the rebuilt diff with go-gitdiff.
func checkWithGitdiff(t *testing.T, res *Result) {
	t.Helper()
	files, _, err := gitdiff.Parse(strings.NewReader(res.Diff))
	if err != nil {
		t.Fatalf("go-gitdiff cannot parse the rebuilt diff: %v\n%s", err, res.Diff)
	}
	if len(files) != len(res.Files) {
		t.Fatalf("go-gitdiff sees %d files, engine %d", len(files), len(res.Files))
	}
	for i, gf := range files {
		fc := res.Files[i]
		var out bytes.Buffer
		if err := gitdiff.Apply(&out, bytes.NewReader(fc.Old), gf); err != nil {
			t.Fatalf("go-gitdiff cannot apply %s: %v\n%s", fc.NewPath, err, res.Diff)
		}
		if !bytes.Equal(out.Bytes(), fc.New) {
			t.Fatalf("go-gitdiff result %q != engine result %q", out.Bytes(), fc.New)
		}
		var add, del int
		for _, fr := range gf.TextFragments {
			add += int(fr.LinesAdded)
			del += int(fr.LinesDeleted)
		}
		if add != fc.Added || del != fc.Deleted {
			t.Fatalf("%s: counts +%d -%d, diff says +%d -%d", fc.NewPath, fc.Added, fc.Deleted, add, del)
		}
	}
}
