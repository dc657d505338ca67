package failure

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden from the current extractor")

// goldenOf is everything extraction gives for one input: the context as
// JSON and its rendering at the default and at a small budget.
func goldenOf(t *testing.T, file string, opt Options) []byte {
	t.Helper()
	fc, err := ExtractFile(file, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(fc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	out := append(b, "\n---- Render(0)\n"...)
	out = append(out, fc.Render(0)...)
	out = append(out, "\n---- Render(600)\n"...)
	out = append(out, fc.Render(600)...)
	return append(out, '\n')
}

// TestGoldenRenders holds the extractor to the output it gave before the
// speed work of issue 15 (testdata/golden, written by -update-golden):
// every corpus file, and generated Actions logs like the benchmark's (one
// with recognized output among the noise, one with nothing recognized),
// must give byte-identical JSON and renders.
func TestGoldenRenders(t *testing.T) {
	t.Parallel()
	type input struct {
		name, file string
		opt        Options
	}
	var inputs []input
	for _, c := range corpus(t) {
		inputs = append(inputs, input{c.name, c.file, c.options()})
	}
	dir := t.TempDir()
	for _, g := range []struct {
		name   string
		pieces []string
	}{{"generated-recognized.log", recognizedPieces}, {"generated-unrecognized.log", []string{"make.txt"}}} {
		path := filepath.Join(dir, g.name)
		writeBenchLog(t, path, 3<<20, g.pieces...)
		inputs = append(inputs, input{g.name, path, Options{}})
	}
	for _, in := range inputs {
		got := goldenOf(t, in.file, in.opt)
		golden := filepath.Join("testdata", "golden", in.name+".golden")
		if *updateGolden {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%s: %v (run go test -run GoldenRenders -update-golden once)", in.name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: output differs from %s:\n%s", in.name, golden, firstDiff(string(got), string(want)))
		}
	}
}

// firstDiff shows where two texts first differ.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return "got:  ..." + a[lo:min(len(a), i+200)] + "\nwant: ..." + b[lo:min(len(b), i+200)]
}
