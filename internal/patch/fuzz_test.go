package patch

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
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
// every '-' and '+' line of the input is accounted for in the rebuilt diff
// (checkAccounted), and the engine applying its own rebuilt diff must agree
// (or refuse).
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
		checkAccounted(t, text, p, res)

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
			a, b := res.Files[i].New, res2.Files[i].New
			if mixedEndings(res.Files[i].Old) {
				// In a file with both CRLF and LF lines an added line takes
				// a neighbour's ending and a replacing line the replaced
				// one's; the rebuilt diff may join two hunks into one
				// replacement, so only the endings may differ. (The diff
				// itself is checked byte for byte by checkWithGitdiff.)
				a, b = bytes.ReplaceAll(a, []byte("\r\n"), []byte("\n")), bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
			}
			if !bytes.Equal(a, b) || res.Files[i].NewPath != res2.Files[i].NewPath {
				t.Fatalf("re-applying the rebuilt diff gives a different %s", res.Files[i].NewPath)
			}
		}
	})
}

// mixedEndings reports whether data has both CRLF and bare LF line endings.
func mixedEndings(data []byte) bool {
	crlf := bytes.Count(data, []byte("\r\n"))
	return crlf > 0 && bytes.Count(data, []byte("\n")) > crlf
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

// checkAccounted is the differential property of an accepted patch: nothing
// the patch says is dropped, nothing it does not say is added.
//
// First, every '-' and '+' line of the raw text inside the patch's hunk
// region (found here without the parser) is one of the parsed hunk lines.
// Then the parsed lines are matched against the rebuilt diff's, compared
// after the engine's loosest normalisation (the file's own bytes stand in
// for a '-' line; added lines may be re-indented): what the patch removes
// or adds but the diff does not must be lines the patch removed and added
// back unchanged, and what the diff removes or adds but the patch does not
// must be lines removed and re-added with the same text (a line ending or
// byte order mark that moved).
func checkAccounted(t *testing.T, text string, p *Patch, res *Result) {
	t.Helper()
	parsed := map[byte]map[string]int{'+': {}, '-': {}}
	exact := map[string]int{}
	for _, fp := range p.Files {
		for _, h := range fp.Hunks {
			for _, l := range h.Lines {
				if l.Kind == ' ' && fp.Op == OpDelete {
					// A deleted file's hunk lines are its content (checked
					// equal to the file), all removed.
					parsed['-'][normalize(l.Text, levelUnicode)]++
				}
				if l.Kind == '+' || l.Kind == '-' {
					parsed[l.Kind][normalize(l.Text, levelUnicode)]++
					exact[string(l.Kind)+l.Text]++
				}
			}
		}
	}
	for _, l := range rawChanges(text) {
		if exact[l] == 0 {
			t.Fatalf("the patch line %q is not among the parsed hunk lines, yet the patch was accepted:\n%s", l, text)
		}
		exact[l]--
	}

	rebuilt := map[byte]map[string]int{'+': {}, '-': {}}
	files, _, err := gitdiff.Parse(strings.NewReader(res.Diff))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if fc := res.Files[i]; fc.Op == OpDelete && !deletionHasLines(p, fc.OldPath) {
			continue // "*** Delete File:" names no lines
		}
		for _, fr := range f.TextFragments {
			for _, l := range fr.Lines {
				s := strings.TrimSuffix(strings.TrimSuffix(l.Line, "\n"), "\r")
				switch l.Op {
				case gitdiff.OpAdd:
					rebuilt['+'][normalize(s, levelUnicode)]++
				case gitdiff.OpDelete:
					rebuilt['-'][normalize(s, levelUnicode)]++
				}
			}
		}
	}
	// An empty line added at the end of a file without a final newline is
	// that newline ("x" becomes "x\n", a changed line rather than an added
	// one), or nothing at all if it ends the file. Such files allow one added
	// empty line to go unaccounted.
	slack := 0
	for _, fc := range res.Files {
		if o := len(fc.Old); o > 0 && fc.Old[o-1] != '\n' {
			slack++
		}
	}
	msg := accounted(parsed, rebuilt)
	for ; msg != "" && slack > 0 && parsed['+'][""] > 0; slack-- {
		parsed['+'][""]--
		msg = accounted(parsed, rebuilt)
	}
	if msg != "" {
		t.Fatalf("%s\npatch:\n%s\ndiff:\n%s", msg, text, res.Diff)
	}
}

// accounted compares the patch's and the rebuilt diff's lines (normalised,
// counted per kind) and says what is not accounted for, or "".
func accounted(parsed, rebuilt map[byte]map[string]int) string {
	onlyPatch := map[byte]map[string]int{'+': {}, '-': {}}
	onlyDiff := map[byte]map[string]int{'+': {}, '-': {}}
	for _, k := range []byte{'+', '-'} {
		for s, n := range parsed[k] {
			if d := n - rebuilt[k][s]; d > 0 {
				onlyPatch[k][s] = d
			}
		}
		for s, n := range rebuilt[k] {
			if d := n - parsed[k][s]; d > 0 {
				onlyDiff[k][s] = d
			}
		}
	}
	if !maps.Equal(onlyPatch['+'], onlyPatch['-']) {
		return fmt.Sprintf("the rebuilt diff drops patch lines: added %v, removed %v (only these may cancel out in pairs)", onlyPatch['+'], onlyPatch['-'])
	}
	if !maps.Equal(onlyDiff['+'], onlyDiff['-']) {
		return fmt.Sprintf("the rebuilt diff changes lines the patch does not: added %v, removed %v", onlyDiff['+'], onlyDiff['-'])
	}
	return ""
}

func deletionHasLines(p *Patch, path string) bool {
	for _, fp := range p.Files {
		if fp.Op == OpDelete && fp.Path == path && len(fp.Hunks) > 0 {
			return true
		}
	}
	return false
}

// rawChanges lists, without the parser, the '-' and '+' lines of the text's
// hunk region, with their prefix: for the envelope, from the first file
// marker to "*** End Patch"; for a unified diff, from the first file header
// or "@@" on, leaving out "---"/"+++" header pairs and a format-patch
// signature. Markdown fences are honoured as the parser does.
// The envelope's markers as the format allows them: any case, the space
// after "***" optional ("***End Patch"), nothing after Begin/End Patch.
var (
	rawOpenRE = regexp.MustCompile(`(?i)^\*\*\*\s*(begin patch$|update file:|add file:|delete file:)`)
	rawEndRE  = regexp.MustCompile(`(?i)^\*\*\*\s*end patch$`)
)

func rawChanges(text string) []string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	fenced := false
	for _, l := range lines {
		fenced = fenced || strings.HasPrefix(l, "```")
	}
	if fenced {
		var in []string
		inside := false
		for _, l := range lines {
			if strings.HasPrefix(l, "```") {
				inside = !inside
			} else if inside {
				in = append(in, l)
			}
		}
		lines = in
	}
	var out []string
	if isEnvelope(lines) {
		region := false
		for _, l := range lines {
			// Markers as the format reads them: indented and followed by
			// spaces and tabs only, \s between "***" and the keyword.
			ll := strings.Trim(l, " \t")
			switch {
			case rawOpenRE.MatchString(ll):
				region = true
			case rawEndRE.MatchString(ll) && l[0] == '*':
				return out
			case region && l != "" && (l[0] == '+' || l[0] == '-'):
				out = append(out, l)
			}
		}
		return out
	}
	region := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		pair := strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ")
		switch {
		case pair:
			region = true
			i++
		case strings.HasPrefix(l, "@@"):
			region = true
		case l == "-- " && i+1 < len(lines) && gitVersion.MatchString(lines[i+1]):
			region = false // an email's end; the next may follow
			i++
		case region && l != "" && (l[0] == '+' || l[0] == '-'):
			out = append(out, l)
		}
	}
	return out
}
