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

	"github.com/org/mini-agent/internal/patch/patchtest"
)

const corpusDir = "testdata/corpus"

func loadCorpus(t testing.TB) []*patchtest.Case {
	t.Helper()
	cases, err := patchtest.Load(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("corpus has %d cases, want at least 100", len(cases))
	}
	return cases
}

func mapFS(files map[string]patchtest.File) fstest.MapFS {
	m := fstest.MapFS{}
	for p, f := range files {
		mode := fs.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		m[p] = &fstest.MapFile{Data: f.Data, Mode: mode}
	}
	return m
}

// runEngine parses and applies a case's patch to its files in memory and
// returns the resulting tree, or the refusal.
func runEngine(files map[string]patchtest.File, text string) (map[string]patchtest.File, *Result, error) {
	p, err := Parse(text)
	if err != nil {
		return nil, nil, err
	}
	res, err := Apply(mapFS(files), p)
	if err != nil {
		return nil, nil, err
	}
	return applyToTree(files, res), res, nil
}

// applyToTree is what a writer does with a Result, on a map.
func applyToTree(files map[string]patchtest.File, res *Result) map[string]patchtest.File {
	out := map[string]patchtest.File{}
	for p, f := range files {
		out[p] = f
	}
	for _, fc := range res.Files {
		if fc.OldPath != "" {
			delete(out, fc.OldPath)
		}
		if fc.NewPath != "" {
			out[fc.NewPath] = patchtest.File{Data: fc.New, Exec: fc.NewMode&0o111 != 0}
		}
	}
	return out
}

// treeDiff describes how got differs from want, "" if equal.
func treeDiff(got, want map[string]patchtest.File) string {
	var keys []string
	seen := map[string]bool{}
	for k := range got {
		keys, seen[k] = append(keys, k), true
	}
	for k := range want {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			fmt.Fprintf(&b, "%s: missing\n", k)
		case !wok:
			fmt.Fprintf(&b, "%s: unexpected\n", k)
		case !bytes.Equal(g.Data, w.Data):
			fmt.Fprintf(&b, "%s: got %q\nwant %q\n", k, g.Data, w.Data)
		case g.Exec != w.Exec:
			fmt.Fprintf(&b, "%s: exec %v, want %v\n", k, g.Exec, w.Exec)
		}
	}
	return b.String()
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	for _, c := range loadCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			got, res, err := runEngine(c.Files, c.Patch)
			if !c.Want.Applied {
				if err == nil {
					t.Fatalf("applied, want refusal containing %q; diff:\n%s", c.Want.Substring, res.Diff)
				}
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *patch.Error", err)
				}
				if !strings.Contains(err.Error(), c.Want.Substring) || !strings.HasSuffix(err.Error(), Trailer) {
					t.Fatalf("error %q does not contain %q and end with %q", err, c.Want.Substring, Trailer)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if d := treeDiff(got, c.Result); d != "" {
				t.Fatalf("wrong result:\n%s\nrebuilt diff:\n%s", d, res.Diff)
			}
		})
	}
}
