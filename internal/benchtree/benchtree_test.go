package benchtree

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestMain doubles as the generator command of scripts/bench-search.sh:
// with BENCHTREE_OUT set, the test binary writes a tree there
// (BENCHTREE_FILES files, default 27700), prints its Stats and exits.
func TestMain(m *testing.M) {
	if out := os.Getenv("BENCHTREE_OUT"); out != "" {
		files := 27700
		if s := os.Getenv("BENCHTREE_FILES"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				fmt.Fprintf(os.Stderr, "benchtree: BENCHTREE_FILES=%q: want a positive number\n", s)
				os.Exit(2)
			}
			files = n
		}
		st, err := Generate(out, files, 1)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtree:", err)
			os.Exit(1)
		}
		fmt.Println(st)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestGenerate checks the shape the package doc promises, counted on disk,
// and that the same seed gives the same tree.
func TestGenerate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := Generate(dir, 3000, 7)
	if err != nil {
		t.Fatal(err)
	}
	files, dirs, ignored := 0, 0, 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case d.IsDir() && (d.Name() == "lib" || d.Name() == "node_modules" || d.Name() == "scratch"):
			n := 0
			filepath.WalkDir(p, func(_ string, d fs.DirEntry, _ error) error {
				if !d.IsDir() {
					n++
				}
				return nil
			})
			ignored += n
			return fs.SkipDir
		case d.IsDir():
			dirs++
		default:
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files != st.Files || dirs != st.Dirs || ignored != st.Ignored {
		t.Errorf("on disk %d files, %d dirs, %d ignored; Stats says %+v", files, dirs, ignored, st)
	}
	if st.Files < 3000 || st.Files > 3010 {
		t.Errorf("%d files, want about 3000", st.Files)
	}
	if ratio := float64(st.Dirs) / float64(st.Files); ratio < 0.35 || ratio > 0.6 {
		t.Errorf("%d dirs for %d files (%.2f): want a many-directory tree, about 0.47", st.Dirs, st.Files, ratio)
	}
	if st.MaxDepth < 6 || st.P50 > 2000 || st.Max < 10000 {
		t.Errorf("shape %v: want depth >= 6, mostly small files, a few large", st)
	}
	again := t.TempDir()
	st2, err := Generate(again, 3000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if st2 != st {
		t.Errorf("same seed, different trees: %v vs %v", st, st2)
	}
}
