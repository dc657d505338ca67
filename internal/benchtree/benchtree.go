// Package benchtree generates, deterministically, a source tree shaped like
// a large JavaScript monorepo (babel): many packages, each with a few
// source files and hundreds of small test-fixture directories of one to
// three files, so that directories number about half the files. The search
// and snapshot benchmarks and scripts/bench-search.sh use it to measure on
// a many-directory tree without fetching one.
//
// The shape, for Generate(dir, 27700, seed): about 27.7k files in 13k
// directories (babel at 7.2x: 27.7k tracked files, 13k directories), fixture
// files at depth 6–7 (packages/NAME/test/fixtures/[GROUP/]CATEGORY/CASE/
// FILE), most files small (fixture inputs of a few hundred bytes, parser
// output.json ASTs of 2–30 KB, sources of 2–40 KB), plus ignored build
// output (packages/*/lib, node_modules) that a search must skip, and a root
// and a nested .gitignore.
//
// Test fake: test-only helper for benchmarks; product code never imports it.
package benchtree

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Stats describes a generated tree.
type Stats struct {
	Files    int   // files a search covers (not ignored)
	Dirs     int   // directories holding them, the root excluded
	Ignored  int   // files under ignored paths
	MaxDepth int   // most directories above a file
	Bytes    int64 // total size of the covered files
	// Size percentiles of the covered files, in bytes.
	P50, P90, P99, Max int64
}

func (s Stats) String() string {
	return fmt.Sprintf("%d files in %d dirs (+%d ignored files), depth <= %d, %.1f MB; file size p50 %d B, p90 %d B, p99 %d B, max %d B",
		s.Files, s.Dirs, s.Ignored, s.MaxDepth, float64(s.Bytes)/1e6, s.P50, s.P90, s.P99, s.Max)
}

// rootIgnore is the root .gitignore: plain names, anchored globs, a
// negation, a directory-only rule.
const rootIgnore = `# build output
/packages/*/lib
!/packages/*/lib/.keep
/packages/*/test/tmp
node_modules/
/coverage
*.log
.DS_Store
/build/
/dts
*.tsbuildinfo
/packages/babel-*/test/fixtures/**/actual.js
`

// gen carries the generator's state.
type gen struct {
	r     *rand.Rand
	dir   string
	st    Stats
	sizes []int64
	dirs  map[string]bool
}

// Generate writes a tree of about files covered files under dir (which
// must exist and be empty) and returns its shape. The same files and seed
// give the same tree.
func Generate(dir string, files int, seed uint64) (Stats, error) {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x62656e63)), dir: dir, dirs: map[string]bool{}}
	if err := g.write(".gitignore", []byte(rootIgnore)); err != nil {
		return Stats{}, err
	}
	if err := g.write("package.json", g.json(12)); err != nil {
		return Stats{}, err
	}
	for p := 0; g.st.Files < files; p++ {
		if err := g.pkg(p, files); err != nil {
			return Stats{}, err
		}
	}
	slices.Sort(g.sizes)
	pct := func(q float64) int64 { return g.sizes[min(len(g.sizes)-1, int(q*float64(len(g.sizes))))] }
	g.st.P50, g.st.P90, g.st.P99, g.st.Max = pct(0.5), pct(0.9), pct(0.99), g.sizes[len(g.sizes)-1]
	g.st.Dirs = len(g.dirs)
	return g.st, nil
}

// pkg writes package p: a manifest, sources, fixtures, and (ignored) build
// output; it stops when the tree holds want files.
func (g *gen) pkg(p, want int) error {
	name := fmt.Sprintf("babel-%s-%s-%d", pick(g.r, kinds), pick(g.r, words), p)
	base := "packages/" + name
	if err := g.write(base+"/package.json", g.json(15+g.r.IntN(20))); err != nil {
		return err
	}
	if err := g.write(base+"/README.md", g.prose(10+g.r.IntN(30))); err != nil {
		return err
	}
	for i := range 2 + g.r.IntN(10) {
		sub := ""
		if i > 3 && g.r.IntN(2) == 0 {
			sub = pick(g.r, words) + "/"
		}
		if err := g.write(fmt.Sprintf("%s/src/%s%s-%d.ts", base, sub, pick(g.r, words), i), g.code(60+g.r.IntN(900))); err != nil {
			return err
		}
	}
	if g.r.IntN(5) == 0 { // build output, ignored
		for i := range 5 + g.r.IntN(20) {
			if err := g.writeIgnored(fmt.Sprintf("%s/lib/%s-%d.js", base, pick(g.r, words), i), g.code(50+g.r.IntN(400))); err != nil {
				return err
			}
		}
	}
	if g.r.IntN(12) == 0 { // a nested .gitignore and what it hides
		if err := g.write(base+"/.gitignore", []byte("/scratch\n*.tmp\n")); err != nil {
			return err
		}
		for i := range 3 + g.r.IntN(10) {
			if err := g.writeIgnored(fmt.Sprintf("%s/scratch/out-%d.js", base, i), g.code(20+g.r.IntN(100))); err != nil {
				return err
			}
		}
	}
	if p%40 == 7 { // a vendored dependency tree, ignored
		for i := range 200 {
			if err := g.writeIgnored(fmt.Sprintf("%s/node_modules/dep-%d/%s/index-%d.js", base, i%17, pick(g.r, words), i), g.code(30+g.r.IntN(200))); err != nil {
				return err
			}
		}
	}
	if err := g.write(base+"/test/index.js", g.code(10+g.r.IntN(30))); err != nil {
		return err
	}
	// Fixtures: a parser-like package nests them one level deeper and
	// stores large JSON ASTs.
	parser := p%9 == 0
	cats := 3 + g.r.IntN(12)
	if parser {
		cats = 20 + g.r.IntN(30)
	}
	for c := range cats {
		cat := fmt.Sprintf("%s/test/fixtures/%s-%d", base, pick(g.r, words), c)
		if parser {
			cat = fmt.Sprintf("%s/test/fixtures/es%d/%s-%d", base, 2015+c%10, pick(g.r, words), c)
		}
		for k := range 4 + g.r.IntN(22) {
			if g.st.Files >= want {
				return nil
			}
			if err := g.fixture(fmt.Sprintf("%s/%s-%s-%d", cat, pick(g.r, words), pick(g.r, words), k), parser); err != nil {
				return err
			}
		}
	}
	return nil
}

// fixture writes one test case directory: an input, and an output or
// options or both.
func (g *gen) fixture(dir string, parser bool) error {
	if err := g.write(dir+"/input.js", g.code(2+g.r.IntN(25))); err != nil {
		return err
	}
	switch {
	case parser && g.r.IntN(10) < 8:
		if err := g.write(dir+"/output.json", g.ast(60+g.r.IntN(900))); err != nil {
			return err
		}
	case g.r.IntN(10) < 8:
		if err := g.write(dir+"/output.js", g.code(3+g.r.IntN(60))); err != nil {
			return err
		}
	}
	if g.r.IntN(10) < 4 {
		return g.write(dir+"/options.json", g.json(2+g.r.IntN(6)))
	}
	return nil
}

func (g *gen) write(rel string, data []byte) error {
	if err := g.put(rel, data); err != nil {
		return err
	}
	g.st.Files++
	g.st.Bytes += int64(len(data))
	g.sizes = append(g.sizes, int64(len(data)))
	depth := strings.Count(rel, "/")
	g.st.MaxDepth = max(g.st.MaxDepth, depth)
	for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
		if g.dirs[d] {
			break
		}
		g.dirs[d] = true
	}
	return nil
}

func (g *gen) writeIgnored(rel string, data []byte) error {
	g.st.Ignored++
	return g.put(rel, data)
}

func (g *gen) put(rel string, data []byte) error {
	p := filepath.Join(g.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func pick(r *rand.Rand, list []string) string { return list[r.IntN(len(list))] }
