package snapshot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/org/mini-agent/internal/benchtree"
)

// BenchmarkRestoreStep measures what explain pays after every run_test:
// Restore on a committed tree the step left unchanged ("clean"), and on
// one where the step changed a file ("changed": one file rewritten, one
// created; Restore puts both back), at 5k and 28k files (internal/benchtree,
// babel-like: about half as many directories as files). Beside ns/op it
// reports cpu-ns/op: user plus system time of the process and its git
// children per step.
func BenchmarkRestoreStep(b *testing.B) {
	for _, files := range []int{5000, 28000} {
		dir := b.TempDir()
		if _, err := benchtree.Generate(dir, files, 1); err != nil {
			b.Fatal(err)
		}
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@e", "-c", "gc.auto=0", "commit", "-qm", "tree"}} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		ctx := context.Background()
		s, err := Take(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		victim := filepath.Join(dir, "package.json")
		for _, kind := range []string{"clean", "changed"} {
			b.Run(fmt.Sprintf("%s-%dk", kind, files/1000), func(b *testing.B) {
				if _, err := s.Restore(ctx); err != nil { // the run's first step
					b.Fatal(err)
				}
				cpu0 := stepCPU()
				for b.Loop() {
					if kind == "changed" {
						if err := os.WriteFile(victim, []byte("{}\n"), 0o644); err != nil {
							b.Fatal(err)
						}
						if err := os.WriteFile(filepath.Join(dir, "packages", "new.txt"), []byte("x\n"), 0o644); err != nil {
							b.Fatal(err)
						}
					}
					undone, err := s.Restore(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if want := map[string]int{"clean": 0, "changed": 2}[kind]; len(undone) != want {
						b.Fatalf("%s step: undone %+v, want %d changes", kind, undone, want)
					}
				}
				b.ReportMetric(float64(stepCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
		s.Close()
	}
}

// stepCPU is the user plus system time of this process and its waited-for
// children so far.
func stepCPU() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
