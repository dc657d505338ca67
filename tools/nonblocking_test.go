//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// within fails the test when fn has not returned after d: an open that
// blocks on a FIFO never returns.
// fn reports problems through its error, never through t: it may still be
// running when the test ends.
func within(t *testing.T, d time.Duration, what string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(d):
		t.Fatalf("%s still blocked after %s", what, d)
	}
}

// releaseFIFOs opens every FIFO under dir for writing, so a reader an old
// build left blocked in open returns and the test binary can exit.
func releaseFIFOs(dir string) {
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
			if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil {
				f.Close()
			}
		}
		return nil
	})
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	os.Remove(p)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A FIFO wherever git's listing would read (a .gitignore at any level, the
// repository's exclude file, index or config) must not stall search: git is
// not trusted with such a tree and search walks it itself, at once (old
// code: each search waited for git's 30 s limit).
func TestSearchDoesNotBlockOnFIFOGitInputs(t *testing.T) {
	t.Parallel()
	for _, name := range []string{".gitignore", "sub/.gitignore", ".git/info/exclude", ".git/index", ".git/config"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fxWrite(t, dir, map[string]string{"a.txt": "needle here\n", "sub/b.txt": "needle too\n", ".gitignore": "*.log\n", "x.log": "needle ignored\n"})
			fxGit(t, dir, "init", "-q")
			fxGit(t, dir, "add", "a.txt", ".gitignore")
			t.Cleanup(func() { releaseFIFOs(dir) })
			mkfifo(t, filepath.Join(dir, filepath.FromSlash(name)))
			ws := fxWorkspace(t, dir)
			within(t, 10*time.Second, "search", func() error {
				res, err := NewSearch(ws).Execute(context.Background(), json.RawMessage(`{"query":"needle"}`))
				if err != nil || res.IsError {
					return fmt.Errorf("search: %v %+v", err, res)
				}
				for _, want := range []string{"a.txt:1:", "sub/b.txt:1:"} {
					if !strings.Contains(res.Text, want) {
						return fmt.Errorf("search answer lacks %s:\n%s", want, res.Text)
					}
				}
				return nil
			})
		})
	}
}

// swapper replaces dir/name, as fast as it can until stop closes, by a
// regular file holding content and then by a FIFO: a race between the
// tools' checks and their open, as test code left running could cause.
func swapper(t *testing.T, dir, name, content string, stop <-chan struct{}, wg *sync.WaitGroup) {
	t.Helper()
	target := filepath.Join(dir, name)
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Names prepared in batches: the swaps themselves are back-to-back
		// renames, so a check-then-open window is crossed as often as can be.
		for batch := 0; ; batch++ {
			var regs, fifos []string
			for i := 0; i < 64; i++ {
				r, f := filepath.Join(dir, fmt.Sprintf(".swap-r%d-%d", batch, i)), filepath.Join(dir, fmt.Sprintf(".swap-f%d-%d", batch, i))
				if os.WriteFile(r, []byte(content), 0o644) == nil && syscall.Mkfifo(f, 0o644) == nil {
					regs, fifos = append(regs, r), append(fifos, f)
				}
			}
			for i := range regs {
				select {
				case <-stop:
					return
				default:
				}
				os.Rename(regs[i], target)
				spin(3 * time.Microsecond)
				os.Rename(fifos[i], target)
			}
		}
	}()
}

func spin(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}

// read_file and apply_patch open non-blocking and check the descriptor: a
// FIFO swapped in between their checks and the open is refused, never
// waited on (old code: blocked forever in open, ignoring every deadline).
func TestToolsDoNotBlockOnAFIFOSwappedIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fxWrite(t, dir, map[string]string{"x.txt": "alpha\nbeta\n"})
	ws := fxWorkspace(t, dir)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { releaseFIFOs(dir) })
	swapper(t, dir, "x.txt", "alpha\nbeta\n", stop, &wg)
	defer func() { close(stop); wg.Wait() }()
	read, apply := NewReadFile(ws), NewApplyPatch(ws)
	patch, _ := json.Marshal(map[string]string{"patch": "--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n"})
	var readOK, readRefused, applyOK, applyRefused int
	within(t, 30*time.Second, "read_file/apply_patch", func() error {
		for i := 0; i < 5000; i++ {
			res, err := read.Execute(context.Background(), json.RawMessage(`{"path":"x.txt"}`))
			switch {
			case err != nil:
				return fmt.Errorf("read_file: Go error %v", err)
			case res.IsError:
				readRefused++
			default:
				readOK++
			}
			res, err = apply.Execute(context.Background(), patch)
			switch {
			case err != nil:
				return fmt.Errorf("apply_patch: Go error %v", err)
			case res.IsError:
				applyRefused++
			default:
				applyOK++
			}
		}
		return nil
	})
	t.Logf("read_file ok %d refused %d; apply_patch ok %d refused %d", readOK, readRefused, applyOK, applyRefused)
	if readOK == 0 || readRefused == 0 {
		t.Errorf("the race was not exercised: read_file ok %d, refused %d", readOK, readRefused)
	}
}

// A FIFO that is there from the start is refused by name, quickly.
func TestReadFileRefusesAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t.Cleanup(func() { releaseFIFOs(dir) })
	mkfifo(t, filepath.Join(dir, "pipe"))
	ws := fxWorkspace(t, dir)
	within(t, 10*time.Second, "read_file", func() error {
		res, err := NewReadFile(ws).Execute(context.Background(), json.RawMessage(`{"path":"pipe"}`))
		if err != nil || !res.IsError || !strings.Contains(res.Text, "not a regular file") {
			return fmt.Errorf("read_file(pipe) = %+v, %v", res, err)
		}
		return nil
	})
}
