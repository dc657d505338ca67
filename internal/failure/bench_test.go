package failure

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// noiseLines are what a long, mostly green job prints between failures.
var noiseLines = []string{
	"go: downloading github.com/example/module%d v1.%d.0",
	"ok  \texample.com/service/pkg%d\t0.%03ds",
	"=== RUN   TestHandler%d",
	"--- PASS: TestHandler%d (0.%02ds)",
	"    handler_test.go:%d: request %d served in 12ms",
	"\x1b[32m✓\x1b[39m renders component %d \x1b[2m(%dms)\x1b[22m",
	"test result::case_%d ... ok (%d)",
	"npm WARN deprecated package-%d@%d.0.0: use something else",
	"Compiling crate-%d v0.%d.0",
	"[command]/usr/bin/git fetch --depth=1 origin +refs/heads/main%d:refs/remotes/origin/main%d",
	"INFO  worker %d processed batch %d with 0 errors and no warnings",
}

// recognizedPieces are corpus files the benchmark log repeats.
var recognizedPieces = []string{"go-test.txt", "go-test-v.txt", "cargo-test.txt", "jest.txt",
	"pytest.txt", "vitest.txt", "node-test-tap.txt", "go-test-json.jsonl"}

// writeBenchLog writes an Actions job log of about size bytes: passing
// steps full of noise, then a failing step whose real corpus output (the
// pieceFiles) is repeated among noise, with timestamps, ANSI colours and
// a BOM.
func writeBenchLog(tb testing.TB, path string, size int64, pieceFiles ...string) {
	tb.Helper()
	var pieces []string
	for _, name := range pieceFiles {
		b, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
		if err != nil {
			tb.Fatal(err)
		}
		pieces = append(pieces, string(b))
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	n := 0
	emit := func(s string) {
		n++
		line := fmt.Sprintf("2024-05-01T12:%02d:%02d.%07dZ %s\n", n/600000%60, n/10000%60, n%10000000, s)
		written += int64(len(line))
		w.WriteString(line)
	}
	w.WriteString("\uFEFF")
	const steps = 10
	for step := 0; step < steps; step++ {
		failing := step == steps-1
		emit(fmt.Sprintf("##[group]Run make step-%d", step))
		emit(fmt.Sprintf("\x1b[36;1mmake step-%d\x1b[0m", step))
		emit("shell: /usr/bin/bash -e {0}")
		emit("##[endgroup]")
		for i := 0; written < size*int64(step+1)/steps; i++ {
			if failing && i%500 == 0 {
				for _, l := range strings.Split(pieces[(i/500)%len(pieces)], "\n") {
					emit(l)
				}
				continue
			}
			emit(fmt.Sprintf(noiseLines[i%len(noiseLines)], i, step))
		}
		if failing {
			emit("##[error]Process completed with exit code 1.")
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// goTestVFailing are the failing go test -v captures a go test -v
// benchmark log repeats among passing packages.
var goTestVFailing = []string{"go-test-v.txt", "go-interrupted.txt", "go-test-v-go114.txt"}

// writeGoTestVLog writes the output of a large `go test -v ./...` run of
// about size bytes: the real passing output of go-more/verbose
// (go-test-v-pass.txt: tests, subtests, t.Log lines, parallel tests,
// skips, prints) repeated as many packages, and every 500 packages one
// of the real failing captures (goTestVFailing). No timestamps, no
// colours: what go test prints, as a developer or a CI step saves it.
func writeGoTestVLog(tb testing.TB, path string, size int64) {
	tb.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
		if err != nil {
			tb.Fatal(err)
		}
		return string(b)
	}
	pass := read("go-test-v-pass.txt")
	const pkg = "example.com/gomore/verbose"
	if !strings.Contains(pass, pkg) {
		tb.Fatalf("go-test-v-pass.txt does not name %s", pkg)
	}
	var failing []string
	for _, name := range goTestVFailing {
		failing = append(failing, read(name))
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	for i := 0; written < size; i++ {
		piece := strings.ReplaceAll(pass, pkg, fmt.Sprintf("%s%d", pkg, i))
		if i%500 == 250 {
			piece = failing[(i/500)%len(failing)]
		}
		n, _ := w.WriteString(piece)
		written += int64(n)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// writeShapedLog writes the benchmark log of the shape named (actions:
// writeBenchLog's Actions job log; gotestv: writeGoTestVLog's go test -v
// output) of about mb MB.
func writeShapedLog(tb testing.TB, path, shape string, mb int64) {
	tb.Helper()
	switch shape {
	case "", "actions":
		writeBenchLog(tb, path, mb<<20, recognizedPieces...)
	case "gotestv":
		writeGoTestVLog(tb, path, mb<<20)
	default:
		tb.Fatalf("unknown benchmark log shape %q (actions, gotestv)", shape)
	}
}

// peakReader samples the live heap as the log streams through it.
type peakReader struct {
	r      io.Reader
	n      int64
	next   int64
	peak   uint64
	sample []metrics.Sample
}

const peakEvery = 1 << 20

func newPeakReader(r io.Reader) *peakReader {
	return &peakReader{r: r, next: peakEvery,
		sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
}

// Seek lets Extract see the file as ExtractFile gives it (seekable: the
// generic excerpt is then built only when needed).
func (p *peakReader) Seek(offset int64, whence int) (int64, error) {
	s, ok := p.r.(io.Seeker)
	if !ok {
		return 0, errors.New("not seekable")
	}
	return s.Seek(offset, whence)
}

func (p *peakReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.n >= p.next {
		p.next += peakEvery
		metrics.Read(p.sample)
		if v := p.sample[0].Value.Uint64(); v > p.peak {
			p.peak = v
		}
	}
	return n, err
}

// BenchmarkExtract streams generated Actions logs of 10 MB and 100 MB
// from disk and reports throughput (MB/s wall, cpu-MB/s per CPU second)
// and the peak live heap during extraction (peak-heap-MB), which should
// not grow with the log size.
//
//	go test -run '^$' -bench Extract -benchtime 3x ./internal/failure
func BenchmarkExtract(b *testing.B) {
	dir := b.TempDir()
	for _, bc := range []struct {
		name   string
		mb     int64
		pieces []string
	}{
		{"10MB", 10, recognizedPieces},
		{"100MB", 100, recognizedPieces},
		// Nothing recognized: the generic fallback looks at every line.
		{"100MB-unrecognized", 100, []string{"make.txt"}},
		// go test -v output, no Actions framing (pieces unused).
		{"100MB-gotestv", 100, nil},
	} {
		path := filepath.Join(dir, bc.name+".log")
		if bc.pieces == nil {
			writeGoTestVLog(b, path, bc.mb<<20)
		} else {
			writeBenchLog(b, path, bc.mb<<20, bc.pieces...)
		}
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(st.Size())
			var peak uint64
			var fc *FailureContext
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				runtime.GC()
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				pr := newPeakReader(f)
				start := cpuTime()
				b.StartTimer()
				fc, err = Extract(pr, Options{})
				b.StopTimer()
				cpu += cpuTime() - start
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				peak = max(peak, pr.peak)
				b.StartTimer()
			}
			// CPU time of the process (the machine is shared, so wall-clock
			// MB/s understates the extractor's own speed).
			b.ReportMetric(float64(st.Size())*float64(b.N)/(1<<20)/cpu.Seconds(), "cpu-MB/s")
			if fc.Empty() || fc.ExitCode != 1 {
				b.Fatalf("nothing found in the generated log: %+v", fc)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(len(fc.Failures)), "failures")
		})
	}
}

// TestBenchLogBounded extracts a generated 4 MB log (a small version of
// the benchmark's) and checks the result is the corpus failures, bounded.
func TestBenchLogBounded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "job.log")
	writeBenchLog(t, path, 4<<20, recognizedPieces...)
	fc, err := ExtractFile(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fc.ExitCode != 1 || !strings.HasPrefix(fc.Step, "Run make step-") {
		t.Errorf("step %q exit %d", fc.Step, fc.ExitCode)
	}
	ids := map[string]bool{}
	for _, id := range fc.IDs() {
		ids[id] = true
	}
	for _, id := range []string{"TestAdd/negative", "tests::subtracts", "calc › sub › subtracts"} {
		if !ids[id] {
			t.Errorf("missing %s in %v", id, fc.IDs())
		}
	}
	if len(fc.Failures) > maxFailures {
		t.Errorf("%d failures kept", len(fc.Failures))
	}
	if out := fc.Render(0); len(out) > DefaultBudget {
		t.Errorf("rendered %d bytes", len(out))
	}
}

// BenchmarkExtractLog extracts the log named by $MINI_AGENT_BENCH_LOG
// (for scripts/bench-failure.sh, which times grep on the same file). When
// the file does not exist it is first written, of the shape named by
// $MINI_AGENT_BENCH_SHAPE (actions, the default: the Actions log of
// BenchmarkExtract; gotestv: go test -v output) and of
// $MINI_AGENT_BENCH_MB MB (default 100). It reports the extraction's CPU time (cpu-ns/op), the
// peak live heap and the process's peak RSS (peak-rss-MB: the test
// binary's whole footprint, only meaningful when the log was not written
// by this run) besides the wall time.
func BenchmarkExtractLog(b *testing.B) {
	path := os.Getenv("MINI_AGENT_BENCH_LOG")
	if path == "" {
		b.Skip("MINI_AGENT_BENCH_LOG not set")
	}
	if _, err := os.Stat(path); err != nil {
		mb := int64(100)
		if v := os.Getenv("MINI_AGENT_BENCH_MB"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				b.Fatalf("MINI_AGENT_BENCH_MB=%q: want a positive number of MB", v)
			}
			mb = n
		}
		writeShapedLog(b, path, os.Getenv("MINI_AGENT_BENCH_SHAPE"), mb)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	var cpu time.Duration
	var peak uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		pr := newPeakReader(f)
		start := cpuTime()
		b.StartTimer()
		fc, err := Extract(pr, Options{})
		b.StopTimer()
		cpu += cpuTime() - start
		f.Close()
		if err != nil || fc.Empty() {
			b.Fatalf("extract: %v %+v", err, fc)
		}
		peak = max(peak, pr.peak)
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MB") // (Linux: Maxrss is in KiB)
	}
}
