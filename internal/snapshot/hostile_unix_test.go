//go:build unix

package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test when fn has not returned after d.
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still blocked after %s", d)
	}
}

// A FIFO where git would read an ignore or attributes file is refused at
// once with a clear error, never waited on (old code: git blocked in open
// until its 10-minute limit).
func TestFIFOInputsAreRefusedWithoutBlocking(t *testing.T) {
	t.Parallel()
	for _, name := range []string{".gitignore", "sub/.gitignore", ".gitattributes", "deep/er/.gitattributes", ".git/info/exclude"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, true)
			fifo := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
				t.Fatal(err)
			}
			os.Remove(fifo)
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			within(t, 20*time.Second, func() {
				s, err := Take(context.Background(), dir)
				if err == nil {
					s.Close()
					t.Error("Take accepted a FIFO as a git input")
				} else if !strings.Contains(err.Error(), "not a regular file") && !strings.Contains(err.Error(), "named pipe") {
					t.Errorf("unclear error: %v", err)
				}
			})
		})
	}
	// Swapped in after Take, as test code would: Diff refuses.
	dir := setup(t, true)
	s, err := Take(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	os.Remove(filepath.Join(dir, ".gitignore"))
	if err := syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	within(t, 20*time.Second, func() {
		if _, _, err := s.Diff(context.Background()); !errors.Is(err, ErrUntrustedInput) {
			t.Errorf("Diff with a FIFO .gitignore: %v, want ErrUntrustedInput", err)
		}
	})
}
