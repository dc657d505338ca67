//go:build unix

package safefile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/iotest"
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

// TestReadAllSizes: readAll returns exactly what the reader gives, whether
// the file is as large as its stat said, smaller (it shrank), larger (it
// grew) or of an unknown size, and keeps the reader's error.
func TestReadAllSizes(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("0123456789abcdef"), 4099) // not a power of two
	for _, size := range []int64{int64(len(data)), 0, 10, int64(len(data)) - 1, int64(len(data)) + 7, -1, 1 << 40} {
		got, err := readAll(iotest.OneByteReader(bytes.NewReader(data[:1000])), size)
		if err != nil || !bytes.Equal(got, data[:1000]) {
			t.Errorf("size %d, one byte at a time: %d bytes, %v", size, len(got), err)
		}
		got, err = readAll(bytes.NewReader(data), size)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("size %d: %d bytes, %v", size, len(got), err)
		}
	}
	boom := errors.New("boom")
	if _, err := readAll(iotest.ErrReader(boom), 10); !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
}
