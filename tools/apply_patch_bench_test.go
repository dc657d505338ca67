package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkApplyPatch times one apply_patch call (parse, locate the hunks,
// rebuild and check the diff, write the file, the Go syntax check) on a
// generated 1-8 MB file with a 3-hunk unified diff, and `git apply` on a
// copy of the same file with the same patch, alternating call by call so
// that load from other processes hits both alike. It reports, per call,
// CPU time (user + system, from getrusage) and the peak RSS the call added
// for both tools, and the ratios; scripts/bench-patch.sh prints them beside
// the targets. Both tools must produce the same bytes.
func BenchmarkApplyPatch(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		b.Skip("/usr/bin/time not installed")
	}
	for _, mb := range benchSizes(b) {
		for _, ext := range []string{"txt", "go"} {
			b.Run(fmt.Sprintf("%dMB-%s", mb, ext), func(b *testing.B) {
				name := "big." + ext
				content, want, diff := benchPatchInput(mb<<20, ext)
				args, err := json.Marshal(map[string]string{"patch": diff})
				if err != nil {
					b.Fatal(err)
				}
				var mini, git benchUsage
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					mini.add(b, func() { benchMini(b, name, content, want, args) })
					benchGit(b, &git, name, content, want, diff)
					b.StartTimer()
				}
				mini.report(b, "mini")
				git.report(b, "git")
				b.ReportMetric(float64(mini.cpu)/float64(git.cpu), "cpu-ratio")
				b.ReportMetric(float64(mini.peak)/float64(len(content)), "mini-rss/size")
			})
		}
	}
}

// benchUsage accumulates CPU time and the largest peak RSS of a tool's calls.
type benchUsage struct {
	cpu   time.Duration
	peak  int64
	calls int
}

// add measures fn in this process: CPU from getrusage, peak RSS as the
// growth of VmHWM over VmRSS after a GC (the high-water mark is reset first).
func (u *benchUsage) add(b *testing.B, fn func()) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
	base := procStatusKB(b, "VmRSS")
	c0 := cpuNow(b)
	fn()
	u.cpu += cpuNow(b) - c0
	u.peak = max(u.peak, (procStatusKB(b, "VmHWM")-base)*1024)
	u.calls++
}

func (u *benchUsage) report(b *testing.B, who string) {
	if u.calls == 0 {
		return
	}
	b.ReportMetric(float64(u.cpu.Microseconds())/1000/float64(u.calls), who+"-cpu-ms")
	b.ReportMetric(float64(u.peak)/(1<<20), who+"-peak-MB")
}

func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func procStatusKB(b *testing.B, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// benchMini runs the tool once on a fresh copy of the file.
func benchMini(b *testing.B, name string, content, want []byte, args json.RawMessage) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	res, err := NewApplyPatch(ws).Execute(context.Background(), args)
	if err != nil || res.IsError || strings.Contains(res.Text, "warning") {
		b.Fatalf("apply_patch: %v %s", err, res.Text)
	}
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || !bytes.Equal(got, want) {
		b.Fatalf("apply_patch wrote a different result (%v)", err)
	}
}

// benchGit runs `git apply` once on a fresh copy; its CPU and peak RSS come
// from the child's rusage.
func benchGit(b *testing.B, u *benchUsage, name string, content, want []byte, diff string) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
		b.Fatal(err)
	}
	pf := filepath.Join(b.TempDir(), "p.diff")
	if err := os.WriteFile(pf, []byte(diff), 0o644); err != nil {
		b.Fatal(err)
	}
	cpu, peak := benchChild(b, dir, "git", "apply", pf)
	u.cpu += cpu
	u.peak = max(u.peak, peak)
	u.calls++
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || !bytes.Equal(got, want) {
		b.Fatalf("git apply wrote a different result (%v)", err)
	}
}

// benchChild runs a command in dir and returns its CPU time (user +
// system, from the rusage of /usr/bin/time, which counts the command it
// waited for) and its own peak RSS in bytes (from /usr/bin/time: a child
// started by this process shares its memory until exec, which would count
// in its rusage).
func benchChild(b *testing.B, dir string, argv ...string) (time.Duration, int64) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tf := filepath.Join(b.TempDir(), "time")
	cmd := exec.CommandContext(ctx, "/usr/bin/time", append([]string{"-o", tf, "-f", "%M"}, argv...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", argv[0], err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage) // time's and the command's CPU
	tout, err := os.ReadFile(tf)
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(tout))
	if len(f) == 0 {
		b.Fatalf("no figure from /usr/bin/time: %q", tout)
	}
	kb, err := strconv.ParseInt(f[len(f)-1], 10, 64)
	if err != nil {
		b.Fatalf("/usr/bin/time: %q", tout)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), kb * 1024
}

// BenchmarkApplyPatchProcess is BenchmarkApplyPatch with mini-agent run as
// a whole process, as a user runs it: `mini-agent tool apply_patch
// --workdir DIR ARGS` (the binary named by $MINI_AGENT_BIN, which
// scripts/bench-patch.sh builds), alternating call by call with `git
// apply`, both timed by /usr/bin/time: CPU (user + system) includes each
// process's start-up, peak RSS is the process's. mini-base-peak-MB is the
// peak RSS of the same command applying a one-line patch to a one-line
// file (what the process takes whatever the file: mostly the pages of its
// own 50 MB binary); mini-rss/size is the peak RSS above it per byte of
// the file, mini-peak/size the whole peak per byte. Each figure is the
// median of the calls of the run.
func BenchmarkApplyPatchProcess(b *testing.B) {
	bin := os.Getenv("MINI_AGENT_BIN")
	if bin == "" {
		b.Skip("MINI_AGENT_BIN not set (scripts/bench-patch.sh builds the binary)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		b.Skip("/usr/bin/time not installed")
	}
	sizes := benchSizes(b)
	runMini := func(b *testing.B, name string, content, want []byte, args []byte) (time.Duration, int64) {
		dir := b.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			b.Fatal(err)
		}
		cpu, peak := benchChild(b, dir, bin, "tool", "apply_patch", "--workdir", dir, string(args))
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			b.Fatalf("mini-agent tool apply_patch wrote a different result (%v)", err)
		}
		return cpu, peak
	}
	baseArgs, err := json.Marshal(map[string]string{"patch": "--- a/one.txt\n+++ b/one.txt\n@@ -1 +1 @@\n-a\n+b\n"})
	if err != nil {
		b.Fatal(err)
	}
	for _, mb := range sizes {
		for _, ext := range []string{"txt", "go"} {
			b.Run(fmt.Sprintf("%dMB-%s", mb, ext), func(b *testing.B) {
				name := "big." + ext
				content, want, diff := benchPatchInput(mb<<20, ext)
				args, err := json.Marshal(map[string]string{"patch": diff})
				if err != nil {
					b.Fatal(err)
				}
				// Per call: CPU of each tool, and mini-agent's peak RSS and
				// that of its one-line call just before (paired: the part of
				// the peak that is the binary's own pages moves from call to
				// call by several MB).
				var miniCPU, gitCPU, ratio, miniPeak, gitPeak, basePeak, over []float64
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					_, bp := runMini(b, "one.txt", []byte("a\n"), []byte("b\n"), baseArgs)
					mc, mp := runMini(b, name, content, want, args)
					var git benchUsage
					benchGit(b, &git, name, content, want, diff)
					miniCPU = append(miniCPU, float64(mc.Microseconds())/1000)
					gitCPU = append(gitCPU, float64(git.cpu.Microseconds())/1000)
					ratio = append(ratio, float64(mc)/float64(git.cpu))
					miniPeak = append(miniPeak, float64(mp)/(1<<20))
					gitPeak = append(gitPeak, float64(git.peak)/(1<<20))
					basePeak = append(basePeak, float64(bp)/(1<<20))
					over = append(over, float64(mp-bp)/float64(len(content)))
					b.StartTimer()
				}
				b.ReportMetric(median(miniCPU), "mini-cpu-ms")
				b.ReportMetric(median(gitCPU), "git-cpu-ms")
				b.ReportMetric(median(ratio), "cpu-ratio")
				b.ReportMetric(median(miniPeak), "mini-peak-MB")
				b.ReportMetric(median(gitPeak), "git-peak-MB")
				b.ReportMetric(median(basePeak), "mini-base-peak-MB")
				b.ReportMetric(median(over), "mini-rss/size")
				b.ReportMetric(median(miniPeak)*(1<<20)/float64(len(content)), "mini-peak/size")
			})
		}
	}
}

// median of xs (sorted in place).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// benchSizes are the file sizes in MB: $MINI_AGENT_PATCH_BENCH_MB, else 1 4 8.
func benchSizes(b *testing.B) []int {
	sizes := []int{1, 4, 8}
	if s := os.Getenv("MINI_AGENT_PATCH_BENCH_MB"); s != "" {
		sizes = nil
		for _, f := range strings.Fields(s) {
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 {
				b.Fatalf("MINI_AGENT_PATCH_BENCH_MB: %q is not a positive number of MB", f)
			}
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// benchPatchInput generates a file of about size bytes (valid Go for "go",
// numbered text lines otherwise), the file after the patch, and a correct
// 3-hunk unified diff changing one line at 10%, 50% and 90% of the file.
func benchPatchInput(size int, ext string) (content, want []byte, diff string) {
	var lines []string
	var targets []int // lines to change
	size -= 4 << 10   // stay under apply_patch's file limit at 8 MB
	n := 0            // bytes so far
	if ext == "go" {
		lines = append(lines, "package big", "")
		for i := 0; n < size; i++ {
			lines = append(lines,
				fmt.Sprintf("// F%d returns a value derived from x.", i),
				fmt.Sprintf("func F%d(x int) int {", i),
				fmt.Sprintf("\ty := x * %d", i%89+2),
				fmt.Sprintf("\tif y > %d {", i%1000),
				fmt.Sprintf("\t\treturn y - %d", i%7),
				"\t}",
				fmt.Sprintf("\treturn y + %d", i%13),
				"}",
				"")
			for _, l := range lines[len(lines)-9:] {
				n += len(l) + 1
			}
		}
	} else {
		for i := 0; n < size; i++ {
			lines = append(lines, fmt.Sprintf("line %07d: value = compute(%d)", i, i%97))
			n += len(lines[i]) + 1
		}
	}
	for _, frac := range []int{10, 50, 90} {
		t := len(lines) * frac / 100
		if ext == "go" {
			for !strings.HasPrefix(lines[t], "\treturn y + ") {
				t++
			}
		}
		targets = append(targets, t)
	}
	var c, w, d strings.Builder
	changed := map[int]string{}
	for _, t := range targets {
		changed[t] = lines[t] + " // patched"
	}
	for i, l := range lines {
		c.WriteString(l + "\n")
		if n, ok := changed[i]; ok {
			w.WriteString(n + "\n")
		} else {
			w.WriteString(l + "\n")
		}
	}
	fmt.Fprintf(&d, "diff --git a/big.%s b/big.%s\n--- a/big.%s\n+++ b/big.%s\n", ext, ext, ext, ext)
	for _, t := range targets {
		lo, hi := t-3, t+4 // 3 lines of context each side
		fmt.Fprintf(&d, "@@ -%d,%d +%d,%d @@\n", lo+1, hi-lo, lo+1, hi-lo)
		for i := lo; i < hi; i++ {
			if i == t {
				fmt.Fprintf(&d, "-%s\n+%s\n", lines[i], changed[i])
			} else {
				fmt.Fprintf(&d, " %s\n", lines[i])
			}
		}
	}
	return []byte(c.String()), []byte(w.String()), d.String()
}
