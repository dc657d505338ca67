//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// within fails the test if fn does not return in time: a blocking open
// would hang forever.
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("blocked for more than %s", d)
	}
}

func TestOpenRefusesWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "sub", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "notadir"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	within(t, 5*time.Second, func() {
		data, err := ReadFile(root, "ok.txt", 0)
		if err != nil || string(data) != "hello\n" {
			t.Errorf("ok.txt: %q, %v", data, err)
		}
		for _, name := range []string{"fifo", "sub/fifo", "link", "sub"} {
			if _, _, err := Open(root, name); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Open(%s) = %v, want ErrNotRegular", name, err)
			}
		}
		if _, _, err := Open(root, "notadir/x"); err == nil {
			t.Error("a FIFO used as a directory was opened")
		}
		if err := CheckRegular(root, "missing"); err != nil {
			t.Errorf("CheckRegular(missing) = %v", err)
		}
		if err := CheckRegular(root, "fifo"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("CheckRegular(fifo) = %v", err)
		}
		if _, err := fs.ReadFile(FS(root), "sub/fifo"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("FS ReadFile(sub/fifo) = %v", err)
		}
		if _, err := ReadFile(root, "ok.txt", 3); err == nil {
			t.Error("the size limit was not applied")
		}
		if _, err := ReadPath(filepath.Join(dir, "fifo"), 0); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadPath(fifo) = %v", err)
		}
		if ents, err := fs.ReadDir(FS(root), "sub"); err != nil || len(ents) != 1 {
			t.Errorf("ReadDir(sub) = %v, %v", ents, err)
		}
	})
}
