package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
// matching, rendering) on a large tree for each shared query. The file list
// is cached within a run, so the steady-state call reuses it; the "-cold"
// variant of the first query drops the cache before every call to show what
// the first search of a run, or the first after a change, costs. Beside
// ns/op it reports cpu-ns/op: user plus system time of the process and its
// children (git ls-files) per call.
func BenchmarkSearch(b *testing.B) {
	dir := benchDir(b)
	ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	s := NewSearch(ws)
	ctx := context.Background()
	queries := loadBenchQueries(b)
	queries = append(queries, benchQuery{queries[0].name + "-cold", queries[0].query})
	for _, q := range queries {
		cold := strings.HasSuffix(q.name, "-cold")
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
			if _, err := s.Execute(ctx, args); err != nil { // warm the cache
				b.Fatal(err)
			}
			cpu0 := cpuTime()
			for b.Loop() {
				if cold {
					invalidateForBench(ws)
				}
				res, err := s.Execute(ctx, args)
				if err != nil || res.IsError {
					b.Fatalf("search: %v %s", err, res.Text)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(files)), "files")
			b.ReportMetric(float64(lines), "lines")
			b.ReportMetric(float64(peakRSS()), "peak-rss-KB")
		})
	}
}

// peakRSS is this process's peak resident set size so far, in KiB.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss)
}

// cpuTime is the user plus system time of this process and its waited-for
// children so far.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
