package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchQuery is one line of testdata/search_bench/queries.tsv, the query
// list shared with scripts/bench-search.sh.
type benchQuery struct{ name, query string }

func loadBenchQueries(tb testing.TB) []benchQuery {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "search_bench", "queries.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var qs []benchQuery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, q, ok := strings.Cut(line, "\t")
		if !ok {
			tb.Fatalf("bad query line %q", line)
		}
		qs = append(qs, benchQuery{name, q})
	}
	if len(qs) == 0 {
		tb.Fatal("no benchmark queries")
	}
	return qs
}

// benchDir is the tree to search: $MINI_AGENT_BENCH_DIR (the script points
// it at a git-initialised copy of GOROOT/src), else GOROOT/src itself, which
// is not a git work tree and so exercises the walking fallback.
func benchDir(b *testing.B) string {
	if d := os.Getenv("MINI_AGENT_BENCH_DIR"); d != "" {
		return d
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("GOROOT/src missing: %v", err)
	}
	return dir
}

// BenchmarkSearch times the search tool end to end (listing, reading,
// matching, rendering) on a large tree for each shared query.
func BenchmarkSearch(b *testing.B) {
	dir := benchDir(b)
	ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	s := NewSearch(ws)
	ctx := context.Background()
	for _, q := range loadBenchQueries(b) {
		args, _ := json.Marshal(map[string]string{"query": q.query})
		b.Run(q.name, func(b *testing.B) {
			// Count once, outside the timing, so the figures say how much
			// work each query is.
			m, err := newMatcher(q.query)
			if err != nil {
				b.Fatal(err)
			}
			files, err := ws.listFiles(ctx)
			if err != nil {
				b.Fatal(err)
			}
			o, err := ws.searchFiles(ctx, m, files, searchDefaultResults)
			if err != nil {
				b.Fatal(err)
			}
			lines := 0
			for _, r := range o.results {
				lines += r.count
			}
			for b.Loop() {
				res, err := s.Execute(ctx, args)
				if err != nil || res.IsError {
					b.Fatalf("search: %v %s", err, res.Text)
				}
			}
			b.ReportMetric(float64(len(files)), "files")
			b.ReportMetric(float64(lines), "lines")
		})
	}
}
