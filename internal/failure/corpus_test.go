package failure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// want is a corpus file's expected result (NAME.want.json).
type want struct {
	Source      string       `json:"source"`
	Workspace   string       `json:"workspace"`
	Step        string       `json:"step"`
	Command     string       `json:"command"`
	ExitCode    int          `json:"exit_code"`
	Failures    []Failure    `json:"failures"`
	BuildErrors []BuildError `json:"build_errors"`
	Generic     []string     `json:"generic"`
	// Note is a substring of the note on the input (a cut report); none
	// may be given when it is empty.
	Note string `json:"note"`
}

type corpusCase struct {
	name, file string
	want       want
}

// corpus loads every corpus file with its expected result.
func corpus(t testing.TB) []corpusCase {
	t.Helper()
	wants, err := filepath.Glob("testdata/corpus/*.want.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(wants) < 20 {
		t.Fatalf("corpus has %d expected results, want at least 20", len(wants))
	}
	var out []corpusCase
	for _, w := range wants {
		base := strings.TrimSuffix(w, ".want.json")
		files, _ := filepath.Glob(base + ".*")
		var file string
		for _, f := range files {
			if !strings.HasSuffix(f, ".want.json") {
				file = f
			}
		}
		if file == "" {
			t.Fatalf("%s: no corpus file", w)
		}
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		var c corpusCase
		if err := json.Unmarshal(b, &c.want); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		c.name, c.file = filepath.Base(file), file
		out = append(out, c)
	}
	return out
}

func (c corpusCase) options() Options {
	opt := Options{}
	if c.want.Workspace != "" {
		opt.Workspace = filepath.Join("testdata", "fixtures", c.want.Workspace)
	}
	return opt
}

func keysOf(fs []Failure) []string {
	var k []string
	for _, f := range fs {
		k = append(k, f.Package+" :: "+f.ID)
	}
	sort.Strings(k)
	return k
}

// TestCorpus checks every corpus file against its expected result: the
// failing ids exactly (no missed, no invented), their locations and
// messages, build errors, the failed step, and that the rendered context
// keeps each message and location within the default budget.
func TestCorpus(t *testing.T) {
	t.Parallel()
	for _, c := range corpus(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fc, err := ExtractFile(c.file, c.options())
			if err != nil {
				t.Fatal(err)
			}
			w := c.want
			if got, want := strings.Join(keysOf(fc.Failures), "\n"), strings.Join(keysOf(w.Failures), "\n"); got != want {
				t.Fatalf("failing ids:\n got:\n%s\nwant:\n%s", got, want)
			}
			byKey := map[string]Failure{}
			for _, f := range fc.Failures {
				byKey[f.Package+" :: "+f.ID] = f
			}
			for _, wf := range w.Failures {
				f := byKey[wf.Package+" :: "+wf.ID]
				if f.Location != wf.Location {
					t.Errorf("%s: location %q, want %q", wf.ID, f.Location, wf.Location)
				}
				if !strings.Contains(f.Message, wf.Message) {
					t.Errorf("%s: message %q does not contain %q", wf.ID, f.Message, wf.Message)
				}
			}
			if len(fc.BuildErrors) != len(w.BuildErrors) {
				t.Errorf("build errors: got %+v, want %+v", fc.BuildErrors, w.BuildErrors)
			}
			for i, wb := range w.BuildErrors {
				if i >= len(fc.BuildErrors) {
					break
				}
				if b := fc.BuildErrors[i]; b.Location != wb.Location || !strings.Contains(b.Message, wb.Message) {
					t.Errorf("build error %d: got %+v, want %+v", i, b, wb)
				}
			}
			if fc.Source != w.Source {
				t.Errorf("source %q, want %q", fc.Source, w.Source)
			}
			if fc.Step != w.Step || fc.Command != w.Command || fc.ExitCode != w.ExitCode {
				t.Errorf("step %q command %q exit %d, want %q %q %d", fc.Step, fc.Command, fc.ExitCode,
					w.Step, w.Command, w.ExitCode)
			}
			for _, g := range w.Generic {
				if !strings.Contains(fc.Generic, g) {
					t.Errorf("generic excerpt lacks %q:\n%s", g, fc.Generic)
				}
			}
			if len(w.Generic) == 0 && fc.Generic != "" {
				t.Errorf("generic excerpt set although failures were recognized")
			}
			if w.Note == "" && fc.Note != "" || !strings.Contains(fc.Note, w.Note) {
				t.Errorf("note %q, want %q", fc.Note, w.Note)
			}
			out := fc.Render(DefaultBudget)
			if len(out) > DefaultBudget {
				t.Fatalf("rendered %d bytes, budget %d", len(out), DefaultBudget)
			}
			for _, wf := range w.Failures {
				if wf.Location != "" && !strings.Contains(out, "at "+wf.Location+"\n") || !strings.Contains(out, firstLine(wf.Message)) {
					t.Errorf("render lacks %s's location %s or message %q:\n%s", wf.ID, wf.Location, wf.Message, out)
				}
			}
			for _, wb := range w.BuildErrors {
				if !strings.Contains(out, wb.Location) || !strings.Contains(out, wb.Message) {
					t.Errorf("render lacks build error %s %q", wb.Location, wb.Message)
				}
			}
		})
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestCorpusSmallBudget renders every corpus result within a budget too
// small for everything: each kept failure still shows location and
// message, and the omitted ones are counted.
func TestCorpusSmallBudget(t *testing.T) {
	t.Parallel()
	const budget = 600
	for _, c := range corpus(t) {
		fc, err := ExtractFile(c.file, c.options())
		if err != nil {
			t.Fatal(err)
		}
		out := fc.Render(budget)
		if len(out) > budget {
			t.Errorf("%s: rendered %d bytes, budget %d", c.name, len(out), budget)
		}
		shown := 0
		for _, f := range fc.Failures {
			if strings.Contains(out, "- FAIL "+f.ID) {
				shown++
				if f.Location != "" && !strings.Contains(out, "at "+f.Location) {
					t.Errorf("%s: %s shown without its location:\n%s", c.name, f.ID, out)
				}
			}
		}
		if shown < len(fc.Failures) && !strings.Contains(out, "more failures omitted") {
			t.Errorf("%s: %d of %d failures shown and no omission note:\n%s", c.name, shown, len(fc.Failures), out)
		}
	}
}

// TestCorpusRenderRatio prints the rendered size against the raw size
// over the corpus (go test -v -run RenderRatio).
func TestCorpusRenderRatio(t *testing.T) {
	t.Parallel()
	var raw, rendered int64
	for _, c := range corpus(t) {
		st, err := os.Stat(c.file)
		if err != nil {
			t.Fatal(err)
		}
		fc, err := ExtractFile(c.file, c.options())
		if err != nil {
			t.Fatal(err)
		}
		n := len(fc.Render(DefaultBudget))
		raw += st.Size()
		rendered += int64(n)
		t.Logf("%-28s raw %7d B  rendered %5d B  ratio %.3f", c.name, st.Size(), n, float64(n)/float64(st.Size()))
	}
	t.Logf("corpus total: raw %d B, rendered %d B, ratio %.3f", raw, rendered, float64(rendered)/float64(raw))
	if rendered >= raw {
		t.Errorf("rendered %d B is not smaller than raw %d B", rendered, raw)
	}
}

// TestCorpusMergeLegs merges the Go text and -json jobs, as two matrix
// legs failing the same way: each failure is kept once with count 2.
func TestCorpusMergeLegs(t *testing.T) {
	t.Parallel()
	opt := Options{Workspace: "testdata/fixtures/go"}
	a, err := ExtractFile("testdata/corpus/actions-go.log", opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ExtractFile("testdata/corpus/actions-go-json.log", opt)
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(a, b)
	if len(m.Failures) != len(a.Failures) || len(m.BuildErrors) != len(a.BuildErrors) {
		t.Fatalf("merged %d failures / %d build errors, want %d / %d", len(m.Failures), len(m.BuildErrors),
			len(a.Failures), len(a.BuildErrors))
	}
	for _, f := range m.Failures {
		if f.Count != 2 {
			t.Errorf("%s: count %d, want 2", f.ID, f.Count)
		}
	}
	if a.Signature() != b.Signature() || m.Signature() != a.Signature() {
		t.Errorf("signatures differ: %s %s %s", a.Signature(), b.Signature(), m.Signature())
	}
	if !strings.Contains(m.Render(0), "(seen 2 times)") {
		t.Errorf("render does not show the count")
	}
}
